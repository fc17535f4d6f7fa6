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


def _wait_for(log: Path, builds: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = log.read_text(encoding="utf-8", errors="replace").count(DONE)
        if done >= builds:
            return done
        time.sleep(0.5)
    return log.read_text(encoding="utf-8", errors="replace").count(DONE)


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
            [sys.executable, "-m", "sphinx_autobuild", "--host", "127.0.0.1", "--port", "0",
             str(src), str(tmp_path / "out")],
            stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        assert _wait_for(log, 1, 120) == 1, log.read_text()
        time.sleep(3)
        index.write_text(index.read_text(encoding="utf-8") + "\nMore words.\n", "utf-8")
        assert _wait_for(log, 2, 120) == 2, log.read_text()
        time.sleep(10)  # a loop would have started its next build by now
        assert log.read_text(encoding="utf-8").count(DONE) == 2, log.read_text()
    finally:
        process.terminate()
        process.wait(timeout=30)
