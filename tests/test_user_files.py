"""The user's files are safe: the extension removes, overwrites and ignores only what it wrote.

A project may keep its trace inside the generated folder (``torchtrace_generated_dir =
"traces"`` beside ``traces/run.log``) or a hand-written page there; earlier versions
deleted both and hid every new file from git with a ``*`` ignore rule.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .conftest import SIMPLE_LOG, SiteMaker, warnings_of

INDEX = (
    "Report\n======\n\n.. toctree::\n\n   traces/notes\n\n"
    ".. torchtrace:: traces/run.log\n   :name: run\n"
)
NOTES = "Notes\n=====\n\nWritten by hand.\n"


def _site(make_site: SiteMaker, tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "traces").mkdir(parents=True)
    shutil.copy(SIMPLE_LOG, src / "traces" / "run.log")
    (src / "traces" / "notes.rst").write_text(NOTES, encoding="utf-8")
    (src / "conf.py").write_text(
        'extensions = ["sphinx_torchtrace"]\ntorchtrace_generated_dir = "traces"\n',
        encoding="utf-8",
    )
    (src / "index.rst").write_text(INDEX, encoding="utf-8")
    return src


def test_a_trace_and_a_page_in_the_generated_folder_survive(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    src = _site(make_site, tmp_path)
    log = (src / "traces" / "run.log").read_bytes()
    app = make_site("", srcdir=src)
    assert (src / "traces" / "run.log").read_bytes() == log
    assert (src / "traces" / "notes.rst").read_text(encoding="utf-8") == NOTES
    assert (app.outdir / "traces" / "notes.html").exists()
    assert (src / "traces" / "run" / "index.rst").exists()
    # one warning names them; they are never deleted, also on the next build
    assert warnings_of(app).count("torchtrace.user_files") == 1
    assert "run.log" in warnings_of(app)
    app = make_site("", srcdir=src, freshenv=False)
    assert (src / "traces" / "run.log").read_bytes() == log
    assert (src / "traces" / "notes.rst").exists()


def test_only_generated_files_are_ignored_for_git(make_site: SiteMaker, tmp_path: Path) -> None:
    src = _site(make_site, tmp_path)
    make_site("", srcdir=src)
    rules = (src / "traces" / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "*" not in rules and "/run.log" not in rules and "/notes.rst" not in rules
    assert "/run/index.rst" in rules
    assert all(r.startswith(("#", "/")) for r in rules)  # each a path, never a wildcard


def test_pages_of_a_removed_trace_go_but_user_files_stay(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    src = _site(make_site, tmp_path)
    make_site("", srcdir=src)
    (src / "index.rst").write_text(INDEX.split(".. torchtrace::")[0], encoding="utf-8")
    make_site("", srcdir=src, freshenv=False)
    assert not (src / "traces" / "run").exists()
    assert (src / "traces" / "run.log").exists() and (src / "traces" / "notes.rst").exists()
    assert not (src / "traces" / ".gitignore").exists()
