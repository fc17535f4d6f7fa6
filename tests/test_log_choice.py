"""The right log: a directory's newest log by the times the logs record, and mixed runs told.

File times lie (a copy or a git checkout reorders them), so these tests give the
files times in the wrong order on purpose.
"""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import pytest

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.inputs.loader import choose_logs, newest_log, rank_logs, recorded_time

from .conftest import DATA, SHARED, SiteMaker, warnings_of

INPUTS = SHARED / "tlparse-inputs" / "inputs"
SIMPLE = SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log"  # recorded first
BREAKS = SHARED / "graph_breaks" / "dedicated_log_torch_trace_051e7f1c.log"  # 48 s later
DRAFT = DATA / "captured" / "draft_export"  # two logs that record no time
OLD_FILE_TIME = 1_000_000  # 1970: a file time far older than the copies' own


def _copy(src: Path, dest: Path, file_time: float | None = None) -> Path:
    shutil.copy(src, dest)
    if file_time is not None:
        os.utime(dest, (file_time, file_time))
    return dest


def test_the_newest_log_is_the_one_recorded_last_whatever_the_file_times(
    tmp_path: Path,
) -> None:
    newer = _copy(BREAKS, tmp_path / "dedicated_log_torch_trace_aaaa.log", OLD_FILE_TIME)
    _copy(SIMPLE, tmp_path / "dedicated_log_torch_trace_zzzz.log")  # newest file, older run
    assert newest_log(tmp_path) == newer
    trace = load_trace(tmp_path)
    assert [Path(r.path).name for r in trace.ranks] == [newer.name]
    assert len(trace.ranks[0].compiles) == 28  # graph_breaks' compiles, not simple's 1
    choice = choose_logs(tmp_path)
    assert choice.describe() == f"using {newer.name} (newest of 2 logs by recorded time)"


def test_a_gzip_log_records_its_time_too(tmp_path: Path) -> None:
    newer = tmp_path / "dedicated_log_torch_trace_aaaa.log.gz"
    newer.write_bytes(gzip.compress(BREAKS.read_bytes(), mtime=0))
    os.utime(newer, (OLD_FILE_TIME, OLD_FILE_TIME))
    _copy(SIMPLE, tmp_path / "dedicated_log_torch_trace_zzzz.log")
    assert recorded_time(newer) == recorded_time(BREAKS)
    assert newest_log(tmp_path) == newer


def test_recorded_times_of_real_logs() -> None:
    # the first chromium event, in epoch seconds; compilation_metrics' start_time where
    # a log has no chromium events; None where nothing in its first records is a time
    assert recorded_time(SIMPLE) == pytest.approx(1795261848.850498)
    assert recorded_time(BREAKS) == pytest.approx(1795261896.3026388)
    assert recorded_time(INPUTS / "comp_metrics.log") == pytest.approx(1712154528.0523684)
    assert recorded_time(INPUTS / "export.log") is None
    assert recorded_time(DRAFT / "dedicated_log_torch_trace_6wp6mdhq.log") is None


def test_file_times_decide_only_when_no_log_records_a_time(tmp_path: Path) -> None:
    names = sorted(p.name for p in DRAFT.iterdir())
    _copy(DRAFT / names[0], tmp_path / names[0])
    _copy(DRAFT / names[1], tmp_path / names[1], OLD_FILE_TIME)
    assert newest_log(tmp_path) == tmp_path / names[0]
    os.utime(tmp_path / names[0], (OLD_FILE_TIME - 1, OLD_FILE_TIME - 1))
    assert newest_log(tmp_path) == tmp_path / names[1]
    assert choose_logs(tmp_path).by == "modification time"


def test_a_log_that_records_a_time_wins_over_one_that_does_not(tmp_path: Path) -> None:
    timed = _copy(SIMPLE, tmp_path / "dedicated_log_torch_trace_aaaa.log", OLD_FILE_TIME)
    untimed = DRAFT / "dedicated_log_torch_trace_6wp6mdhq.log"
    _copy(untimed, tmp_path / "dedicated_log_torch_trace_z.log")
    assert newest_log(tmp_path) == timed


def _mixed(tmp_path: Path) -> Path:
    """Two runs' rank logs in one folder: rank 0 twice, the newer run's with the older file."""
    _copy(SIMPLE, tmp_path / "dedicated_log_torch_trace_rank_0_zzzz.log")
    _copy(BREAKS, tmp_path / "dedicated_log_torch_trace_rank_0_aaaa.log", OLD_FILE_TIME)
    _copy(BREAKS, tmp_path / "dedicated_log_torch_trace_rank_1_aaaa.log", OLD_FILE_TIME)
    return tmp_path


def test_a_repeated_rank_uses_its_newest_log_and_is_reported(tmp_path: Path) -> None:
    folder = _mixed(tmp_path)
    assert rank_logs(folder)[0].name == "dedicated_log_torch_trace_rank_0_aaaa.log"
    trace = load_trace(folder)
    assert [len(r.compiles) for r in trace.ranks] == [28, 28]
    mixed = [d for d in trace.diagnostics if d.subtype == "mixed_runs"]
    assert len(mixed) == 1
    assert "rank 0" in mixed[0].message and ":ranks:" in mixed[0].message
    assert not [
        d for d in load_trace(folder, ranks=[0, 1]).diagnostics if d.subtype == "mixed_runs"
    ]
    assert not [d for d in load_trace(folder, latest=True).diagnostics if d.subtype == "mixed_runs"]


def test_a_log_without_a_rank_beside_rank_logs_is_reported(tmp_path: Path) -> None:
    _copy(SIMPLE, tmp_path / "dedicated_log_torch_trace_rank_0_a.log")
    _copy(BREAKS, tmp_path / "dedicated_log_torch_trace_4hz7a9.log")
    (message,) = [d.message for d in load_trace(tmp_path).diagnostics if d.subtype == "mixed_runs"]
    assert "without a rank" in message and "dedicated_log_torch_trace_4hz7a9.log" in message


@pytest.mark.parametrize(
    "folder",
    [
        INPUTS / "multi_rank_logs",
        INPUTS / "multi_rank_messy_input",
        INPUTS / "multi_rank_runtime",
        INPUTS / "multi_rank_schedule",
        SHARED / "tlparse-inputs" / "graph_exec_order_tests",
        DATA / "captured" / "multi_rank_gloo",
        DATA / "corpus" / "ddp_4ranks",  # gzip rank logs
        DATA / "corpus" / "ddp_4ranks_divergent",
    ],
)
def test_bundled_rank_folders_are_one_run_each(folder: Path) -> None:
    """Every rank of the folder is read (plain or gzip logs), as one run."""
    trace = load_trace(folder)
    assert not [d for d in trace.diagnostics if d.subtype == "mixed_runs"]
    named = {p.name for p in folder.iterdir() if "_rank_" in p.name}
    assert {Path(r.path).name for r in trace.ranks} == named


MIXED_PAGE = """\
:orphan:

Mixed
=====

.. torchtrace:: {path}
   :name: mixed
{options}"""


def _build(make_site: SiteMaker, folder: Path, options: str = "") -> tuple[str, str]:
    """A build of the simple site with a page on ``folder`` (a sibling of the site's copy)."""
    page = MIXED_PAGE.format(path=f"../{folder.name}", options=options)
    app = make_site("simple", pages={"mixed.rst": page})
    return app.status.getvalue(), warnings_of(app)


def test_the_build_says_which_log_it_used(make_site: SiteMaker, tmp_path: Path) -> None:
    folder = tmp_path / "trace"
    folder.mkdir()
    newer = _copy(BREAKS, folder / "dedicated_log_torch_trace_aaaa.log", OLD_FILE_TIME)
    _copy(SIMPLE, folder / "dedicated_log_torch_trace_zzzz.log")
    _copy(SIMPLE, folder / "dedicated_log_torch_trace_yyyy.log")
    status, warnings = _build(make_site, folder)
    assert f"torchtrace: mixed: using {newer.name} (newest of 3 logs by recorded time)" in status
    assert "torchtrace.mixed_runs" not in warnings
    assert "torchtrace.path" not in warnings


def test_the_build_warns_once_about_mixed_runs_unless_told(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    (tmp_path / "trace").mkdir()
    folder = _mixed(tmp_path / "trace")
    status, warnings = _build(make_site, folder)
    assert warnings.count("[torchtrace.mixed_runs]") == 1, warnings
    assert "torchtrace: mixed: using 2 rank logs" in status
    for options in ("   :ranks: 0, 1\n", "   :latest:\n"):
        _status, warnings = _build(make_site, folder, options)
        assert "torchtrace.mixed_runs" not in warnings, (options, warnings)


def test_a_folder_of_two_runs_names_on_the_page_the_run_it_does_not_show(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """Two processes into one TORCH_TRACE folder (the second with cache hits): the page
    says which log it shows, which it does not and how to show it, not only the console."""
    folder = tmp_path / "trace"
    shutil.copytree(DATA / "corpus" / "two_runs_one_folder", folder)
    (folder / "program-output.txt").unlink()
    first_run = "dedicated_log_torch_trace_ezk7tcca.log"  # cold: cache misses
    second_run = "dedicated_log_torch_trace_2dudqaud.log"  # warm: recorded later
    trace = load_trace(folder)
    assert [Path(r.path).name for r in trace.ranks] == [second_run]
    assert [Path(p).name for p in trace.not_shown] == [first_run]
    for options in ("", "   :latest:\n"):  # :latest: is the same choice, said out loud
        _status, warnings = _build(make_site, folder, options)
        assert "torchtrace.mixed_runs" not in warnings  # one run per directive is a choice
        (overview,) = sorted(tmp_path.glob("simple-*/_build/html/torchtrace/mixed/index.html"))[-1:]
        text = overview.read_text(encoding="utf-8")
        assert "Not shown" in text and first_run in text and second_run in text, options
        assert "Name a log file in the directive" in text
