"""``run`` prints the program's command line without its secrets.

``sphinx-torchtrace run -- python train.py --token ghp_…`` says what it runs on stderr,
which a terminal's scrollback and a CI log keep: a token, a key, a password given on the
command line (or to ``env`` for the program's environment) is masked there as ``redact``
masks it in a log, and never printed elsewhere (an error naming the program).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: A GitHub token's shape: ``ghp_`` and 36 letters and digits, mixed (made up).
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
#: Values only their option's or variable's name says are secret.
PASSWORD = "hunter2-correct-horse"
API_KEY = "plain-words-key-value"
SECRETS = [TOKEN[4:], PASSWORD, API_KEY]


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "run", "--no-browser", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_run_masks_the_secrets_of_the_command_line_it_prints(tmp_path: Path) -> None:
    program = [sys.executable, "-c", "pass", "--token", TOKEN, f"--api-key={API_KEY}"]
    if os.name == "posix":  # the program's environment, given on the command line
        program = ["env", f"HF_TOKEN={PASSWORD}", *program]
    else:
        program += ["--password", PASSWORD]
    result = run("-o", tmp_path / "out", "--", *program, cwd=tmp_path)
    assert result.returncode == 2 and "wrote no trace log" in result.stderr  # no torch here
    running = next(line for line in result.stderr.splitlines() if " running " in line)
    assert "--token '[secret masked]'" in running, running
    assert "'--api-key=[secret masked]'" in running, running
    assert ("'HF_TOKEN=[secret masked]'" if os.name == "posix" else "--password '[") in running
    assert "-c pass" in running  # the rest of the line as given
    leaks = [s for s in SECRETS if s in result.stdout + result.stderr]
    assert leaks == []


def test_a_program_that_cannot_run_is_named_masked(tmp_path: Path) -> None:
    missing = tmp_path / "bin" / TOKEN  # a token where a program is named
    result = run("--", missing, "--token", TOKEN, cwd=tmp_path)
    assert result.returncode == 2 and "cannot run " in result.stderr, result.stderr
    assert TOKEN[4:] not in result.stdout + result.stderr
    assert "ghp_…[secret masked]" in result.stderr


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["python", "t.py", "--tokenizer", "bert"], "python t.py --tokenizer bert"),
        (["python", "t.py", "--epochs", "3"], "python t.py --epochs 3"),
        (["python", "t.py", "--password", "x"], "python t.py --password '[secret masked]'"),
        (["python", "t.py", "--url", "https://bob:pw1@h/x"], "--url https://bob:[secret masked]@h"),
        (["python", "t.py", f"--other={TOKEN}"], "--other=ghp_…[secret masked]"),
    ],
)
def test_what_is_masked_and_what_is_not(argv: list[str], shown: str) -> None:
    from sphinx_torchtrace.cli.commands.run import shown_command

    assert shown in shown_command(argv)
