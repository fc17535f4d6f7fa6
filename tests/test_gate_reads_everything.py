"""A CI gate never passes on what it did not read: a rank only the new run has is compared
with nothing (its errors are new errors), and the logs a folder left out, the baseline's
ranks the new run lacks and records that did not parse make the verdict exit 2 when no
regression does it, named in every format ``sphinx-torchtrace diff`` writes."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest

from .conftest import DATA
from .test_cli import run

PAIR = DATA / "captured" / "pairs" / "compile_error"
(CLEAN,) = (PAIR / "baseline").glob("*.log")  # compiles with no error
(ERRORS,) = (PAIR / "new").glob("*.log")  # the same program with a compile error
SCHEMA = Path(__file__).parents[1] / "sphinx_torchtrace" / "schemas" / "diff.schema.json"
FORMATS = ("text", "json", "markdown", "github", "junit")


def _folder(where: Path, logs: dict[str, Path | str]) -> Path:
    where.mkdir()
    for name, log in logs.items():
        text = log if isinstance(log, str) else log.read_text("utf-8")
        (where / name).write_text(text, encoding="utf-8")
    return where


def _diff(baseline: Path, new: Path, fmt: str) -> tuple[int, str]:
    result = run("diff", baseline, new, "--format", fmt)
    assert not result.stderr.strip() or "Traceback" not in result.stderr, result.stderr
    return result.returncode, result.stdout


def test_the_pair_itself_is_a_regression_and_the_clean_log_passes(tmp_path: Path) -> None:
    """What the cases below hide, shown when nothing hides it."""
    assert run("diff", CLEAN, ERRORS).returncode == 1
    assert run("diff", CLEAN, CLEAN).returncode == 0


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_error_on_a_rank_only_the_new_run_has_fails_the_gate(tmp_path: Path, fmt: str) -> None:
    baseline = _folder(tmp_path / "base", {"dedicated_log_torch_trace_rank_0_aaaa.log": CLEAN})
    new = _folder(
        tmp_path / "new",
        {
            "dedicated_log_torch_trace_rank_0_aaaa.log": CLEAN,
            "dedicated_log_torch_trace_rank_1_bbbb.log": ERRORS,
        },
    )
    status, out = _diff(baseline, new, fmt)
    assert status == 1, out
    if fmt == "json":
        data = json.loads(out)
        jsonschema.validate(data, json.loads(SCHEMA.read_text("utf-8")))
        assert data["exit_status"] == 1
        assert [g["rank"] for g in data["regressions"] if g["kind"] == "error"] == [1]
        assert data["new_only"][0]["rank"] == 1 and data["new_only"][0]["errors"]
    elif fmt == "junit":
        assert 'type="error"' in out and "rank 1 is only in the new run" in out
    else:
        assert "new compile error" in out and "rank 1 is only in the new run" in out


def _older_error_log(text: str) -> str:
    """The error log as an earlier run of the same rank: it records no time of its own, so
    the folder's newest log of rank 0 is the clean one."""
    return re.sub(r'"(ts|start_time|start_time_us)":', r'"was_\1":', text)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_log_the_folder_left_out_makes_the_verdict_exit_2(tmp_path: Path, fmt: str) -> None:
    """The new folder holds two logs of rank 0; the newest is compared, the other (which
    has the error) is not read: the gate says so and does not pass."""
    baseline = _folder(tmp_path / "base", {"dedicated_log_torch_trace_rank_0_aaaa.log": CLEAN})
    new = _folder(
        tmp_path / "new",
        {
            "dedicated_log_torch_trace_rank_0_aaaa.log": CLEAN,
            "dedicated_log_torch_trace_rank_0_zzzz.log": _older_error_log(
                ERRORS.read_text("utf-8")
            ),
        },
    )
    status, out = _diff(baseline, new, fmt)
    assert status == 2, out
    assert "dedicated_log_torch_trace_rank_0_zzzz.log" in out
    if fmt == "json":
        assert json.loads(out)["unread"] and json.loads(out)["exit_status"] == 2


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_cut_record_makes_the_verdict_exit_2(tmp_path: Path, fmt: str) -> None:
    """A killed process: the error log's record of its failure cut mid-JSON (and the rest
    of that compile with it). Whatever it held, the gate did not read it."""
    lines = ERRORS.read_text("utf-8").splitlines(keepends=True)
    at = next(
        i for i, line in enumerate(lines) if '"fail_type": "' in line and not line.startswith("\t")
    )
    cut = "".join(lines[:at]) + lines[at][: lines[at].index('"fail_type"') + 15]
    new = tmp_path / "new.log"
    new.write_text(cut, encoding="utf-8")
    status, out = _diff(CLEAN, new, fmt)
    assert status in (1, 2), out
    assert "not read" in out.lower()
    if fmt == "json":
        data = json.loads(out)
        jsonschema.validate(data, json.loads(SCHEMA.read_text("utf-8")))
        assert data["exit_status"] == status and any("new run" in u for u in data["unread"])


def test_a_baseline_rank_missing_from_the_new_run_is_named_and_fails(tmp_path: Path) -> None:
    baseline = _folder(
        tmp_path / "base",
        {
            "dedicated_log_torch_trace_rank_0_aaaa.log": CLEAN,
            "dedicated_log_torch_trace_rank_1_bbbb.log": CLEAN,
        },
    )
    new = _folder(tmp_path / "new", {"dedicated_log_torch_trace_rank_0_aaaa.log": CLEAN})
    status, out = _diff(baseline, new, "text")
    assert status == 2, out
    assert "Not read: rank 1 of the baseline is not in the new run" in out


def test_ranks_left_out_by_the_user_s_own_pairs_are_their_choice(tmp_path: Path) -> None:
    """``--ranks 0:0`` compares rank 0 alone: the other ranks are named, not counted."""
    folder = _folder(
        tmp_path / "base",
        {
            "dedicated_log_torch_trace_rank_0_aaaa.log": CLEAN,
            "dedicated_log_torch_trace_rank_1_bbbb.log": CLEAN,
        },
    )
    result = run("diff", folder, folder, "--ranks", "0:0")
    assert result.returncode == 0, result.stdout
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert run("diff", folder, copy).returncode == 0


def test_two_programs_say_nothing_compared_once_and_list_no_regression() -> None:
    """Two unrelated runs: one line says nothing was compared; nothing of one program is
    a regression of the other (no "N regression(s)" after it), in any format."""
    unet, convnet = DATA / "corpus" / "unet", DATA / "corpus" / "convnet"
    result = run("diff", unet, convnet)
    assert result.returncode == 2, result.stdout
    assert result.stdout.lower().count("nothing compared") == 1, result.stdout
    assert "regression" not in result.stdout
    data = json.loads(run("diff", unet, convnet, "--format", "json").stdout)
    assert data["regressions"] == [] and data["exit_status"] == 2
