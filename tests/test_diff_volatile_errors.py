"""Two runs' compile errors are matched by their message without what differs between any
two processes: the dead compile worker sidecar of the torch 2.14 and 2.15 captures fails
its compile in the cold and in the warm run, each time naming its own pid; ``diff`` says
neither "new compile error" nor "compile error fixed".  A message that really differs
still does."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sphinx_torchtrace.trace.volatile import message_key

from .conftest import DATA

CAPTURED = DATA / "captured"
PAIRS = [
    (CAPTURED / f"newer_torch_t{v}" / "cold.log", CAPTURED / f"newer_torch_t{v}" / "warm.log")
    for v in (214, 215)
]
_SIDECAR = re.compile(r'"fail_reason": "([^"]*sidecar \(pid (\d+)\)[^"]*)"')


def _diff(a: Path, b: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "diff", str(a), str(b), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def _ranks(a: Path, b: Path) -> list[dict[str, Any]]:
    ranks = json.loads(_diff(a, b, "--json").stdout)["ranks"]
    assert isinstance(ranks, list)
    return ranks


def _sidecar_failure(log: Path) -> tuple[str, str]:
    """The compile's failure as the log's compilation metrics record it, and its pid."""
    [found] = {m.groups() for m in _SIDECAR.finditer(log.read_text("utf-8"))}
    return found


@pytest.mark.parametrize(("cold", "warm"), PAIRS, ids=["t214", "t215"])
def test_the_same_failure_under_two_pids_is_one_error(cold: Path, warm: Path) -> None:
    (cold_reason, cold_pid), (warm_reason, warm_pid) = (
        _sidecar_failure(cold),
        _sidecar_failure(warm),
    )
    assert cold_pid != warm_pid  # each run's sidecar was its own process
    assert cold_reason.replace(cold_pid, warm_pid) == warm_reason
    for a, b in ((cold, warm), (warm, cold)):
        for rank in _ranks(a, b):
            assert rank["errors_new"] == [] and rank["errors_fixed"] == []
        text = _diff(a, b).stdout
        assert "new compile error" not in text and "compile error fixed" not in text, text


def test_a_failure_that_really_differs_is_still_new(tmp_path: Path) -> None:
    """A copy of the warm log whose sidecar died of another signal: that is another error."""
    cold, warm = PAIRS[0]
    changed = tmp_path / "warm.log"
    changed.write_text(warm.read_text("utf-8").replace("with code -9", "with code -11"), "utf-8")
    [rank] = _ranks(cold, changed)
    [new], [fixed] = rank["errors_new"], rank["errors_fixed"]
    assert "code -11" in json.dumps(new) and "code -9" in json.dumps(fixed)
    text = _diff(cold, changed).stdout
    assert "new compile error" in text and "compile error fixed" in text


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("worker (pid 7293) died", "worker (pid 8095) died"),
        ("rendezvous at localhost:29500 timed out", "rendezvous at localhost:29517 timed out"),
        (
            "connect to 10.0.0.2:41000 refused (port=41000)",
            "connect to 10.0.0.2:52013 refused (port=52013)",
        ),
        (
            "<function f at 0x7f4b583c9b20> is not traceable",
            "<function f at 0x7f00aa11bb22> is not traceable",
        ),
        ("cannot open /tmp/tmpab12cd34/out.so", "cannot open /tmp/tmpzz99yy88/out.so"),
        ("lock held in /tmp/pymp-1x2y3z4w/lock", "lock held in /tmp/pymp-9q8w7e6r/lock"),
    ],
)
def test_volatile_parts_of_a_message_are_left_out(one: str, other: str) -> None:
    assert message_key(one) == message_key(other)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("sidecar exited with code -9", "sidecar exited with code -11"),
        ("expected 1024 elements", "expected 2048 elements"),
        ("cannot open /home/user/a.so", "cannot open /home/user/b.so"),
    ],
)
def test_what_is_no_process_value_keeps_messages_apart(one: str, other: str) -> None:
    assert message_key(one) != message_key(other)
