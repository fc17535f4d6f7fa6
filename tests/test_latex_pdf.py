"""A PDF of a real trace: ``sphinx-build -M latexpdf`` works out of the box.

TeX stops on things trace text is full of (code lines of tens of thousands of
characters, characters no font sets up, line breaks inside inline literals), so
this builds the PDF for real with the TeX set CI installs.  Marked ``latexpdf``;
without ``latexmk`` it is skipped, except in CI, where it fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SHARED

pytestmark = pytest.mark.latexpdf

TRAINING_LOG = next((SHARED / "training").glob("*.log"))


def test_training_trace_makes_a_pdf(tmp_path: Path) -> None:
    if shutil.which("latexmk") is None:
        if os.environ.get("CI"):
            pytest.fail("latexmk is missing: .ci/run installs the TeX set")
        pytest.skip("latexmk is not installed")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(TRAINING_LOG, src / "train.log")
    (src / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\nproject = "pdf"\n')
    (src / "index.rst").write_text("Training\n========\n\n.. torchtrace:: train.log\n")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-M", "latexpdf", str(src), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        errors="replace",  # LaTeX echoes non-ASCII input in its own 8-bit encoding
        timeout=600,
    )
    pdf = tmp_path / "out" / "latex" / "pdf.pdf"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert pdf.stat().st_size > 100_000  # every frame, graph and kernel page is in it
