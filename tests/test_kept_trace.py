"""A no-change rebuild keeps the last build's trace: the log is not read again.

Reading, masking and planning a big log cost seconds per hundred megabytes at every
build, though a rebuild with nothing changed reads no page.  These builds are real
Sphinx builds of real logs, twice in one folder: the second must not load the model,
must say what the first said, and must leave the whole output as the first made it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from sphinx_torchtrace.sphinxext.families.trace_kept import MODEL_LOADS

from .conftest import SHARED, SiteMaker, copy_testroot, generated_pages, warnings_of

RECOMPILES_LOG = SHARED / "recompiles" / "dedicated_log_torch_trace_afr5b1tf.log"


def output_of(outdir: Path) -> dict[str, tuple[bytes, int]]:
    """Every file of the output (no doctrees): its bytes and modification time."""
    out: dict[str, tuple[bytes, int]] = {}
    for path in sorted(outdir.rglob("*")):
        if path.is_file():
            out[path.relative_to(outdir).as_posix()] = (path.read_bytes(), path.stat().st_mtime_ns)
    return out


def site_with(tmp_path: Path, log: Path) -> Path:
    srcdir = copy_testroot("incremental", tmp_path / "site")
    shutil.copyfile(log, srcdir / "trace.log")
    return srcdir


def test_no_change_rebuild_does_not_load_the_trace(make_site: SiteMaker, tmp_path: Path) -> None:
    srcdir = site_with(tmp_path, RECOMPILES_LOG)
    first = make_site("incremental", srcdir=srcdir)
    pages = generated_pages(first)
    assert len(pages) > 3  # overview, frames, ...: a real trace's pages
    before = output_of(Path(first.outdir))
    said = warnings_of(first)

    loads = MODEL_LOADS.n
    second = make_site("incremental", srcdir=srcdir, freshenv=False)
    assert MODEL_LOADS.n == loads, "the unchanged log was read into the model again"
    assert warnings_of(second) == said  # what the first build said, said again
    assert generated_pages(second) == pages
    # the whole output is the first build's bytes; what the extension wrote (pages,
    # downloads, manifest) was not written again (Sphinx rewrites its search index)
    after = output_of(Path(second.outdir))
    assert {p: b for p, (b, _) in after.items()} == {p: b for p, (b, _) in before.items()}
    ours = [p for p in after if p.startswith(("torchtrace/", "_downloads/", "torchtrace-"))]
    assert len(ours) > 3
    assert {p: after[p][1] for p in ours} == {p: before[p][1] for p in ours}


def test_a_changed_log_is_read_again(make_site: SiteMaker, tmp_path: Path) -> None:
    """Same size, new time: the log is read (its content may differ)."""
    srcdir = site_with(tmp_path, RECOMPILES_LOG)
    make_site("incremental", srcdir=srcdir)
    log = srcdir / "trace.log"
    st = log.stat()
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    loads = MODEL_LOADS.n
    make_site("incremental", srcdir=srcdir, freshenv=False)
    assert MODEL_LOADS.n == loads + 1


def test_a_kept_trace_is_read_when_its_directive_page_is(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The page holding the directive edited (the log not): the trace is read for its
    summary, which comes out as a cold build makes it."""
    srcdir = site_with(tmp_path, RECOMPILES_LOG)
    make_site("incremental", srcdir=srcdir)
    index = srcdir / "index.rst"
    index.write_text(index.read_text() + "\nA line added.\n")
    second = make_site("incremental", srcdir=srcdir, freshenv=False)
    cold_src = site_with(tmp_path / "cold", RECOMPILES_LOG)
    shutil.copyfile(index, cold_src / "index.rst")
    cold = make_site("incremental", srcdir=cold_src)
    edited = (Path(second.outdir) / "index.html").read_text()
    assert "A line added." in edited
    assert edited == (Path(cold.outdir) / "index.html").read_text()
    assert warnings_of(second) == ""  # said at the first build, not twice


def test_a_kept_trace_warns_again_where_the_log_is_damaged(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A damaged record warned at the first build is warned again, at its log's line,
    though the log is not read: a rebuild run with ``-W`` fails as the first did."""
    srcdir = copy_testroot("corrupt", tmp_path / "site")
    first = make_site("corrupt", srcdir=srcdir)
    said = warnings_of(first)
    assert "simple_corrupted_json.log:13" in said
    assert "[torchtrace.md5]" in said
    loads = MODEL_LOADS.n
    second = make_site("corrupt", srcdir=srcdir, freshenv=False)
    assert MODEL_LOADS.n == loads
    assert warnings_of(second) == said
