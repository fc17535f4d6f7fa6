"""A runtime profile changes between two builds (issue 51): the pages that show it are
read again, as when a log changes, and only they.

A trace's pages show the profiles of ``run --runtime`` beside its logs (``runtime/``).
They did not depend on them: a profile that changed, appeared, went or was refused left
the last build's pages as they were (a rebuild then said ``undefined label:
'torchtrace-b1-index-what-ran'``).  Real incremental Sphinx builds of the runtime
capture, a profile changed between them; an unchanged rebuild still reads nothing.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_colors

from sphinx_torchtrace.site.pages.runtime import time_text
from sphinx_torchtrace.trace.runtime import read_profile

from .conftest import DATA, SiteMaker, copy_testroot, warnings_of
from .test_sphinx_incremental import read_docnames

CAPTURE = DATA / "captured" / "runtime_training"
OVERVIEW = "torchtrace/b1/index"
TRACE_PAGE = """A trace that ran
================

.. torchtrace:: run
   :name: b1

.. toctree::

   other
"""
DIFF_PAGE = """Two runs
========

.. torchtrace-diff:: before run
   :name: cmp

.. toctree::

   other
"""


def _site(tmp_path: Path, page: str = TRACE_PAGE, runtime: bool = True) -> Path:
    """The incremental test root with the capture as ``run/`` (without its profiles when
    not ``runtime``) and ``page`` as its index."""
    srcdir = copy_testroot("incremental", tmp_path / "site")
    (srcdir / "trace.log").unlink(missing_ok=True)
    ignore = None if runtime else shutil.ignore_patterns("runtime")
    shutil.copytree(CAPTURE, srcdir / "run", ignore=ignore)
    (srcdir / "index.rst").write_text(page, encoding="utf-8")
    return srcdir


def _compiled(folder: Path) -> Path:
    """The compiled run's profile (the eager run's is the larger)."""
    (path,) = [p for p in (folder / "runtime").glob("*.json.gz") if p.stat().st_size < 10**6]
    return path


def _slower(profile: Path, factor: float) -> None:
    """Every event of ``profile`` ``factor`` times longer (and later): a changed profile."""
    data = json.load(gzip.open(profile))
    for e in data["traceEvents"]:
        for key in ("ts", "dur"):
            if isinstance(e.get(key), (int, float)):
                e[key] *= factor
    with gzip.open(profile, "wt") as f:
        json.dump(data, f)


def _html(app: SphinxTestApp, docname: str) -> str:
    return (Path(app.outdir) / f"{docname}.html").read_text(encoding="utf-8")


def _rebuild(make_site: SiteMaker, srcdir: Path) -> tuple[SphinxTestApp, list[str]]:
    app = make_site("incremental", srcdir=srcdir, freshenv=False, build=False)
    return app, read_docnames(app)


def _reads_nothing_more(make_site: SiteMaker, srcdir: Path) -> SphinxTestApp:
    """A rebuild with nothing changed since the last: no page read again."""
    app, read = _rebuild(make_site, srcdir)
    assert read == []
    assert list(app.builder.get_outdated_docs()) == []
    return app


def _trace_pages(read: list[str]) -> list[str]:
    return [d for d in read if d.startswith("torchtrace/b1/")]


def test_a_removed_profile_reads_the_pages_again(make_site: SiteMaker, tmp_path: Path) -> None:
    srcdir = _site(tmp_path)
    first = make_site("incremental", srcdir=srcdir)
    assert warnings_of(first) == ""
    assert 'id="what-ran"' in _html(first, OVERVIEW) and "Ran:" in _html(first, "index")

    shutil.rmtree(srcdir / "run" / "runtime")
    second, read = _rebuild(make_site, srcdir)
    assert warnings_of(second) == ""
    assert "index" in read and OVERVIEW in read  # the directive's glance and the overview
    assert "other" not in read
    assert 'id="what-ran"' not in _html(second, OVERVIEW)
    assert "Ran:" not in _html(second, "index")
    _reads_nothing_more(make_site, srcdir)


def test_an_added_profile_reads_the_pages_again(make_site: SiteMaker, tmp_path: Path) -> None:
    srcdir = _site(tmp_path, runtime=False)
    first = make_site("incremental", srcdir=srcdir)
    assert warnings_of(first) == "" and 'id="what-ran"' not in _html(first, OVERVIEW)
    frames = [d for d in first.env.all_docs if d.startswith("torchtrace/b1/frame-")]

    shutil.copytree(CAPTURE / "runtime", srcdir / "run" / "runtime")
    second, read = _rebuild(make_site, srcdir)
    assert warnings_of(second) == ""  # no link to a section the stale pages lacked
    assert {"index", OVERVIEW, *frames} <= set(read) and "other" not in read
    assert 'id="what-ran"' in _html(second, OVERVIEW) and "Ran:" in _html(second, "index")
    assert any("ran 1500 times" in _html(second, f) for f in frames)
    _reads_nothing_more(make_site, srcdir)


def test_a_changed_profile_shows_its_new_figures(make_site: SiteMaker, tmp_path: Path) -> None:
    srcdir = _site(tmp_path)
    first = make_site("incremental", srcdir=srcdir)
    profile = _compiled(srcdir / "run")
    before = time_text(read_profile(profile).compiled_us)
    assert before in _html(first, OVERVIEW)

    _slower(profile, 3.0)
    after = time_text(read_profile(profile).compiled_us)
    assert after != before
    second, read = _rebuild(make_site, srcdir)
    assert warnings_of(second) == ""
    assert OVERVIEW in read and "index" in read and "other" not in read
    assert after in _html(second, OVERVIEW) and before not in _html(second, OVERVIEW)
    # its download is written again too: the old one held the old times
    stem = profile.name.split(".", 1)[0]
    (download,) = Path(second.outdir).rglob(f"_downloads/*/{stem}-compiled.json")
    events = json.loads(download.read_text("utf-8"))["traceEvents"]
    assert events == json.load(gzip.open(profile))["traceEvents"]
    _reads_nothing_more(make_site, srcdir)


def _link_out(meta: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.meta.json"
    outside.write_bytes(meta.read_bytes())
    meta.unlink()
    meta.symlink_to(outside)


def _fifo(meta: Path, tmp_path: Path) -> None:
    meta.unlink()
    os.mkfifo(meta)  # read, it would hold the build forever


@pytest.mark.parametrize("refuse", [_link_out, _fifo], ids=["link-out", "fifo"])
def test_a_profile_whose_meta_file_becomes_refused_reads_the_pages_again(
    make_site: SiteMaker, tmp_path: Path, refuse: object
) -> None:
    """The compiled profile's meta file turned into a link out of the folder, or a FIFO:
    the profile is no longer read (a located warning says why), so its figures leave the
    pages; the refused file itself is never opened, to digest it or for anything else."""
    srcdir = _site(tmp_path)
    first = make_site("incremental", srcdir=srcdir)
    profile = _compiled(srcdir / "run")
    compiled = time_text(read_profile(profile).compiled_us)
    assert compiled in _html(first, OVERVIEW)

    meta = profile.with_name(profile.name.split(".", 1)[0] + ".meta.json")
    assert callable(refuse)
    refuse(meta, tmp_path)
    second, read = _rebuild(make_site, srcdir)
    (warning,) = strip_colors(warnings_of(second)).splitlines()
    assert f"{meta.name}: not read" in warning and warning.endswith("[torchtrace.runtime]")
    assert OVERVIEW in read and "index" in read and "other" not in read
    assert compiled not in _html(second, OVERVIEW)
    _reads_nothing_more(make_site, srcdir)


def test_a_comparison_is_read_again_when_a_run_s_profile_changes(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The runtime gate's verdict comes from the profiles: a run slowed three times is a
    regression the rebuild warns about, at the directive, on a page read again."""
    srcdir = _site(tmp_path, page=DIFF_PAGE)
    shutil.copytree(CAPTURE, srcdir / "before")
    gate = {"torchtrace_regressions": {"runtime": 2.0}}
    first = make_site("incremental", srcdir=srcdir, confoverrides=gate)
    assert "regression_runtime" not in warnings_of(first)

    for profile in (srcdir / "run" / "runtime").glob("*.json.gz"):
        _slower(profile, 3.0)
    second = make_site(
        "incremental", srcdir=srcdir, freshenv=False, build=False, confoverrides=gate
    )
    read = read_docnames(second)
    assert "index" in read and "other" not in read
    assert "[torchtrace.regression_runtime]" in warnings_of(second)
    third = make_site("incremental", srcdir=srcdir, freshenv=False, build=False, confoverrides=gate)
    assert read_docnames(third) == []
