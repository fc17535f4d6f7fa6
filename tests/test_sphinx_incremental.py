"""Rebuilds and bad input: what a project with traces in its docs lives with every day.

A second build must not re-read hundreds of generated pages; a new trace must
replace the old pages without leaving dead ones; a damaged log must warn, with
its file and line, and never stop the build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_colors

from .conftest import (
    SHARED,
    SIMPLE_LOG,
    SiteMaker,
    copy_testroot,
    generated_pages,
    inventory,
    warnings_of,
)

COMP_METRICS_LOG = SHARED / "tlparse-inputs" / "inputs" / "comp_metrics.log"


def read_docnames(app: SphinxTestApp) -> list[str]:
    """Build, returning the documents Sphinx read (not those it found up to date)."""
    read: list[str] = []
    app.connect("env-before-read-docs", lambda _app, _env, docnames: read.extend(docnames))
    app.build()
    return read


def put_trace(srcdir: Path, log: Path) -> None:
    """Copy a log to ``trace.log``: a new file, newer than the last build."""
    shutil.copyfile(log, srcdir / "trace.log")


def test_unchanged_rebuild_reads_nothing(make_site: SiteMaker, tmp_path: Path) -> None:
    srcdir = copy_testroot("incremental", tmp_path / "site")
    put_trace(srcdir, SIMPLE_LOG)
    first = make_site("incremental", srcdir=srcdir)
    assert first.warning.getvalue() == ""
    pages = generated_pages(first)
    mtimes = {p: (srcdir / f"{p}.rst").stat().st_mtime_ns for p in pages}

    second = make_site("incremental", srcdir=srcdir, freshenv=False, build=False)
    assert read_docnames(second) == []
    assert second.warning.getvalue() == ""
    assert generated_pages(second) == pages
    # pages whose text did not change were not rewritten (else Sphinx would re-read them)
    assert {p: (srcdir / f"{p}.rst").stat().st_mtime_ns for p in pages} == mtimes
    assert list(second.builder.get_outdated_docs()) == []


def test_a_rebuild_finds_the_configuration_unchanged(make_site: SiteMaker, tmp_path: Path) -> None:
    """sphinx-design adds its static folder to ``html_static_path`` as the builder starts;
    the pickled configuration then differed from the next build's, which said "The
    configuration has changed (html_static_path)" every time.  Its assets still reach
    ``_static/``."""
    srcdir = copy_testroot("incremental", tmp_path / "site")
    put_trace(srcdir, SIMPLE_LOG)
    first = make_site("incremental", srcdir=srcdir)
    design = {p.name for p in (Path(first.outdir) / "_static").rglob("*design*.css")}
    assert design  # sphinx-design.min.css (0.6+), sphinx_design/design-style.*.css (0.5)
    second = make_site("incremental", srcdir=srcdir, freshenv=False)
    status = strip_colors(second._status.getvalue())
    assert "html_static_path" not in status, status
    assert {p.name for p in (Path(second.outdir) / "_static").rglob("*design*.css")} == design


def test_new_trace_replaces_its_pages(make_site: SiteMaker, tmp_path: Path) -> None:
    srcdir = copy_testroot("incremental", tmp_path / "site")
    put_trace(srcdir, SIMPLE_LOG)
    paged = {"torchtrace_fold_bytes": 0}  # graphs and kernels on pages of their own
    first = make_site("incremental", srcdir=srcdir, confoverrides=paged)
    old_pages = set(generated_pages(first))
    assert "torchtrace/live/frame-none" in old_pages
    assert any("/graph-" in p for p in old_pages) and any("/kernel-" in p for p in old_pages)

    put_trace(srcdir, COMP_METRICS_LOG)  # other compile ids, no kernels
    second = make_site(
        "incremental", srcdir=srcdir, freshenv=False, build=False, confoverrides=paged
    )
    read = read_docnames(second)
    # [0/0] was simple.py's forward: prose linking live/[0/0] now means another function
    (moved,) = strip_colors(warnings_of(second)).splitlines()
    assert moved.endswith("[torchtrace.moved]") and "index.rst:6: WARNING: 1 object" in moved
    assert "live/[0/0] was forward (~/project/simple.py:15), is now " in moved
    new_pages = set(generated_pages(second))
    assert "index" in read  # the page with the directive shows the new summary
    assert new_pages - old_pages <= set(read)  # the new frames were read
    assert "other" not in read  # pages without traces were not
    # pages of frames, graphs and kernels that no longer exist are gone, from disk and env
    gone = old_pages - new_pages
    assert "torchtrace/live/frame-none" in gone
    assert any("/kernel-" in p for p in gone)
    for docname in gone:
        assert not (srcdir / f"{docname}.rst").exists()
        assert docname not in second.env.all_docs
        # nor published: their old HTML and source copies left the output too
        assert not (Path(second.outdir) / f"{docname}.html").exists()
        assert not (Path(second.outdir) / "_sources" / f"{docname}.rst.txt").exists()
    for docname in new_pages:
        assert (Path(second.outdir) / f"{docname}.html").exists()
    frames = set(inventory(second)["frame"])
    assert frames == {"live/[0/0]", "live/[0/0_1]", "live/[1/0]", "live/[1/0_1]", "live/[2/0]"}
    assert "kernel" not in inventory(second)


def test_damaged_log_warns_with_file_and_line(make_site: SiteMaker) -> None:
    app = make_site("corrupt")
    warnings = app.warning.getvalue()
    assert "simple_corrupted_json.log:13" in warnings
    assert "[torchtrace.md5]" in warnings
    # the build went on: the rest of the log is documented
    assert (Path(app.outdir) / "torchtrace" / "damaged" / "frame-0-0.html").is_file()
    assert "damaged/[0/0]" in inventory(app)["frame"]
    for line in warnings.strip().splitlines():
        assert "[torchtrace.md5]" in line, line


def test_damaged_log_warning_can_be_suppressed(make_site: SiteMaker) -> None:
    app = make_site("corrupt", confoverrides={"suppress_warnings": ["torchtrace.md5"]})
    assert app.warning.getvalue() == ""
    assert (Path(app.outdir) / "torchtrace" / "damaged" / "index.html").is_file()


def test_missing_log_warns_and_build_goes_on(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        "text",
        pages={"index.rst": "Missing\n=======\n\n.. torchtrace:: no/such.log\n"},
    )
    warnings = app.warning.getvalue()
    assert "no/such.log" in warnings
    assert "[torchtrace.read]" in warnings
    assert (Path(app.outdir) / "index.txt").is_file()


def test_a_touched_log_reads_nothing_a_changed_one_its_pages(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """Pages depend on the logs' content, not their file times: a checkout or a copy that
    leaves the log as it was reads nothing again."""
    import os

    srcdir = copy_testroot("incremental", tmp_path / "site")
    put_trace(srcdir, SIMPLE_LOG)
    first = make_site("incremental", srcdir=srcdir)
    pages = set(generated_pages(first))
    log = srcdir / "trace.log"
    later = log.stat().st_mtime_ns + 10**10
    os.utime(log, ns=(later, later))  # touched: same bytes, a newer time
    second = make_site("incremental", srcdir=srcdir, freshenv=False, build=False)
    assert read_docnames(second) == []
    log.write_bytes(log.read_bytes().replace(b'"co_name": "forward"', b'"co_name": "forwarD"'))
    third = make_site("incremental", srcdir=srcdir, freshenv=False, build=False)
    read = set(read_docnames(third))
    assert "index" in read and pages <= read | {p for p in pages if p.endswith("frame-none")}
    assert "other" not in read


def test_a_download_made_piece_by_piece_is_written_only_when_it_changes(tmp_path: Path) -> None:
    """A thousand ranks' events are written as they are made, never held whole; the file
    is replaced only when its bytes change (a watcher would rebuild for nothing), and no
    temporary file is left beside it."""
    from sphinx_torchtrace.sphinxext.files import write_all

    root = tmp_path / "torchtrace"
    target = root / "_raw" / "events.json"
    write_all(root, {target: lambda: iter(["[", "1,", "2", "]\n"])})
    assert target.read_text(encoding="utf-8") == "[1,2]\n"
    before = target.stat().st_mtime_ns, target.stat().st_ino
    write_all(root, {target: lambda: ["[1,", "2]\n"]})  # the same bytes, other pieces
    assert (target.stat().st_mtime_ns, target.stat().st_ino) == before
    write_all(root, {target: lambda: ["[3]\n"]})
    assert target.read_text(encoding="utf-8") == "[3]\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["events.json"]


def test_a_rebuild_that_removes_pages_rewrites_every_page_s_navigation(tmp_path: Path) -> None:
    """A trace recaptured with fewer compiles loses pages: every other page's sidebar (the
    global toctree) listed them, and Sphinx rewrote only the changed pages, so the others
    kept thousands of dead links (the demo, after a rebuild)."""
    import re
    import shutil
    import subprocess
    import sys

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["sphinx_torchtrace"]\nhtml_theme = "alabaster"\n'
        'html_sidebars = {"**": ["globaltoc.html"]}\n',
        encoding="utf-8",
    )
    (src / "index.rst").write_text(
        "Home\n====\n\n.. toctree::\n\n   run\n   other\n", encoding="utf-8"
    )
    (src / "other.rst").write_text("Other\n=====\n\nText.\n", encoding="utf-8")
    logs = sorted((SHARED.parent / "captured" / "multi_rank_gloo").glob("*.log"))
    shutil.copy(logs[0], src / "trace.log")
    (src / "run.rst").write_text("Run\n===\n\n.. torchtrace:: trace.log\n", encoding="utf-8")
    out = tmp_path / "out"

    def build() -> None:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "sphinx",
                "-q",
                "-b",
                "html",
                "-d",
                str(tmp_path / "dt"),
                str(src),
                str(out),
            ],
            check=True,
        )

    build()
    before = {p.relative_to(out) for p in out.rglob("*.html")}
    shutil.copy(SIMPLE_LOG, src / "trace.log")  # a log of one compile
    build()
    after = {p.relative_to(out) for p in out.rglob("*.html")}
    assert before - after, "the new log has fewer pages"
    for page in out.rglob("*.html"):
        for href in re.findall(r'href="([^"#?]+)', page.read_text(encoding="utf-8")):
            if "://" not in href and href.endswith(".html"):
                assert (page.parent / href).resolve().exists(), (page, href)
