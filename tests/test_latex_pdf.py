"""A PDF of a real trace: ``sphinx-build -M latexpdf`` works out of the box.

TeX stops on things trace text is full of (code lines of tens of thousands of
characters, characters no font sets up, line breaks inside inline literals), so
this builds the PDF for real with the TeX set CI installs.  Marked ``latexpdf``;
without ``latexmk`` it is skipped, except in CI, where it fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SHARED

pytestmark = pytest.mark.latexpdf

TRAINING_LOG = next((SHARED / "training").glob("*.log"))
CORPUS = SHARED.parent / "corpus"
#: The two largest logs of the corpus (27 and 25 MB of text, 82 and 50 compile ids):
#: thousands of lines of generated code per frame, which TeX cannot hold whole.
LARGEST = [
    next((CORPUS / "many_functions").glob("*.log.gz")),
    next((CORPUS / "big_many_models").glob("*.log.gz")),
]


def _pdf(tmp_path: Path, log: Path) -> int:
    """Build a PDF of one log with latexmk; its page count, from TeX's own log."""
    if shutil.which("latexmk") is None:
        if os.environ.get("CI"):
            pytest.fail("latexmk is missing: .ci/run installs the TeX set")
        pytest.skip("latexmk is not installed")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(log, src / f"trace{''.join(log.suffixes)}")
    (src / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\nproject = "pdf"\n')
    (src / "index.rst").write_text(
        f"Trace\n=====\n\n.. torchtrace:: trace{''.join(log.suffixes)}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-M", "latexpdf", str(src), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        errors="replace",  # LaTeX echoes non-ASCII input in its own 8-bit encoding
        timeout=900,
    )
    latex = tmp_path / "out" / "latex"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (latex / "pdf.pdf").stat().st_size > 100_000  # every page of the site is in it
    said = (latex / "pdf.log").read_text(encoding="latin-1")
    written = re.search(r"Output written on pdf\.pdf \((\d+) pages", said)
    assert written, said[-2000:]
    return int(written.group(1))


def test_training_trace_makes_a_pdf(tmp_path: Path) -> None:
    assert _pdf(tmp_path, TRAINING_LOG) > 20


@pytest.mark.parametrize("log", LARGEST, ids=lambda p: p.parent.name)
def test_the_largest_traces_make_a_pdf_of_sane_length(tmp_path: Path, log: Path) -> None:
    """Long code is printed as an excerpt with a note (the whole text is in the HTML build
    and the log): about a thousand pages for a 25 MB log, not tens of thousands, and TeX's
    memory is never exceeded."""
    pages = _pdf(tmp_path, log)
    assert 100 < pages < 3000, pages
