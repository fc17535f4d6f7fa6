"""No trace, no report: an input that holds no trace record is refused, never shown as clean.

An empty file, an empty folder, a file that is not a trace and a folder of TORCH_LOGS text
logs each once built a report reading "Compile errors: none" (exit 0), which a CI step
whose capture never happened took for an all-clear.  ``build`` now refuses each with exit
2 and the words ``summary`` says; in a Sphinx build each is one ``torchtrace.read``
warning at the directive's own line, with no pages.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from .conftest import DATA, SiteMaker, copy_testroot, warnings_of
from .test_share import run

TEXT_LOGS = DATA / "captured" / "torch_logs"


def _inputs(folder: Path) -> dict[str, Path]:
    """Each kind of input that holds no trace record, made under ``folder``."""
    (folder / "emptydir").mkdir(parents=True)
    (folder / "empty.log").write_bytes(b"")
    (folder / "notes.txt").write_text("hello world\nnothing to see\n", encoding="utf-8")
    logs = folder / "textlogs"
    logs.mkdir()
    for name in ("options.log", "ranks.log"):
        shutil.copy(TEXT_LOGS / name, logs / name)
    return {
        "empty-file": folder / "empty.log",
        "empty-folder": folder / "emptydir",
        "not-a-trace": folder / "notes.txt",
        "text-logs": logs,
    }


@pytest.mark.parametrize("kind", ["empty-file", "empty-folder", "not-a-trace", "text-logs"])
def test_build_refuses_what_summary_refuses_with_its_words(tmp_path: Path, kind: str) -> None:
    path = _inputs(tmp_path / "in")[kind].relative_to(tmp_path)
    summary = run("summary", path, cwd=tmp_path)
    build = run("build", path, "-o", "site", "--no-browser", cwd=tmp_path)
    assert summary.returncode == 2 and build.returncode == 2, build.stderr
    said = summary.stderr.strip().splitlines()[-1]
    assert said.startswith("sphinx-torchtrace: error: ")
    assert build.stderr.strip().splitlines()[-1] == said  # the same words
    assert "Compile errors: none" not in build.stdout + build.stderr
    assert build.stdout.strip() == ""  # no report to open
    # the warning names the user's path, not a line of the page the command wrote
    warned = [line for line in build.stderr.splitlines() if "WARNING" in line]
    assert len(warned) == 1
    assert warned[0].startswith(f"{path}: WARNING: "), warned


def test_text_log_folder_says_which_file_to_name(tmp_path: Path) -> None:
    path = _inputs(tmp_path / "in")["text-logs"]
    result = run("summary", path, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"sphinx-torchtrace: error: {path}: no TORCH_TRACE records found; it holds "
        "TORCH_LOGS text logs ('options.log', 'ranks.log'): name one of them to read it "
        "as a text log"
    )
    named = run("summary", path / "options.log", cwd=tmp_path)
    assert named.returncode == 0, named.stderr  # as the hint says: read as a text log


def test_sphinx_build_warns_once_at_each_directive_and_shows_no_report(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    srcdir = copy_testroot("simple", tmp_path / "site")
    made = _inputs(srcdir / "in")
    page = "Runs\n====\n\nText.\n\n"
    lines: dict[str, int] = {}
    for kind, path in made.items():
        lines[kind] = page.count("\n") + 1
        page += f".. torchtrace:: {path.relative_to(srcdir).as_posix()}\n   :name: {kind}\n\n"
    app = make_site(
        "simple",
        "html",
        srcdir=srcdir,
        pages={"index.rst": page},
        confoverrides={"exclude_patterns": ["_build", "in"]},
    )
    warnings = [w for w in warnings_of(app).splitlines() if "WARNING" in w]
    assert len(warnings) == 4, warnings  # nothing else: no line of a log, no page
    for kind, line in lines.items():
        name = made[kind].name
        [said] = [w for w in warnings if f"in/{name}" in w]
        assert re.search(
            rf"index\.rst:{line}: WARNING: .*(no TORCH_TRACE records found|holds no log file)",
            said,
        ), said
        assert "[torchtrace.read]" in said
        assert not (srcdir / "torchtrace" / kind).exists()  # no report of nothing
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "Compile errors" not in html and "at a glance" not in html
