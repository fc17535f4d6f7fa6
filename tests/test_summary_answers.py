"""``summary`` answers what a user acts on (issue 53, point 3): each compile error and graph
break with torch's reason, its place in the user's code and its record (``log:line``),
each recompiled function with the guard that failed, the slowest compiles, and which log
it read; the same names and places in ``--json``; colour on a terminal only; no input
text raw on the console.

Every ``log:line`` named is checked against the log itself: ``show`` of it prints the
record that says what the answer says.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sphinx_torchtrace import cli
from sphinx_torchtrace.render.answers_text import wants_colour
from sphinx_torchtrace.trace.analyses.answers import answers
from sphinx_torchtrace.trace.analyses.glance import triage
from sphinx_torchtrace.trace.analyses.phases import compile_seconds
from sphinx_torchtrace.trace.inputs.loader import recorded_time
from sphinx_torchtrace.trace.inputs.loading import load_input
from sphinx_torchtrace.trace.inputs.opening import open_input
from sphinx_torchtrace.trace.reader import record_lines

from .conftest import DATA, SIMPLE_LOG
from .test_console_output import HOSTILE, assert_console_safe, broken_rank_folder, hostile_copy
from .tools.hostile_log import write_hostile_log

CORPUS = DATA / "corpus"
(BREAKS,) = (CORPUS / "graph_break_kinds").glob("*.log.gz")  # 26 breaks, 2 errors
(LIMIT,) = (CORPUS / "recompile_limit").glob("*.log.gz")  # 7 recompiles, 2 refused
RANKS = CORPUS / "ddp_4ranks"  # the same 2 graph breaks on each of 4 ranks
ERROR_PAIR = DATA / "captured" / "pairs" / "compile_error"
SGR = re.compile(r"\x1b\[[0-9;]*m")


def summary(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str]:
    """Run ``summary`` in this process (stdout is no terminal here): status and output."""
    status = cli.main(["summary", *map(str, args)])
    return status, capsys.readouterr().out


def summary_json(capsys: pytest.CaptureFixture[str], *args: str | Path) -> dict[str, Any]:
    status, out = summary(capsys, *args, "--json")
    assert status == 0
    data: dict[str, Any] = json.loads(out)
    return data


def record_text(log: str, line: int) -> str:
    """The record at ``log:line`` and its payload, as ``show`` prints it."""
    return "\n".join(record_lines(log, line))


def test_each_break_and_error_is_named_placed_and_located(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, text = summary(capsys, BREAKS, "--all")
    assert status == 0
    data = summary_json(capsys, BREAKS)
    failures = data["failures"]
    # every row of the overview's failures table, errors first
    assert len(failures) == data["distinct_errors"] + data["graph_break_reasons"] == 28
    assert [f["category"] for f in failures[:2]] == ["error", "error"]
    assert sum(f["count"] for f in failures if f["category"] == "graph_break") == 26
    for f in failures:
        place = f["place"]
        assert place and re.fullmatch(r"/home/user/project/graph_break_kinds\.py:\d+", place)
        (record,) = f["records"]
        assert record["log"] == str(BREAKS)
        said = record_text(record["log"], record["line"])
        file, line = place.rsplit(":", 1)  # the record says it: its header or its stack
        assert f["kind"] in said
        assert f"user code at {place}" in said or f'File "{file}", line {line}' in said
        # the text names the same kind, registry id, place and log:line
        assert f"{f['kind']} ({f['registry_id']})" in text
        assert f"      at {place}, " in text
        assert f"logged at {record['log']}:{record['line']}" in text
    explained = "Dynamo does not know how to trace builtin operator `print`"
    assert f"      why: {explained}" in text
    assert "compile error Unsupported: Unsupported context manager (GB0142); frame ran " in text


def test_lists_are_bounded_and_all_lists_them(capsys: pytest.CaptureFixture[str]) -> None:
    _, short = summary(capsys, BREAKS)
    _, everything = summary(capsys, BREAKS, "--all")
    assert "Compile errors and graph breaks (10 of 28; --all lists every one):" in short
    assert "  and 18 more (--all lists them; --json has every one)" in short
    assert short.count("      logged at ") == 10 and everything.count("      logged at ") == 28
    assert "Slowest compiles (5 of 55):" in short


def test_each_recompile_names_the_guard_that_failed(capsys: pytest.CaptureFixture[str]) -> None:
    data = summary_json(capsys, LIMIT)
    functions = {fn["function"]: fn for fn in data["recompiled"]}
    assert sum(len(fn["recompiles"]) for fn in functions.values()) == data["recompiles"] == 7
    assert sum(len(fn["refused"]) for fn in functions.values()) == data["limit_hits"] == 2
    dtype = functions["dtype_fn"]
    assert dtype["place"] == "/home/user/project/recompile_limit.py:13"
    (first,) = dtype["recompiles"]
    assert first["compile_id"] == "[0/1]" and first["against"] == "[0/0]"
    assert first["guard"] == "tensor 'x' dtype mismatch. expected Float, actual Double"
    assert first["guard_kind"] == "dtype"
    (refused,) = dtype["refused"]
    assert refused["refused"] == "limit"
    for fn in functions.values():
        for g in fn["recompiles"] + fn["refused"]:
            record = g["record"]
            assert g["guard"] in record_text(record["log"], record["line"])
    _, text = summary(capsys, LIMIT)
    assert "  dtype_fn at /home/user/project/recompile_limit.py:13: 2 versions, 1 recompile" in text
    assert (
        "      [0/1]: an input tensor has a different data type (dtype) (a guard of [0/0] "
        "failed): tensor 'x' dtype mismatch. expected Float, actual Double\n"
        f"          logged at {first['record']['log']}:{first['record']['line']}\n"
    ) in text
    assert "      [0/2]: no version made: the recompile limit was hit" in text


def test_the_slowest_compiles_with_their_metrics_record(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = summary_json(capsys, LIMIT)
    slowest = data["slowest_compiles"]
    assert len(slowest) == data["attempts"] == 12
    seconds = [s["seconds"] for s in slowest]
    assert seconds == sorted(seconds, reverse=True)
    assert sum(seconds) == pytest.approx(data["compile_seconds"], abs=1e-3)
    top = slowest[0]
    assert (top["compile_id"], top["function"]) == ("[0/0]", "dtype_fn")
    said = record_text(top["record"]["log"], top["record"]["line"])
    assert '"compilation_metrics"' in said and str(top["seconds"])[:4] in said
    _, text = summary(capsys, LIMIT)
    assert re.search(
        r"\n  +\d+\.\d\d s  \[0/0\] dtype_fn at /home/user/project/recompile_limit\.py:13, "
        rf"logged at {re.escape(top['record']['log'])}:{top['record']['line']}\n",
        text,
    )


def test_the_answer_follows_the_overview(capsys: pytest.CaptureFixture[str]) -> None:
    """The glance's figures, then failures, recompiles and compile times: the order of the
    overview's first screen."""
    _, text = summary(capsys, LIMIT)
    order = [
        "log:",
        "graph breaks:",
        "recompiles:",
        "errors:",
        "compile time:",
        "Compile errors and graph breaks:",
        "Recompiled functions:",
        "Slowest compiles",
        "by function:",
    ]
    where = [text.index(f"\n{label}" if i else label) for i, label in enumerate(order)]
    assert where == sorted(where) and where[0] == 0


def test_several_ranks_one_row_with_each_ranks_records(
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = summary_json(capsys, RANKS)
    assert len(data["log"]["read"]) == 4 and data["log"]["why"] == "the folder's 4 rank logs"
    for f in data["failures"]:
        assert {r["log"] for r in f["records"]} == set(data["log"]["read"])
        assert {c["rank"] for c in f["compile_ids"]} == {0, 1, 2, 3}
    assert sum(f["count"] for f in data["failures"]) == data["graph_breaks"] == 12
    _, text = summary(capsys, RANKS)
    assert "graph break ×8: Attempted to call function marked as skipped (GB0007)" in text
    assert "[1/0] on rank 0" in text


def test_a_folder_says_which_log_was_read_and_why(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (other,) = (ERROR_PAIR / "new").glob("*.log")
    for log in (SIMPLE_LOG, other):
        shutil.copy(log, tmp_path / log.name)
    data = summary_json(capsys, tmp_path)
    (chosen,) = data["log"]["read"]
    assert data["log"]["folder"] is True and data["log"]["path"] == str(tmp_path)
    assert data["log"]["why"] == "the newest of the folder's 2 logs by recorded time"
    assert Path(chosen).parent == tmp_path and data["not_shown"] != [chosen]
    _, text = summary(capsys, tmp_path)
    lines = text.splitlines()
    assert (
        lines[0]
        == f"log:            {tmp_path}: the newest of the folder's 2 logs by recorded time"
    )
    assert lines[1] == f"                read {chosen}"
    assert lines[2].startswith("not shown:      1 other log(s)")
    named = summary_json(capsys, SIMPLE_LOG)["log"]
    assert named == {
        "path": str(SIMPLE_LOG),
        "read": [str(SIMPLE_LOG)],
        "folder": False,
        "why": "the file named",
    }
    _, text = summary(capsys, SIMPLE_LOG)
    assert text.startswith(f"log:            {SIMPLE_LOG}\nranks:")
    text_log = DATA / "captured" / "torch_logs" / "plus_dynamo.log"
    _, text = summary(capsys, text_log)
    why = "a TORCH_LOGS text log: what its lines say, no compilation metrics"
    assert text.startswith(f"log:            {text_log} ({why})\nranks:")


def test_hostile_names_reasons_and_places_are_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A function name holding every character a console must not receive, and a log whose
    graph-break reason, failure, function and file names break lines and hold markup:
    each shown escaped, in text and JSON, coloured or not, and no line starts with it."""
    (log,) = (ERROR_PAIR / "new").glob("*.log")
    renamed = hostile_copy(log, tmp_path / "renamed" / log.name)
    data = summary_json(capsys, renamed)
    assert HOSTILE in {s["function"] for s in data["slowest_compiles"]}
    (tmp_path / "hostile").mkdir()
    hostile = write_hostile_log(tmp_path / "hostile")
    data = summary_json(capsys, hostile.path)
    said = json.dumps(data)
    for field in ("graph_break_reason", "co_name", "fail_location"):
        assert hostile.markers[field] in said, field
    for path in (renamed, hostile.path):
        for args in ((path,), (path, "--all"), (path, "--json")):
            status, out = summary(capsys, *args)
            assert status == 0
            assert_console_safe(out)
            assert not any(line.startswith("MARKER_") for line in out.split("\n"))
        forced = _run(path, "--all", env={"FORCE_COLOR": "1"})
        assert SGR.search(forced.stdout)  # colour asked for, and only our codes are raw
        assert_console_safe(SGR.sub("", forced.stdout))
    _, text = summary(capsys, renamed, "--all")
    assert "\\x0a::error file=conf.py" in text  # the name, escaped
    _, text = summary(capsys, hostile.path, "--all")
    assert hostile.markers["co_name"] in text and hostile.markers["fail_location"] in text


def _run(*args: str | Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**clean, **env},
    )


def _on_a_terminal(*args: str | Path, env: dict[str, str]) -> str:
    """``summary``'s stdout when it is a terminal (a pseudo-terminal), as a user sees it."""
    master, slave = pty.openpty()
    clean = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    process = subprocess.Popen(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", *map(str, args)],
        stdout=slave,
        stderr=subprocess.DEVNULL,
        env={**clean, "TERM": "xterm", **env},
    )
    os.close(slave)
    screen = b""
    while True:
        try:
            piece = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not piece:
            break
        screen += piece
    os.close(master)
    assert process.wait(timeout=300) == 0
    return screen.decode("utf-8", "replace")


def test_colour_on_a_terminal_only(capsys: pytest.CaptureFixture[str]) -> None:
    _, piped = summary(capsys, LIMIT)
    assert "\x1b" not in piped
    assert "\x1b" not in _run(LIMIT, env={}).stdout
    screen = _on_a_terminal(LIMIT, env={})
    assert "\x1b[1mRecompiled functions\x1b[0m" in screen
    assert "\x1b[31mcompile error\x1b[0m" in screen
    assert SGR.sub("", screen).replace("\r\n", "\n") == piped  # the same words
    assert "\x1b" not in _on_a_terminal(LIMIT, env={"NO_COLOR": "1"})
    assert "\x1b" not in _on_a_terminal(LIMIT, env={"NO_COLOR": "1", "FORCE_COLOR": "1"})
    assert "\x1b" not in _run(LIMIT, "--json", env={"FORCE_COLOR": "1"}).stdout


@pytest.mark.parametrize(
    ("tty", "env", "colour"),
    [
        (True, {}, True),
        (False, {}, False),
        (True, {"NO_COLOR": "1"}, False),
        (True, {"NO_COLOR": ""}, True),  # empty: not set, as no-color.org says
        (False, {"FORCE_COLOR": "1"}, True),
        (False, {"FORCE_COLOR": ""}, False),
        (True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
        (True, {"TERM": "dumb"}, False),
    ],
)
def test_colour_conventions(tty: bool, env: dict[str, str], colour: bool) -> None:
    assert wants_colour(tty, env) is colour


#: Corpus traces of every kind of answer: errors raised and suppressed, chained breaks,
#: restarts, recompiles refused past the limit, several ranks, a folder of two runs.
CONSISTENT = (
    "fullgraph_failures",
    "recompile_limit",
    "automatic_dynamic",
    "optimizer_compile",
    "data_dependent",
    "custom_ops",
    "failures_raised_suppressed",
    "chained_break_loop",
    "explain",
    "decode_recompile_limit",
    "ddp_4ranks",
    "two_runs_one_folder",
)


@pytest.mark.parametrize("name", CONSISTENT)
def test_the_answers_add_up_to_the_figures_and_point_at_records(name: str) -> None:
    """Each list says which of what the figures count, no more and no fewer, and each
    ``log:line`` is a record's first line (the line ``show`` takes), in a log read."""
    path = str(CORPUS / name)
    trace = load_input(open_input(path)).trace
    t = triage(trace)
    found = answers(trace, path)
    by_category: dict[str, int] = {}
    for f in found.failures:
        by_category[f.category] = by_category.get(f.category, 0) + f.count
        assert f.count == len(f.records) and f.compiles
    assert by_category.get("graph_break", 0) == t.graph_breaks
    assert by_category.get("error", 0) == t.errors
    assert by_category.get("restart", 0) == t.restarts
    assert sum(len(fn.recompiles) for fn in found.recompiled) == t.recompiles
    refused = sum(len(fn.refused) for fn in found.recompiled)
    assert refused == len(t.limit_hits) + len(t.error_on_recompile)
    timed = sum(compile_seconds(c) is not None for r in trace.ranks for c in r.compiles)
    assert len(found.slowest) == timed
    assert [s.seconds for s in found.slowest] == sorted(
        (s.seconds for s in found.slowest), reverse=True
    )
    assert found.log.logs == [r.path for r in trace.ranks]
    records = [r for f in found.failures for r in f.records]
    records += [g.record for fn in found.recompiled for g in fn.recompiles + fn.refused if g.record]
    records += [s.record for s in found.slowest if s.record]
    for record in records:
        assert record.log in found.log.logs
        first = record_lines(record.log, record.line, 0)[0]
        assert not first.startswith("\t") and "{" in first, (record, first)  # a record's head


def test_a_folder_of_two_runs_names_the_newest(capsys: pytest.CaptureFixture[str]) -> None:
    folder = CORPUS / "two_runs_one_folder"
    data = summary_json(capsys, folder)
    (read,) = data["log"]["read"]
    newest = max(folder.glob("*.log*"), key=recorded_time)
    assert read == str(newest) and len(data["not_shown"]) == 1
    assert data["log"]["why"] == "the newest of the folder's 2 logs by recorded time"


def test_a_hostile_log_name_in_a_folder_is_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    folder = broken_rank_folder(tmp_path)
    status, out = summary(capsys, folder)
    assert status == 0
    assert_console_safe(out)
    assert "                read " in out and "\\x1b[32mOK\\u202e\\x0a::error" in out
