"""The suite in the background: as ``nohup``, ``&`` or a CI runner starts it, SIGINT ignored.

A background job ignores SIGINT, and a process started so never installs Python's Ctrl+C
handler: the tests that send Ctrl+C to a command then waited for it in vain and left its
``serve`` running.  Here they run in a pytest started exactly so; they must pass and leave
no process of theirs behind.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _ignoring_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # what the shell gives a background job


def _left_running(marker: str) -> list[str]:
    """Command lines of live processes naming ``marker`` (this machine's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline:
                found.append(cmdline)
    return found


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="lists processes through /proc")
def test_signal_tests_pass_in_a_background_job(tmp_path: Path) -> None:
    basetemp = tmp_path / "inner"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--basetemp",
            str(basetemp),
            "tests/test_cli.py",
            "-k",
            "ctrl_c",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        preexec_fn=_ignoring_sigint,
        env={**os.environ, "TORCHTRACE_PROGRESS_S": "0"},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 passed" in result.stdout
    assert _left_running(str(basetemp)) == []


def test_a_run_in_the_background_prints_progress_lines_while_a_test_is_slow(
    tmp_path: Path,
) -> None:
    """Output to a file or pipe, one slow test: lines say how far the run is meanwhile."""
    (tmp_path / "test_slow.py").write_text(
        "import time\n\ndef test_quick():\n    pass\n\ndef test_slow():\n    time.sleep(4)\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_ignoring_sigint,
        env={**os.environ, "TORCHTRACE_PROGRESS_S": "1", "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("[progress] ")]
    assert len(lines) >= 2, result.stdout
    assert any(
        line.startswith("[progress] 1 of 2 tests done after ")
        and "running test_slow.py::test_slow (" in line
        for line in lines
    ), lines
