"""What a gate cannot compare, in a docs build (issue 51, point 6): the ``torchtrace-diff``
and ``torchtrace-trend`` directives warn ``torchtrace.comparability`` for it, as for
records they did not read, and the comparison says it where it stands; no page shows a
ratio of ``inf`` or ``nan``.

``sphinx-torchtrace diff`` exits 2 naming a ratio that is no finite number, a runtime
profile it did not read while runtime is gated, a run of a trend it did not read whole;
a ``-W`` docs build of the same runs passed, and its page printed ``xinf``.  Real Sphinx
builds of the runtime capture and the captured pairs, changed the way each case needs.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_colors

from .conftest import DATA, SiteMaker, copy_testroot, warnings_of
from .test_gate_uncomparable import CAPTURE, CLEAN, _compiled, _with_setup_time
from .test_runtime_bounded import bomb

PAIR = DATA / "captured" / "pairs" / "recompile"
RUNTIME_GATE = {"torchtrace_regressions": {"runtime": 1.25}}
#: A number no page may show: Python's words for what is no finite number.
NO_NUMBER = re.compile(r"\b(?:x?inf|x?nan|infinity)\b", re.IGNORECASE)


def _site(tmp_path: Path, page: str) -> Path:
    srcdir = copy_testroot("incremental", tmp_path / "site")
    (srcdir / "trace.log").unlink(missing_ok=True)
    (srcdir / "index.rst").write_text("Runs\n====\n\n" + page, encoding="utf-8")
    return srcdir


def _diff_page(old: str, new: str) -> str:
    return f".. torchtrace-diff:: {old} {new}\n   :name: cmp\n\n"


def _comparability(app: SphinxTestApp) -> list[str]:
    """Each ``torchtrace.comparability`` warning, its colours stripped."""
    lines = strip_colors(warnings_of(app)).splitlines()
    return [ln for ln in lines if ln.endswith("[torchtrace.comparability]")]


def _text(app: SphinxTestApp, docname: str = "index") -> str:
    """A text build's page, its lines joined (the text builder wraps long lines)."""
    return " ".join((Path(app.outdir) / f"{docname}.txt").read_text(encoding="utf-8").split())


def test_a_runtime_ratio_that_is_no_number_is_warned_and_said(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The baseline's ``setup`` took 5e-324 µs a call: its growth is no finite number.  The
    runtime gate's directive warns, naming it; without the gate nothing is warned."""
    srcdir = _site(tmp_path, _diff_page("tiny", "new"))
    _with_setup_time(srcdir / "tiny", "5e-324")
    shutil.copytree(CAPTURE, srcdir / "new")
    app = make_site("incremental", "text", srcdir=srcdir, confoverrides=RUNTIME_GATE)
    (warning,) = _comparability(app)
    assert "index.rst:4: WARNING: cmp: not compared: rank 0: " in warning
    assert "runtime_training.py:setup: runtime per call" in warning
    assert "cannot be compared (the ratio is past any number)" in warning
    assert not NO_NUMBER.search(warning)
    page = _text(app)
    assert "**Not compared**: " in page and "runtime_training.py:setup" in page
    assert not NO_NUMBER.search(page)
    ungated = make_site("incremental", "text", srcdir=srcdir)
    assert _comparability(ungated) == []


def test_a_runtime_profile_not_read_is_warned_while_runtime_is_gated(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The new run's compiled profile expands too much: it is not read, so the runtime
    gate compares nothing of rank 0.  The CLI exits 2; the directive warns, the page says."""
    srcdir = _site(tmp_path, _diff_page("old", "new"))
    shutil.copytree(CAPTURE, srcdir / "old")
    shutil.copytree(CAPTURE, srcdir / "new")
    bomb(_compiled(srcdir / "new"))
    app = make_site("incremental", "html", srcdir=srcdir, confoverrides=RUNTIME_GATE)
    (warning,) = _comparability(app)
    assert "cmp: not compared: " in warning and "expands more than" in warning
    assert "rank 0: runtime not compared: the new run kept no runtime profile" in warning
    html = (Path(app.outdir) / "index.html").read_text("utf-8")
    assert "<strong>Not compared</strong>" in html and "expands more than" in html
    assert _comparability(make_site("incremental", "html", srcdir=srcdir)) == []


def _no_compile_time(log: Path) -> None:
    """Every compile of ``log`` said to take 0 s: any ratio over it is no number."""
    text, n = re.subn(
        r'"entire_frame_compile_time_s": [0-9.e+-]+',
        '"entire_frame_compile_time_s": 0.0',
        log.read_text("utf-8"),
    )
    assert n
    log.write_text(text, "utf-8")


def test_a_compile_time_ratio_over_no_time_says_so_not_xinf(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A baseline whose compiles took 0 s: the comparison's compile time table printed
    ``xinf``; it says the ratio cannot be compared, and the compile time gate warns."""
    srcdir = _site(tmp_path, _diff_page("old", "new"))
    shutil.copytree(PAIR / "baseline", srcdir / "old")
    shutil.copytree(PAIR / "new", srcdir / "new")
    (log,) = (srcdir / "old").glob("*.log")
    _no_compile_time(log)
    app = make_site("incremental", "text", srcdir=srcdir)
    page = _text(app)
    assert re.search(r"\| 0\.00 s +\| [\d.]+ s +\| cannot be compared +\|", page), page
    assert not NO_NUMBER.search(page)
    assert _comparability(app) == []  # no gate on compile time: nothing it cannot compare
    gated = make_site(
        "incremental",
        "text",
        srcdir=srcdir,
        confoverrides={"torchtrace_regressions": {"compile_time": 1.25}},
    )
    (warning,) = _comparability(gated)
    assert re.search(r"compile time 0\.00 s -> [\d.]+ s cannot be compared", warning)
    assert not NO_NUMBER.search(warning) and not NO_NUMBER.search(_text(gated))


TREND = ".. torchtrace-trend:: oldest.log middle.log newest.log\n   :labels: v1, v2, v3\n\n"


def test_a_trend_run_not_read_whole_is_warned_and_said(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The oldest of three runs is cut mid-record: the trend shows it, so the directive
    warns what of it was not read, naming the run, and says it above the rows."""
    srcdir = _site(tmp_path, TREND)
    text = CLEAN.read_text("utf-8")
    (srcdir / "oldest.log").write_text(text[: len(text) // 2], encoding="utf-8")
    for name in ("middle.log", "newest.log"):
        shutil.copyfile(CLEAN, srcdir / name)
    app = make_site("incremental", "html", srcdir=srcdir)
    (warning,) = _comparability(app)
    assert "index.rst:4: WARNING: not read, so not compared: run v1: " in warning
    assert "record(s) or line(s) not read" in warning and "run v2" not in warning
    html = (Path(app.outdir) / "index.html").read_text("utf-8")
    assert "<strong>Not read</strong>" in html and "run v1: " in html
    whole = _site(tmp_path / "whole", TREND)
    for name in ("oldest.log", "middle.log", "newest.log"):
        shutil.copyfile(CLEAN, whole / name)
    assert _comparability(make_site("incremental", "html", srcdir=whole)) == []
