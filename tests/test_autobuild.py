"""Live preview: a real ``sphinx-autobuild`` process settles after an edit.

Every build used to rewrite the generated folder's manifest and ignore file with the
same text; the watcher saw a change and built again, for ever (18 builds in 25 s after
one edit).  Files the extension keeps are now written only when their content changes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import SIMPLE_LOG

pytest.importorskip("sphinx_autobuild")  # a test dependency: CI installs it

DONE = "build succeeded"


def _builds(log: Path) -> int:
    return log.read_text(encoding="utf-8", errors="replace").count(DONE)


def _settled(log: Path, at_least: int, quiet: float = 8.0, timeout: float = 150.0) -> int:
    """The number of builds once at least ``at_least`` ran and none started for ``quiet``
    seconds; fails if the builds never stop (a rebuild loop) within ``timeout``."""
    deadline = time.monotonic() + timeout
    count, since = _builds(log), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = _builds(log)
        if now != count:
            count, since = now, time.monotonic()
        elif count >= at_least and time.monotonic() - since >= quiet:
            return count
    raise AssertionError(f"sphinx-autobuild did not settle: {count} builds\n" + log.read_text())


def test_autobuild_settles_after_one_edit(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "traces").mkdir(parents=True)
    shutil.copy(SIMPLE_LOG, src / "traces" / "run.log")
    (src / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\n', encoding="utf-8")
    index = src / "index.rst"
    index.write_text("Report\n======\n\n.. torchtrace:: traces/run.log\n", encoding="utf-8")
    log = tmp_path / "autobuild.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sphinx_autobuild",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                str(src),
                str(tmp_path / "out"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        # older sphinx-autobuild releases (2024.2) see each file the first build made once
        # (a build that reads nothing) before they settle; 2025 releases do not
        first = _settled(log, 1)
        index.write_text(index.read_text(encoding="utf-8") + "\nMore words.\n", "utf-8")
        after = _settled(log, first + 1)
        assert after == first + 1, log.read_text()  # one build for one edit, then quiet
    finally:
        process.terminate()
        process.wait(timeout=30)
