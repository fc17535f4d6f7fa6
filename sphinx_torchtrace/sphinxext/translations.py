"""The extension's words in the build's ``language``.

The words of :mod:`..site.words` come from the message catalog ``sphinx_torchtrace``:
first a project's own (``<locale_dirs>/<lang>/LC_MESSAGES/sphinx_torchtrace.mo``),
then the package's (``sphinx_torchtrace/locale``).  Loaded with :mod:`gettext`
directly, not ``sphinx.locale.init``, whose translators are process-wide and would
carry one project's language into the next project built in the same process.

The generated pages, and what a directive shows on the user's page, stay out of
the project's own catalogs (``sphinx-build -b gettext``): they are trace data, or
words of this catalog, not the project's prose.
"""

from __future__ import annotations

import gettext
import os
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx

from ..site.words import DOMAIN, set_translator
from .built import built
from .doctree import OUTPUT_MARK

#: The catalogs the package ships (the template ``sphinx_torchtrace.pot`` is there too).
PACKAGE_LOCALE = Path(__file__).resolve().parent.parent / "locale"


def catalog(locale_dirs: list[str], language: str | None) -> gettext.NullTranslations:
    """The translations of ``language`` from the first folders that have them."""
    found: gettext.NullTranslations = gettext.NullTranslations()
    if not language or language == "en":
        return found
    first = True
    for folder in [*locale_dirs, os.fspath(PACKAGE_LOCALE)]:
        try:
            translations = gettext.translation(DOMAIN, localedir=folder, languages=[language])
        except OSError:
            continue
        if first:
            found, first = translations, False
        else:
            found.add_fallback(translations)
    return found


def install_translations(app: Sphinx) -> None:
    """builder-inited: the words of this build's pages in its language."""
    folders = [os.path.join(app.srcdir, d) for d in app.config.locale_dirs]
    set_translator(catalog(folders, app.config.language).gettext)


def reset_translations(app: Sphinx, error: BaseException | None) -> None:
    """build-finished: the next project built in this process starts from the words."""
    set_translator(None)


def keep_out_of_catalogs(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """doctree-resolved: for ``gettext``, a generated page's text, and a directive's on
    the user's page, is not a message (marked so here, not in the pickled doctrees)."""
    if app.builder.name != "gettext":
        return
    if docname in built(app).pages:
        roots: list[nodes.Element] = [doctree]
    else:
        roots = [n for n in doctree.findall(nodes.Element) if n.get(OUTPUT_MARK)]
    for root in roots:
        for text in root.findall(nodes.TextElement):
            # inline nodes never are; one with the attribute is a placeholder Sphinx unwraps
            if not isinstance(text, nodes.Inline):
                text["translatable"] = False
