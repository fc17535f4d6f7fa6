"""A gate never passes on a value it cannot compare (issue 51, point 6): a ratio that is
not a finite number, a runtime profile it could not read, a run of a trend it did not
read whole (the oldest included) make ``sphinx-torchtrace diff`` exit 2 naming the
reason, in every format, as records it did not read do (round 3).

The runs are the runtime capture (``run --runtime``) and copies of it whose compiled
profile holds times no comparison can use, and the compile-error pair's logs.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from .conftest import DATA
from .test_cli import run
from .test_runtime_bounded import bomb

CAPTURE = DATA / "captured" / "runtime_training"
PAIR = DATA / "captured" / "pairs" / "compile_error"
(CLEAN,) = (PAIR / "baseline").glob("*.log")
SCHEMA = Path(__file__).parents[1] / "sphinx_torchtrace" / "schemas" / "diff.schema.json"
FORMATS = ("text", "json", "markdown", "github", "junit")
GATE = ("--fail-on", "runtime:1.25")


def _compiled(folder: Path) -> Path:
    (path,) = [p for p in (folder / "runtime").glob("*.json.gz") if p.stat().st_size < 10**6]
    return path


def _with_setup_time(dest: Path, dur: str) -> Path:
    """The capture again, each call of region 0/0 (the function ``setup``) lasting
    ``dur`` (JSON text) in its compiled profile."""
    shutil.copytree(CAPTURE, dest)
    path = _compiled(dest)
    data = json.load(gzip.open(path))
    for e in data["traceEvents"]:
        if e.get("name") == "Torch-Compiled Region: 0/0":
            e["dur"] = "@DUR@"
    text = json.dumps(data).replace('"@DUR@"', dur)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    return dest


def _diff(*args: str | Path) -> tuple[int, str]:
    result = run("diff", *args)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_runtime_ratio_that_is_no_number_exits_2(tmp_path: Path, fmt: str) -> None:
    """The baseline's ``setup`` took 5e-324 µs a call (0 to any float after dividing):
    its growth is no finite number.  The gate said x-infinity was a regression, and a NaN
    (infinite times on both sides) passed; now both are exit 2, named."""
    tiny = _with_setup_time(tmp_path / "tiny", "5e-324")
    status, out = _diff(tiny, CAPTURE, *GATE, "--format", fmt)
    assert status == 2, out
    assert "runtime_training.py:setup" in out and "cannot be compared" in out
    if fmt == "json":
        data = json.loads(out)  # no NaN or Infinity in it: JSON has none
        jsonschema.validate(data, json.loads(SCHEMA.read_text("utf-8")))
        assert data["exit_status"] == 2 and not data["regressions"]
        assert any("cannot be compared" in u for u in data["unread"])


def test_infinite_times_are_refused_and_the_runtime_gate_exits_2(tmp_path: Path) -> None:
    """``"dur": Infinity`` in both runs: infinity less infinity is NaN, which no
    threshold exceeds, so the gate passed.  The profile is refused with the reason."""
    inf = _with_setup_time(tmp_path / "inf", "Infinity")
    status, out = _diff(inf, inf, *GATE)
    assert status == 2, out
    for side in ("baseline", "new run"):
        assert f"Not read: {side}: " in out and "a time that is not a finite number" in out
    assert _diff(inf, inf)[0] == 0  # no runtime gate: nothing it compares is unread


def test_a_new_run_whose_profile_is_refused_cannot_pass_the_runtime_gate(tmp_path: Path) -> None:
    new = tmp_path / "new"
    shutil.copytree(CAPTURE, new)
    bomb(_compiled(new))
    status, out = _diff(CAPTURE, new, *GATE)
    assert status == 2, out
    assert "expands more than" in out
    assert "rank 0: runtime not compared: the new run kept no runtime profile" in out
    assert _diff(CAPTURE, new)[0] == 0


def test_a_runtime_gate_with_no_profile_to_compare_exits_2(tmp_path: Path) -> None:
    bare = tmp_path / "bare"
    shutil.copytree(CAPTURE, bare, ignore=shutil.ignore_patterns("runtime"))
    status, out = _diff(bare, CAPTURE, *GATE)
    assert status == 2, out
    assert "runtime not compared: the baseline kept no runtime profile of this rank" in out
    assert _diff(CAPTURE, CAPTURE, *GATE)[0] == 0  # what it can compare, it does


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_trend_whose_oldest_run_was_not_read_whole_exits_2(tmp_path: Path, fmt: str) -> None:
    """Three runs, the oldest cut mid-record: the trend shows it, so a gate on it must
    not pass; the run is named by the path the user gave."""
    text = CLEAN.read_text("utf-8")
    oldest = tmp_path / "oldest.log"
    oldest.write_text(text[: len(text) // 2], encoding="utf-8")
    assert _diff(CLEAN, CLEAN, CLEAN, "--format", fmt)[0] == 0
    status, out = _diff(oldest, CLEAN, CLEAN, "--format", fmt)
    assert status == 2, out
    if fmt == "json":
        data = json.loads(out)
        jsonschema.validate(data, json.loads(SCHEMA.read_text("utf-8")))
        assert data["exit_status"] == 2
        assert any(u.startswith(f"run {oldest}: ") for u in data["unread"]), data["unread"]
    else:
        assert "oldest.log" in out and "not read" in out


def test_more_runs_than_a_trend_compares_are_refused() -> None:
    """A trend keeps 50 runs: the 51st was dropped without a word."""
    result = run("diff", *[CLEAN] * 51)
    assert result.returncode == 2
    assert "give at most 50 runs" in result.stderr
