"""The extension's words in the build's ``language``.

The words of :mod:`..site.words` come from the message catalog ``sphinx_torchtrace``:
first a project's own (``<locale_dirs>/<lang>/LC_MESSAGES/sphinx_torchtrace.mo``),
then the package's (``sphinx_torchtrace/locale``).  Loaded with :mod:`gettext`
directly, not ``sphinx.locale.init``, whose translators are process-wide and would
carry one project's language into the next project built in the same process.

The generated pages, and what a directive shows on the user's page, stay out of
the project's own catalogs (``sphinx-build -b gettext``): they are trace data, or
words of this catalog, not the project's prose.  The ``gettext`` build writes this
catalog's template beside the project's instead, and no empty catalog for the pages.
"""

from __future__ import annotations

import gettext
import os
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.builders.gettext import MessageCatalogBuilder
from sphinx.util.i18n import docname_to_domain

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


def write_catalog_template(app: Sphinx, error: BaseException | None) -> None:
    """build-finished, ``gettext``: the extension's words (``sphinx_torchtrace.pot``) beside
    the project's catalogs, so ``sphinx-intl update`` makes the ``.po`` :func:`catalog`
    reads; and no catalog for the generated pages where they gave none a message (Sphinx
    wrote an empty ``torchtrace.pot``, a file a translator would be handed for nothing)."""
    builder = app.builder
    if error is not None or not isinstance(builder, MessageCatalogBuilder):
        return
    outdir = Path(builder.outdir)
    for domain in {docname_to_domain(d, app.config.gettext_compact) for d in built(app).pages}:
        if domain in builder.catalogs and builder.catalogs[domain].messages:
            continue  # a catalog the project's own pages share
        empty = outdir / f"{domain}.pot"
        empty.unlink(missing_ok=True)
        folder = empty.parent
        while folder != outdir and folder.is_relative_to(outdir) and not any(folder.iterdir()):
            folder.rmdir()  # gettext_compact = False: a folder per generated folder
            folder = folder.parent
    template = (PACKAGE_LOCALE / f"{DOMAIN}.pot").read_text(encoding="utf-8")
    target = outdir / f"{DOMAIN}.pot"
    if not target.is_file() or target.read_text(encoding="utf-8") != template:
        target.write_text(template, encoding="utf-8")  # unchanged: its time stays
