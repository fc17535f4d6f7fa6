"""The site of a trace, without Sphinx: which pages exist, their stable names, what each shows.

:mod:`.plan` and :mod:`.naming` decide the pages and their names; :mod:`.pages` describe
each page as plain :mod:`.blocks`.  Imports only :mod:`..trace`.
"""
