"""The Sphinx layer: the only code that imports Sphinx or docutils.

Setup and checked configuration, the warnings registry, the scan of the sources, the
stub pages, the directives that turn page views into nodes, the ``torchtrace`` domain,
and (in :mod:`.patches`) every reach into Sphinx's internals.
"""
