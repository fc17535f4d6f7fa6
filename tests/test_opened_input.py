"""An input is opened once: what a directive or a command names is resolved into one value
(:func:`~sphinx_torchtrace.trace.inputs.opening.open_input`) that everything after takes.

Before, a folder of rank logs was listed five times for one directive (the kind asked, the
pages' dependencies, the info line, the ranks the folder has, the download stamp) and a log
sniffed twice; a log changed between two of those reads could be shown from one choice
and stamped from another.  These tests count the folder's listings in a real build and
hold the value's decisions (format, logs and why, ranks, refusals in the build's words).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from sphinx_torchtrace.trace.inputs import loader
from sphinx_torchtrace.trace.inputs.formats import DEBUG_DIR, TORCH_LOGS, TRACE
from sphinx_torchtrace.trace.inputs.loading import load_input
from sphinx_torchtrace.trace.inputs.opening import open_input

from .conftest import DATA, SHARED, SiteMaker, warnings_of

RANKS = SHARED / "tlparse-inputs" / "inputs" / "multi_rank_logs"
SIMPLE = SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
TEXT = DATA / "captured" / "torch_logs" / "ranks.log"
DEBUG = DATA / "captured" / "debug_dir" / "inference" / "torch_compile_debug"

PAGE = """\
:orphan:

Ranks
=====

.. torchtrace:: ../{folder}
   :name: opened
{options}"""


def _counted_listings(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every listing of a folder the log chooser makes, by folder name."""
    listed: Counter[str] = Counter()
    real = loader._list_directory

    def counting(directory: Path) -> Any:
        listed[Path(directory).name] += 1
        return real(directory)

    monkeypatch.setattr(loader, "_list_directory", counting)
    return listed


@pytest.mark.parametrize("options", ["", "   :ranks: 1, 9\n", "   :latest:\n"])
def test_a_directive_lists_its_folder_once(
    make_site: SiteMaker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, options: str
) -> None:
    folder = tmp_path / "ranks"
    shutil.copytree(RANKS, folder)
    listed = _counted_listings(monkeypatch)
    app = make_site("simple", pages={"ranks.rst": PAGE.format(folder="ranks", options=options)})
    status, warnings = app.status.getvalue(), warnings_of(app)
    assert listed["ranks"] == 1, listed
    # what the one listing decided is what the build says
    if options.startswith("   :ranks:"):
        assert ":ranks: 9 not in the trace (its ranks: 0, 1, 2, 3)" in warnings
        assert "torchtrace: opened: using 1 rank log" in status
    elif options:
        assert "torchtrace: opened: using dedicated_log_torch_trace_rank_" in status
        assert "newest of 4 logs" in status
    else:
        assert "torchtrace: opened: using 4 rank logs" in status


def test_the_value_says_format_logs_and_why(tmp_path: Path) -> None:
    folder = open_input(RANKS, ranks=[0, 2])
    assert (folder.format, folder.is_folder, folder.problem) == (TRACE, True, None)
    assert [p.name for p in folder.logs] == [
        "dedicated_log_torch_trace_rank_0.log",
        "dedicated_log_torch_trace_rank_2.log",
    ]
    assert folder.folder_ranks == {0, 1, 2, 3}  # whichever were chosen
    assert [s.size for s in folder.stamps] == [p.stat().st_size for p in folder.logs]
    assert len(load_input(folder).trace.ranks) == 2  # read as it was opened

    log = open_input(SIMPLE)
    assert (log.format, log.is_folder, log.logs) == (TRACE, False, [SIMPLE])
    assert log.stamps[0].mtime_ns == SIMPLE.stat().st_mtime_ns

    assert open_input(TEXT).format == TORCH_LOGS
    assert open_input(TEXT, format=TRACE).format == TRACE  # ``:format:`` decides
    opened = open_input(TEXT, ranks=[1])
    assert opened.ranks == (1,) and opened.companions == ()  # a text log reads no profile

    opened = open_input(DEBUG)
    assert (opened.format, opened.debug_shape, opened.logs) == (DEBUG_DIR, "debug", [])


def test_what_cannot_be_opened_is_said_once_in_the_readers_words(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    opened = open_input(empty)
    assert opened.exists and opened.problem is not None
    assert str(opened.problem) == f"cannot read trace log {empty}: the directory holds no log file"
    with pytest.raises(type(opened.problem), match="the directory holds no log file"):
        load_input(opened)

    missing = open_input(tmp_path / "nowhere.log")
    assert not missing.exists and missing.stamps == ()


def test_with_files_are_opened_as_the_directive_asked() -> None:
    """A text log with its run's rank folder in ``:with:`` and ``:ranks: 1``: the trace read
    (the folder, the base) holds rank 1 alone, as the directive's ``:ranks:`` said."""
    loaded = load_input(open_input(TEXT, ranks=[1]), [str(RANKS)])
    assert [r.rank for r in loaded.trace.ranks] == [1]
    assert loaded.trace_input is not None and loaded.trace_input.ranks == (1,)
    assert [p.name for p in loaded.trace_input.logs] == ["dedicated_log_torch_trace_rank_1.log"]
