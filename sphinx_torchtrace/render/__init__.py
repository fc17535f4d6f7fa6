"""Text out, without Sphinx: highlighting, SVG charts, the provenance view's HTML, path rewriting.

Imports only :mod:`..site` and :mod:`..trace`; everything it writes as markup is built by
:mod:`.xml`, which escapes.
"""
