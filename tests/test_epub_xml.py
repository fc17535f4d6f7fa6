"""Every file of an EPUB is well-formed XML, whatever the logs hold.

An EPUB's pages are XHTML: a reader parses each as XML and shows nothing of a page that
does not parse.  Two things broke it: characters XML 1.0 cannot hold (C0 controls but
TAB, LF and CR; U+FFFE, U+FFFF; lone surrogates) reaching a page from a log, and the
tabs' ``<input>`` elements written unclosed.  Pages now show such characters as visible
escapes (``\\uffff``) and close every element they write.

A sample of real traces covering every kind of page (tabs of metrics and of ranks,
provenance, a TORCH_COMPILE_DEBUG folder, a comparison) and two hostile logs build here;
the whole corpus (seven minutes) is marked ``corpus_slow``: ``nox -s corpus-builders``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from .conftest import DATA, copy_testroot, write_page
from .test_site_invariants import BIG_BYTES, _size, all_traces
from .tools.hostile_log import write_hostile_log
from .tools.hostile_names import FUNCTION, write_hostile_names_log

BOOK = {"project": "traces", "copyright": "2026, us", "version": "1", "show_warning_types": True}
#: Real traces whose pages hold every kind of block: metrics tabs, rank tabs, provenance,
#: a debug folder's pages, graph breaks, failures.
SAMPLE = [
    "shared/simple/dedicated_log_torch_trace_5aek85xk.log",
    "shared/compile_error/dedicated_log_torch_trace_fqqib31t.log",
    "shared/tlparse-inputs/inputs/autotune_with_compile_id.log",
    "shared/tlparse-inputs/inputs/multi_rank_schedule",
    "shared/tlparse-inputs/inputs/inductor_provenance_jit_debug_handle_log.txt",
    "captured/debug_dir/training/torch_compile_debug",
]
DIFF = (
    ".. torchtrace-diff:: @DATA@/captured/pairs/recompile/baseline "
    "@DATA@/captured/pairs/recompile/new\n   :name: compared\n"
)
XML_FILES = (".xhtml", ".opf", ".ncx")


def build_epub(srcdir: Path, pages: dict[str, str]) -> Path:
    """The pages (``@DATA@`` as in test roots) built as an EPUB; its output folder."""
    index = "Traces\n======\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in pages)
    write_page(srcdir, "index.rst", index)
    for name, body in pages.items():
        write_page(srcdir, f"{name}.rst", f"{name}\n{'=' * len(name)}\n\n{body}")
    app = SphinxTestApp(
        "epub",
        srcdir=srcdir,
        freshenv=True,
        confoverrides=BOOK,
        status=StringIO(),
        warning=StringIO(),
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return Path(app.outdir)


def trace_pages(traces: list[str]) -> dict[str, str]:
    return {
        f"t{i:03d}": f".. torchtrace:: @DATA@/{rel}\n   :name: t{i:03d}\n"
        for i, rel in enumerate(traces)
    }


def not_xml(outdir: Path) -> list[str]:
    """Each XML file of the book that no XML parser reads, with the parser's reason."""
    problems = []
    files = [p for p in sorted(outdir.rglob("*")) if p.suffix in XML_FILES]
    assert files, f"no XHTML in {outdir}"
    for path in files:
        try:
            ET.parse(path)
        except ET.ParseError as e:
            problems.append(f"{path.relative_to(outdir)}: {e}")
    return problems


def page_text(outdir: Path) -> str:
    """Every page's text, as a reader's XML parser reads it."""
    return "\n".join(
        "".join(ET.parse(p).getroot().itertext()) for p in sorted(outdir.rglob("*.xhtml"))
    )


def test_real_traces_of_every_page_kind_build_an_epub_of_xml(tmp_path: Path) -> None:
    srcdir = copy_testroot("simple", tmp_path / "site")
    outdir = build_epub(srcdir, {**trace_pages(SAMPLE), "compared": DIFF})
    assert not_xml(outdir) == []
    pages = "".join(p.read_text(encoding="utf-8") for p in outdir.rglob("*.xhtml"))
    assert 'type="radio"' in pages  # tabs were there to check


def test_hostile_logs_build_an_epub_of_xml_that_shows_each_character(tmp_path: Path) -> None:
    """Names, titles, payloads and graph-break types holding every character XML cannot
    hold, and every line boundary: each page parses, and shows each as an escape."""
    write_hostile_names_log(tmp_path)
    write_hostile_log(tmp_path)
    srcdir = tmp_path / "site"
    srcdir.mkdir()
    (srcdir / "conf.py").write_text(
        'extensions = ["sphinx_torchtrace"]\nexclude_patterns = ["_build"]\n'
        "torchtrace_fold_bytes = 0\n",
        encoding="utf-8",
    )
    outdir = build_epub(
        srcdir,
        {
            "names": ".. torchtrace:: ../hostile_names.log\n   :name: names\n\n"
            ".. torchtrace-graph-breaks::\n",
            "markup": ".. torchtrace:: ../hostile.log\n   :name: markup\n",
        },
    )
    assert not_xml(outdir) == []
    text = page_text(outdir)
    assert "fn pwned std:label" in text  # the function's name, in titles
    for shown in ("\\x01", "\\ufffe", "\\uffff"):
        assert shown in text, shown
    assert not any(c in text for c in "\x01\ufffe\uffff") and "\x01" in FUNCTION


@pytest.mark.corpus_slow
@pytest.mark.parametrize("big", [False, True], ids=["traces", "big-traces"])
def test_every_trace_of_the_corpus_builds_an_epub_of_xml(tmp_path: Path, big: bool) -> None:
    traces = [t for t in all_traces() if (_size(t) > BIG_BYTES) == big]
    if not traces:
        pytest.skip("no such trace in this checkout")
    srcdir = copy_testroot("simple", tmp_path / "site")
    assert not_xml(build_epub(srcdir, trace_pages(traces))) == []


def test_the_sample_is_of_real_traces() -> None:
    assert all((DATA / rel).exists() for rel in SAMPLE)
