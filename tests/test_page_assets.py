"""The extension's web assets: one stylesheet and one script, loaded only by the pages that
show something of the extension (a report page, a role, a directive's summary)."""

from __future__ import annotations

import re
from pathlib import Path

from sphinx_torchtrace.sphinxext.assets import STATIC, WEB_ASSETS

from .conftest import SiteMaker, warnings_of

PAGES = {
    "plain.rst": ":orphan:\n\nPlain\n=====\n\nA page of the user's own, with nothing of ours.\n",
    "roles.rst": ":orphan:\n\nRoles\n=====\n\nOnly :torchtrace:frame:`simple/[0/0]` here.\n",
}


def _assets(page: Path) -> list[str]:
    """The extension's stylesheets and scripts a page loads, in order."""
    html = page.read_text(encoding="utf-8")
    return re.findall(r'(?:href|src)="[^"]*_static/(sphinx-torchtrace[^"?]*)', html)


def test_one_file_each_only_where_used(make_site: SiteMaker) -> None:
    app = make_site("simple", "html", pages=PAGES)
    assert warnings_of(app) == ""
    out = Path(app.outdir)
    ours = sorted(p.name for p in (out / "_static").glob("sphinx-torchtrace*"))
    assert ours == sorted(name for name, _kind in WEB_ASSETS)
    assert [kind for _name, kind in WEB_ASSETS] == ["css", "js"]
    both = ["sphinx-torchtrace.css", "sphinx-torchtrace.js"]
    assert _assets(out / "plain.html") == []  # the user's own page loads nothing of ours
    assert _assets(out / "search.html") == [] and _assets(out / "genindex.html") == []
    assert _assets(out / "roles.html") == both  # a role's badge needs the stylesheet
    assert _assets(out / "index.html") == both
    frames = list((out / "torchtrace" / "simple").rglob("*.html"))
    assert frames and all(_assets(page) == both for page in frames)
    for name, _kind in WEB_ASSETS:
        assert (out / "_static" / name).read_bytes() == (STATIC / name).read_bytes()


def test_provenance_viewer_is_in_the_one_script() -> None:
    script = (STATIC / "sphinx-torchtrace.js").read_text(encoding="utf-8")
    style = (STATIC / "sphinx-torchtrace.css").read_text(encoding="utf-8")
    assert ".torchtrace-provenance" in style and "torchtrace-provenance" in script
    assert "openTarget" in script  # folds open at anchors
