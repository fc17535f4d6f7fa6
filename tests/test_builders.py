"""Every builder a Sphinx user has, on a real log, with ``-W``: nothing breaks, no stray
asset.  (PDF through latexmk is ``test_latex_pdf.py``.)"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from sphinx_torchtrace.sphinxext.assets import STATIC, WEB_ASSETS

from .conftest import SiteMaker, warnings_of

BOOK = {"project": "traces", "copyright": "2026, us", "version": "1"}


def test_epub_builds_with_W_and_packs_only_web_assets(make_site: SiteMaker) -> None:
    app = make_site("simple", "epub", warningiserror=True, confoverrides=BOOK)
    assert app.statuscode == 0 and warnings_of(app) == ""
    (book,) = Path(app.outdir).glob("*.epub")
    names = zipfile.ZipFile(book).namelist()
    assert not any(n.endswith(".sty") for n in names)  # the LaTeX style is LaTeX's alone
    for name, kind in WEB_ASSETS:
        if kind == "css":  # an EPUB carries no scripts
            assert any(n.endswith(f"_static/{name}") for n in names), name


@pytest.mark.parametrize("builder", ["html", "dirhtml", "singlehtml", "text", "man"])
def test_builder_with_W(make_site: SiteMaker, builder: str) -> None:
    app = make_site("simple", builder, warningiserror=True)
    assert app.statuscode == 0 and warnings_of(app) == ""


def test_assets_leave_the_users_config_alone(make_site: SiteMaker) -> None:
    """The web assets are written into ``_static/``, not added to ``html_static_path``
    (which Sphinx pickles: every next build would say the configuration changed)."""
    app = make_site("simple", "html")
    assert str(STATIC) not in [str(p) for p in app.config.html_static_path]
    static = Path(app.outdir) / "_static"
    for name, _kind in WEB_ASSETS:
        assert (static / name).read_bytes() == (STATIC / name).read_bytes()
    page = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "_static/sphinx-torchtrace.css?v=" in page  # checksummed like any asset


def test_linkcheck_with_W_sees_every_external_link(make_site: SiteMaker) -> None:
    """The pages' external links are real references linkcheck checks (here, offline,
    ignored by pattern: the build must pass with -W and list them)."""
    app = make_site(
        "simple",
        "linkcheck",
        warningiserror=True,
        confoverrides={"linkcheck_ignore": [r"https?://"]},
    )
    assert app.statuscode == 0 and warnings_of(app) == ""
    rows = [
        json.loads(line)
        for line in (Path(app.outdir) / "output.json").read_text("utf-8").splitlines()
    ]
    assert {"status": "ignored", "uri": "https://ui.perfetto.dev"}.items() <= next(
        r for r in rows if r["uri"] == "https://ui.perfetto.dev"
    ).items()
    assert not [r for r in rows if r["status"] == "broken"]


def test_man_page_and_text_print_links_as_their_words(make_site: SiteMaker) -> None:
    """A link inside a man page (one document) or a text file reads as its words, never
    with the fragment it points at (``15 functions <#compile-directory>``); and the man
    page, which binds the overview in right after the directive, says the glance once."""
    man = make_site("simple", "man", warningiserror=True)
    (page,) = Path(man.outdir).glob("*.1")
    roff = page.read_text(encoding="utf-8")
    assert "<#" not in roff and "\\%<>" not in roff, re.findall(r".*<#.*", roff)[:3]
    # Older docutils set a link's words in italics (``\fI\%1 function\fP``) and wrap it in a
    # terminal link (``\X'tty: link #frag'``, not shown as text): what a reader sees is the
    # words, so fonts, roff's zero-width marks and device controls are read past.
    words = re.sub(r"\\f[BIPR]|\\%|\\&|\\X'[^']*'", "", roff)
    assert words.count("Compiled: 1 function (1 compile id, 1 attempt): 1 ok") == 1
    assert "[0/0] (17.820 s)" in words  # a frame's badge: its compile id, no fragment
    text = make_site("simple", "text", warningiserror=True)
    for path in Path(text.outdir).rglob("*.txt"):
        words = path.read_text(encoding="utf-8")
        assert "<#" not in words and "<>" not in words, path
