"""Trace text is never markup: a log full of rST, MyST, HTML and LaTeX builds into plain text.

The log (:mod:`tests.tools.hostile_log`) is the bundled ``simple`` log plus a
failed compile, a graph break and a ``graph_dump``, with every string a page
shows rewritten into markup split by every line boundary, each field led by
its own marker.  The site is built with the html, text and latex builders and
each output is read the way its reader would read it (a browser, intersphinx,
TeX): the markers are shown, the markup is shown as text, and nothing the
markup asks for exists: no element, no included file, no live TeX command, no
extra inventory entry.  The stubs Sphinx parses hold none of the log's text.
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util.inventory import InventoryFile

from tests.tools.hostile_log import (
    INVENTORY_ENTRY,
    KERNEL_NAME_MARKER,
    LINE_BOUNDARIES,
    PWNED_IDS,
    SECRET_CONTENT,
    HostileLog,
    write_hostile_log,
)

BUILDERS = ("html", "text", "latex")
GENERATED_DIR = "torchtrace"
STUB_SUFFIX = ".rst"
#: The first snippet of every hostile field: shown right after the field's marker.
MARKUP_FOLLOWS = ".. raw:: html"
#: How far after its marker that snippet may start (line boundaries, JSON escapes).
NEAR = 120
#: What live markup would have made of the snippets: ``**bold**``, the link, the raw ``<b>``.
MADE_ELEMENTS = (("strong", "bold"), ("a", "click"), ("b", "x"), ("i", "x"))
#: A TeX command the log wrote that TeX would run, in any form but escaped text.
LIVE_TEX = ("\\input{/etc", "\\write18", "\\include{x}")
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
)
# name, domain:role, priority, uri, display name: intersphinx's reading of a line
INVENTORY_LINE = re.compile(r"(.+?)\s+(\S+:\S+)\s+(-?\d+)\s+?(\S*)\s+(.*)")

CONF = 'project = "hostile"\nextensions = ["sphinx_torchtrace"]\nexclude_patterns = ["_build"]\n'
INDEX = """\
Hostile trace
=============

.. toctree::

   plain

.. torchtrace:: ../hostile.log
   :name: hostile
"""
#: A page with no trace text: its inline scripts are the theme's own.
PLAIN = "Plain page\n==========\n\nNothing from any log.\n"


# -- the builds -------------------------------------------------------------------------------


@dataclass
class Site:
    srcdir: Path
    outdir: Path
    warnings: str


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileLog:
    return write_hostile_log(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(scope="module")
def build(hostile: HostileLog) -> Callable[[str], Site]:
    """``build("html")``: the site built once per builder, in a folder beside the log."""
    sites: dict[str, Site] = {}

    def get(buildername: str) -> Site:
        if buildername not in sites:
            srcdir = hostile.path.parent / f"site-{buildername}"
            srcdir.mkdir()
            for name, text in (("conf.py", CONF), ("index.rst", INDEX), ("plain.rst", PLAIN)):
                (srcdir / name).write_text(text, encoding="utf-8")
            warning = StringIO()
            app = SphinxTestApp(
                buildername,
                srcdir=srcdir,
                freshenv=True,
                status=StringIO(),
                warning=warning,
                # every graph and kernel on a page of its own: hostile names in every title
                # every payload printed in the PDF too: its escaping is checked below
                confoverrides={
                    "show_warning_types": True,
                    "torchtrace_fold_bytes": 0,
                    "torchtrace_latex_payloads": "all",
                },
            )
            try:
                app.build()
            finally:
                app.cleanup()
            sites[buildername] = Site(srcdir, Path(app.outdir), warning.getvalue())
        return sites[buildername]

    return get


def output_files(site: Site, suffix: str = "") -> list[Path]:
    return sorted(p for p in site.outdir.rglob(f"*{suffix}") if p.is_file())


def output_text(site: Site, suffix: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in output_files(site, suffix))


def stubs(site: Site) -> list[Path]:
    """The generated sources Sphinx parses."""
    return sorted((site.srcdir / GENERATED_DIR).rglob(f"*{STUB_SUFFIX}"))


def files_holding(site: Site, needle: str) -> list[str]:
    """Output files of any kind (pages, downloads, images) whose bytes hold ``needle``."""
    data = needle.encode("utf-8")
    return [
        p.relative_to(site.outdir).as_posix() for p in output_files(site) if data in p.read_bytes()
    ]


def markers_without_markup(markers: dict[str, str], text: str) -> dict[str, str]:
    """Fields not shown, or shown with no ``.. raw:: html`` text close after their marker."""
    missing: dict[str, str] = {}
    for name, marker in markers.items():
        starts = [m.start() for m in re.finditer(re.escape(marker), text)]
        if not starts:
            missing[name] = "not shown"
        elif marker != KERNEL_NAME_MARKER and not any(
            MARKUP_FOLLOWS in text[s : s + len(marker) + NEAR] for s in starts
        ):
            missing[name] = "shown, but not followed by its markup as text"
    return missing


# -- reading HTML as a browser would -----------------------------------------------------------


class HtmlPage(HTMLParser):
    """A page's start tags, its text, the element each piece of text is in, its scripts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.text_in: list[tuple[str, str]] = []
        self.svg_text: list[str] = []
        self.scripts: list[tuple[dict[str, str], str]] = []
        self._open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))
        if tag == "script":
            self.scripts.append((self.tags[-1][1], ""))
        if tag not in VOID:
            self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:
            while self._open.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        inner = self._open[-1] if self._open else ""
        self.text.append(data)
        self.text_in.append((inner, data))
        if "svg" in self._open:
            self.svg_text.append(data)
        if inner == "script" and self.scripts:
            attrs, body = self.scripts[-1]
            self.scripts[-1] = (attrs, body + data)


def read_html(path: Path) -> HtmlPage:
    page = HtmlPage()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


def html_pages(site: Site) -> Iterator[tuple[str, Path, HtmlPage]]:
    for path in output_files(site, ".html"):
        yield path.relative_to(site.outdir).as_posix(), path, read_html(path)


def tag_problem(tag: str, attrs: dict[str, str]) -> str | None:
    """Why a start tag cannot come from Sphinx, the theme or the extension, or None.

    Log text in an attribute *value* is still text (a ``title`` tooltip, an id
    slugged from an object name) when the parser reads it back as one value; an
    attribute the markup declared shows as a name, or as exactly the value it gave.
    """
    if any("pwned" in name.lower() for name in attrs) or set(attrs.values()) & set(PWNED_IDS):
        return "an attribute the log's markup wrote"
    if tag == "img" and any(name.lower().startswith("on") for name in attrs):
        return "an image with an event handler"
    if tag == "a" and attrs.get("href", "").strip().lower().startswith("javascript:"):
        return "a javascript: link"
    if {"problematic", "system-message"} & set(attrs.get("class", "").split()):
        return "docutils parsed markup here and reported it"
    return None


def script_problem(site: Site, page: Path, attrs: dict[str, str], body: str) -> str | None:
    """Why a script is none of those Sphinx, the theme or the extension ship, or None."""
    if "src" in attrs:
        src = attrs["src"].split("?", 1)[0]
        target = Path(os.path.normpath(page.parent / src))
        shipped = target.is_relative_to(site.outdir / "_static") or target == (
            site.outdir / "searchindex.js"
        )
        # (not whether the file exists: before Sphinx 7.4 an earlier app's theme scripts
        # could be listed; a log cannot put a file under _static either way)
        if "://" in src or src.startswith("/") or not shipped:
            return f"a script from {attrs['src']!r}"
        return None
    classes = attrs.get("class", "").split()
    if attrs.get("type") == "application/json" and "torchtrace-provenance-maps" in classes:
        return None
    if body.strip() in theme_inline_scripts(site):
        return None
    return f"an inline script {body.strip()[:80]!r}"


def theme_inline_scripts(site: Site) -> set[str]:
    page = read_html(site.outdir / "plain.html")
    return {body.strip() for attrs, body in page.scripts if "src" not in attrs}


def inventory_lines(site: Site) -> list[str]:
    """``objects.inv`` of an HTML build as the lines intersphinx reads, header left out."""
    raw = (site.outdir / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    return zlib.decompress(raw[header_end:]).decode("utf-8").split("\n")[:-1]


# -- every builder -----------------------------------------------------------------------------


@pytest.mark.parametrize("buildername", BUILDERS)
def test_build_completes_with_every_page(build: Callable[[str], Site], buildername: str) -> None:
    site = build(buildername)
    assert len(stubs(site)) >= 14, [p.name for p in stubs(site)]
    assert output_files(site), f"{buildername} wrote nothing"


@pytest.mark.parametrize("buildername", BUILDERS)
def test_no_output_holds_the_secret_file(build: Callable[[str], Site], buildername: str) -> None:
    """``.. include::``, ``literalinclude`` and ``:download:`` of a readable file: none ran."""
    site = build(buildername)
    assert files_holding(site, SECRET_CONTENT) == []
    assert [p for p in output_files(site) if p.name == "secret.txt"] == []


@pytest.mark.parametrize("buildername", BUILDERS)
def test_stubs_hold_no_trace_text(
    build: Callable[[str], Site], hostile: HostileLog, buildername: str
) -> None:
    """What Sphinx parses as a source holds nothing of the log: no field, no markup."""
    site = build(buildername)
    leaks = [
        f"{stub.relative_to(site.srcdir).as_posix()}: {name}"
        for stub in stubs(site)
        for name, marker in hostile.markers.items()
        if marker in stub.read_text(encoding="utf-8")
    ]
    assert leaks == []
    markup = [
        stub.name
        for stub in stubs(site)
        if re.search(r"raw::|include::|eval-rst|<script", stub.read_text(encoding="utf-8"))
    ]
    assert markup == []


# -- HTML --------------------------------------------------------------------------------------


def test_html_has_no_element_the_log_asked_for(build: Callable[[str], Site]) -> None:
    site = build("html")
    found: list[str] = []
    for where, path, page in html_pages(site):
        for tag, attrs in page.tags:
            problem = tag_problem(tag, attrs)
            if problem:
                found.append(f"{where}: <{tag} {attrs}>: {problem}")
        for attrs, body in page.scripts:
            problem = script_problem(site, path, attrs, body)
            if problem:
                found.append(f"{where}: {problem}")
        found += [
            f"{where}: <{inner}>{data.strip()}</{inner}>: made by the log's markup"
            for inner, data in page.text_in
            if (inner, data.strip()) in MADE_ELEMENTS
        ]
    assert not found, "\n".join(found)


def test_html_shows_every_field_with_its_markup_as_text(
    build: Callable[[str], Site], hostile: HostileLog
) -> None:
    text = "\n".join("".join(page.text) for _, _, page in html_pages(build("html")))
    assert markers_without_markup(hostile.markers, text) == {}
    for literal in ('<script>alert("pwned-html")</script>', "<img src=x onerror=alert(1)>"):
        assert literal in text, f"{literal!r} is not shown as text"


def test_html_chart_shows_the_function_name_as_text(
    build: Callable[[str], Site], hostile: HostileLog
) -> None:
    """The compile-time chart is SVG in the page: ``co_name`` in it is escaped text."""
    overview = build("html").outdir / GENERATED_DIR / "hostile" / "index.html"
    svg_text = "".join(read_html(overview).svg_text)
    assert markers_without_markup({"co_name": hostile.markers["co_name"]}, svg_text) == {}


def test_html_inventory_has_one_line_per_object(build: Callable[[str], Site]) -> None:
    """A line break in an object's name or title would let the log write inventory entries
    of its own (intersphinx reads ``objects.inv`` line by line)."""
    broken = [
        line[:100]
        for line in inventory_lines(build("html"))
        if not INVENTORY_LINE.fullmatch(line) or any(c in line for c in LINE_BOUNDARIES)
    ]
    assert not broken, f"{len(broken)} lines are no entry or hold a line break: " + "\n".join(
        repr(line) for line in broken[:6]
    )


def test_html_inventory_holds_no_entry_the_log_wrote(build: Callable[[str], Site]) -> None:
    """Another project linking to this site with intersphinx gets only this site's objects."""
    raw = (build("html").outdir / "objects.inv").read_bytes()
    uri = "https://docs.example/"
    if hasattr(InventoryFile, "loads"):  # Sphinx 8.2 and later
        inventory: Any = InventoryFile.loads(raw, uri=uri).data
    else:
        inventory = InventoryFile.load(io.BytesIO(raw), uri, posixpath.join)
    fake_name, fake_role = INVENTORY_ENTRY.split()[:2]
    fake = inventory.get(fake_role, {}).get(fake_name)
    assert fake is None, f"intersphinx reads {fake_role} {fake_name} -> {fake!r:.80}"


# -- text --------------------------------------------------------------------------------------


def test_text_shows_every_field_with_its_markup_as_text(
    build: Callable[[str], Site], hostile: HostileLog
) -> None:
    # whitespace runs (line boundaries, the builder's wrapping) read as one space
    text = " ".join(output_text(build("text"), ".txt").split())
    assert markers_without_markup(hostile.markers, text) == {}


# -- LaTeX -------------------------------------------------------------------------------------


def test_latex_escapes_every_tex_command(build: Callable[[str], Site]) -> None:
    tex = output_text(build("latex"), ".tex")
    assert tex, "the latex builder wrote no .tex file"
    assert {command: tex.count(command) for command in LIVE_TEX if command in tex} == {}
    # they did arrive, as text: escaped in prose, or by Pygments in code
    assert "\\textbackslash{}input" in tex and "\\PYGZbs{}input" in tex


def test_latex_shows_every_field(build: Callable[[str], Site], hostile: HostileLog) -> None:
    """The escaping above is no accident of pages left out: every field is in the .tex (the
    places a long name may break, which print nothing, taken out)."""
    tex = output_text(build("latex"), ".tex").replace("\\sphinxtorchtracebreak{}", "")
    missing = [
        name
        for name, marker in hostile.markers.items()
        if not any(form in tex for form in tex_forms(marker))
    ]
    assert missing == []


def tex_forms(text: str) -> tuple[str, str, str]:
    """``text`` as LaTeX writes it: as is, escaped in prose, escaped by Pygments in code."""
    return (text, text.replace("_", "\\_"), text.replace("_", "\\PYGZus{}"))
