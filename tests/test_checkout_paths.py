"""One path rule for every page: a checkout outside any home folder is published nowhere.

Self-hosted CI and containers check a project out under ``/builds``, ``/__w``,
``/workspace`` or ``/srv``, where no home-folder rule hides it, and the traces captured
there name their files by the checkout's path.  Every family is built from such a
checkout (a real ``git`` repository, its docs in ``docs/``, the traces relocated there
with their payloads' md5 kept right, as torch would have logged them) with ``-W``, and
no byte of the output may hold the checkout's path.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import DATA, SiteMaker, copy_testroot, warnings_of

_HASH = re.compile(r'"has_payload": "[0-9a-f]{32}"')
CAPTURED = DATA / "captured"


def relocate(src: Path, dst: Path, project: str, venv: str) -> None:
    """A copy of the log ``src`` as if captured in ``project`` with a virtualenv at
    ``venv``: every payload's md5 recomputed, as torch writes it."""
    lines = src.read_text(encoding="utf-8").split("\n")

    def moved(line: str) -> str:
        return line.replace("/home/user/.venv", venv).replace("/home/user/project", project)

    out: list[str] = []
    i = 0
    while i < len(lines):
        head = moved(lines[i])
        i += 1
        payload = []
        while i < len(lines) and lines[i].startswith("\t"):
            payload.append(moved(lines[i]))
            i += 1
        if _HASH.search(head):
            md5 = hashlib.md5("\n".join(p[1:] for p in payload).encode()).hexdigest()
            head = _HASH.sub(f'"has_payload": "{md5}"', head, count=1)
        out += [head, *payload]
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(out), encoding="utf-8")


def relocate_tree(src: Path, dst: Path, project: str, venv: str) -> None:
    for path in sorted(src.rglob("*")):
        if path.is_file():
            target = dst / path.relative_to(src)
            if path.suffix == ".log" and "torch_trace" in path.name:
                relocate(path, target, project, venv)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                text = path.read_text(encoding="utf-8")
                target.write_text(
                    text.replace("/home/user/.venv", venv).replace("/home/user/project", project),
                    encoding="utf-8",
                )


CAPTURE_SCRIPT = """\
import os
from pathlib import Path

out = Path(os.environ["TORCH_TRACE"])
out.mkdir(parents=True, exist_ok=True)
log = (Path(__file__).parent / "recorded.txt").read_text(encoding="utf-8")
(out / "dedicated_log_torch_trace_rank_0_abcd1234.log").write_text(log, encoding="utf-8")
"""

EVERY_FAMILY = """\
Checkout
========

.. torchtrace:: runs/pair/new
   :name: newrun

.. torchtrace-diff:: runs/pair/baseline runs/pair/new
   :name: cmp

.. torchtrace-trend:: runs/pair/baseline runs/pair/new
   :labels: before, after

.. torchtrace-capture:: scripts/capture.py
   :name: live

.. torchtrace:: runs/debug/torch_compile_debug
   :name: debug

.. torchtrace-captures::

.. torchtrace-graph-breaks::
"""


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout under ``__w/`` (GitHub's self-hosted runners), no home folder."""
    root = tmp_path / "__w" / "proj" / "proj"
    root.mkdir(parents=True)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", str(root)], check=True)
    else:  # what marks a repository's root
        (root / ".git").mkdir()
    return root


def _site(checkout: Path) -> Path:
    docs = copy_testroot("simple", checkout / "docs")
    venv = os.fspath(checkout / ".venv")
    pairs = CAPTURED / "pairs" / "graph_break_fixed"
    relocate_tree(pairs, docs / "runs" / "pair", os.fspath(checkout), venv)
    relocate_tree(
        CAPTURED / "debug_dir" / "training", docs / "runs" / "debug", os.fspath(checkout), venv
    )
    scripts = docs / "scripts"
    scripts.mkdir()
    (scripts / "capture.py").write_text(CAPTURE_SCRIPT, encoding="utf-8")
    # the capture's stacks and restart reasons name the script's own folder
    log = next((CAPTURED / "pairs" / "graph_break_fixed" / "baseline").glob("*.log"))
    relocate(log, scripts / "recorded.txt", os.fspath(scripts), venv)
    return docs


def _holding(outdir: Path, needles: list[str]) -> list[str]:
    found = []
    for path in sorted(outdir.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            if any(n.encode() in data for n in needles):
                found.append(path.relative_to(outdir).as_posix())
    return found


def test_every_family_from_a_checkout_outside_home_publishes_no_checkout_path(
    make_site: SiteMaker, checkout: Path
) -> None:
    docs = _site(checkout)
    app = make_site(
        "simple",
        "html",
        srcdir=docs,
        warningiserror=True,
        pages={"index.rst": EVERY_FAMILY},
        confoverrides={"exclude_patterns": ["_build", "runs", "scripts"]},
    )
    warnings = warnings_of(app)
    assert app.statuscode == 0, warnings
    assert "torchtrace.path" not in warnings
    outdir = Path(app.outdir)
    # every family made its pages (a family that made none would pass for nothing)
    for folder in ("newrun", "diff-cmp", "live", "debug"):
        assert list((outdir / "torchtrace").glob(f"{folder}/*.html")), folder
    assert "function(s) over 2 runs, oldest first: before, after" in (
        outdir / "index.html"
    ).read_text(encoding="utf-8")
    needles = sorted({os.fspath(checkout), os.path.realpath(checkout)})
    assert _holding(outdir, needles) == []
    # hidden as one rule says on every page: the checkout is <project>
    cmp = (outdir / "torchtrace" / "diff-cmp" / "frame-step.html").read_text(encoding="utf-8")
    assert "&lt;project&gt;/program.py" in cmp
    # a virtualenv inside the checkout stays <site-packages>, as on trace pages
    assert _holding(outdir, [".venv/lib"]) == []
