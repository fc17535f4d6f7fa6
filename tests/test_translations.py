"""Translations: the extension's own words come from its message catalog in the build's
``language`` (a project can ship one in its ``locale_dirs``), and ``gettext`` leaves the
generated pages out of the project's catalogs (trace data is not prose to translate)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo

from .conftest import SiteMaker, copy_testroot, warnings_of
from .tools.message_catalog import PACKAGE, template


def test_the_catalog_template_lists_every_word_of_the_code() -> None:
    committed = (PACKAGE / "locale" / "sphinx_torchtrace.pot").read_text(encoding="utf-8")
    assert committed == template(), "run: python -m tests.tools.message_catalog"
    assert 'msgid "Compile directory"' in committed


def _german(srcdir: Path) -> None:
    catalog = Catalog(locale="de", domain="sphinx_torchtrace")
    catalog.add("Compile directory", "Kompilierverzeichnis")
    catalog.add("Compiled:", "Kompiliert:")
    folder = srcdir / "locales" / "de" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    (folder / "sphinx_torchtrace.mo").write_bytes(buffer.getvalue())


def test_a_projects_catalog_translates_the_pages_words(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    srcdir = copy_testroot("simple", tmp_path / "de")
    _german(srcdir)
    german = make_site("simple", srcdir=srcdir, confoverrides={"language": "de"})
    assert "WARNING" not in warnings_of(german)
    overview = (Path(german.outdir) / "torchtrace/simple/index.html").read_text("utf-8")
    assert "Kompilierverzeichnis" in overview and "Compile directory" not in overview
    assert "Kompiliert:" in (Path(german.outdir) / "index.html").read_text("utf-8")
    assert "Compile caches" in overview  # a word the catalog lacks stays as written
    english = make_site("simple")  # the next project of the process: its own language
    page = (Path(english.outdir) / "torchtrace/simple/index.html").read_text("utf-8")
    assert "Compile directory" in page and "Kompilierverzeichnis" not in page


def test_gettext_keeps_the_trace_out_of_the_projects_catalogs(make_site: SiteMaker) -> None:
    app = make_site("simple", "gettext", warningiserror=True)
    assert app.statuscode == 0 and warnings_of(app) == ""
    catalogs = {p.name: p.read_text("utf-8") for p in Path(app.outdir).rglob("*.pot")}
    del catalogs["sphinx_torchtrace.pot"]  # the extension's own words: see below
    assert 'msgid "Simple model"' in catalogs["index.pot"]  # the user's own words stay
    everything = "\n".join(catalogs.values())
    for generated in ("Trace simple", "Compiled:", "forward", "Compile directory", "~/project"):
        assert generated not in everything, generated


@pytest.mark.parametrize("compact", [True, False])
def test_gettext_writes_the_extensions_words_and_no_empty_catalog(
    make_site: SiteMaker, compact: bool
) -> None:
    """The generated pages give the project's catalogs no message: no empty catalog is
    written for them (``torchtrace.pot``, or one per page); the extension's words are
    written instead, as the catalog ``sphinx-intl update`` makes its ``.po`` from."""
    app = make_site("simple", "gettext", confoverrides={"gettext_compact": compact})
    outdir = Path(app.outdir)
    empty = [
        p.relative_to(outdir).as_posix()
        for p in outdir.rglob("*.pot")
        if "\nmsgid " not in p.read_text("utf-8").split('msgstr ""', 1)[1]
    ]
    assert empty == []
    assert not (outdir / "torchtrace").exists()
    words = (outdir / "sphinx_torchtrace.pot").read_text("utf-8")
    assert words == template() and 'msgid "Compile directory"' in words
