"""Input folders are data: Sphinx never publishes or walks what a directive reads.

The guides keep traces in the docs' source folder (``traces/run``).  An attached
trace, debug or text-log folder holding ``*.rst`` or ``*.md`` (a page with a
``<script>``, a link to a file outside the project, a link out of the folder,
a ``loop -> /`` link) must publish none of it, on every build, and must not
make Sphinx believe the configuration changed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from sphinx.util.matching import compile_matchers

from sphinx_torchtrace.sphinxext.input_guard import exclusion_pattern

from .conftest import DATA, SIMPLE_LOG, SiteMaker, warnings_of
from .test_sphinx_incremental import read_docnames

DEBUG_DIR = DATA / "captured" / "debug_dir" / "inference" / "torch_compile_debug"

CONF = 'extensions = ["sphinx_torchtrace"]\n'
SECRET = "SECRET-9f3a1c-value"


def _hostile_folder(folder: Path, outside: Path) -> None:
    """An attached folder as an attacker would send it."""
    (folder / "evil.rst").write_text(
        "Evil\n====\n\n.. raw:: html\n\n   <script>alert(1)</script>\n", encoding="utf-8"
    )
    (folder / "notes.md").write_text("# Notes\n\nfrom the attacker\n", encoding="utf-8")
    (outside / "secret.txt").write_text(SECRET + "\n", encoding="utf-8")
    (outside / "pages").mkdir()
    (outside / "pages" / "outside.rst").write_text(
        f"Outside\n=======\n\n{SECRET}\n", encoding="utf-8"
    )
    os.symlink(outside / "secret.txt", folder / "README.rst")
    os.symlink(outside / "pages", folder / "escape")
    os.symlink("/", folder / "loop")


def _project(tmp_path: Path, index: str) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "index.rst").write_text(index, encoding="utf-8")
    return src


def _published(outdir: Path) -> str:
    """Every text file of the output (HTML, sources, search index) joined."""
    return "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in outdir.rglob("*")
        if p.is_file() and p.suffix in (".html", ".txt", ".js")
    )


def test_recommended_layout_publishes_nothing_of_an_attached_folder(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    src = _project(tmp_path, "Report\n======\n\n.. torchtrace:: traces/run\n")
    run = src / "traces" / "run"
    run.mkdir(parents=True)
    shutil.copy(SIMPLE_LOG, run / "rank_0.log")
    outside = tmp_path / "outside"
    outside.mkdir()
    _hostile_folder(run, outside)

    app = make_site("", srcdir=src)  # a walk of "loop -> /" would never end
    out = Path(app.outdir)
    assert not list(out.rglob("evil*")) and not list(out.rglob("notes*"))
    assert not list(out.rglob("README*")) and not list(out.rglob("outside*"))
    published = _published(out)
    assert SECRET not in published and "alert(1)" not in published
    assert (out / "torchtrace" / "run" / "index.html").exists()  # the trace itself is there
    # one warning names the folder and says its pages are not published
    warnings = warnings_of(app)
    assert warnings.count("torchtrace.input_sources") == 1, warnings
    assert "traces/run" in warnings and "not published" in warnings

    # the next build: nothing re-read, no "configuration changed", still nothing published
    again = make_site("", srcdir=src, freshenv=False, build=False)
    assert read_docnames(again) == []
    assert "exclude_patterns" not in again._status.getvalue()  # not "configuration changed"
    assert not list(Path(again.outdir).rglob("evil*"))


def test_every_path_a_directive_names_is_kept_out(make_site: SiteMaker, tmp_path: Path) -> None:
    """The :with: paths of a trace and both sides of a comparison, in rST and MyST pages."""
    src = _project(
        tmp_path,
        "Report\n======\n\n.. toctree::\n\n   md\n\n"
        ".. torchtrace:: a/run.log\n   :with: extra\n\n"
        ".. torchtrace-diff:: base new\n",
    )
    (src / "conf.py").write_text(CONF.replace('"]', '", "myst_parser"]'), encoding="utf-8")
    (src / "md.md").write_text("# MyST\n\n```{torchtrace} myst\n```\n", encoding="utf-8")
    for folder in ("a", "extra", "base", "new", "myst"):
        (src / folder).mkdir()
        (src / folder / "page.rst").write_text("Page\n====\n\nleaked\n", encoding="utf-8")
    shutil.copy(SIMPLE_LOG, src / "a" / "run.log")
    for folder in ("base", "new", "myst"):
        shutil.copy(SIMPLE_LOG, src / folder / "rank_0.log")
    app = make_site("", srcdir=src)
    out = Path(app.outdir)
    for folder in ("extra", "base", "new", "myst"):
        assert not (out / folder / "page.html").exists(), folder
    # a folder that only holds a named file is the user's: its pages are published
    assert (out / "a" / "page.html").exists()


def test_a_page_found_only_through_a_link_is_guarded_too(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A page reached through a link out of the source folder (which the light scan does not
    follow, Sphinx does) names a folder: its documents are dropped once Sphinx found them."""
    src = _project(tmp_path, "Report\n======\n\n.. toctree::\n\n   linked/report\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "report.rst").write_text(
        "Linked\n======\n\n.. torchtrace:: ../traces/run\n", encoding="utf-8"
    )
    os.symlink(elsewhere, src / "linked")
    run = src / "traces" / "run"
    run.mkdir(parents=True)
    shutil.copy(SIMPLE_LOG, run / "rank_0.log")
    (run / "evil.rst").write_text("Evil\n====\n\nleaked\n", encoding="utf-8")
    app = make_site("", srcdir=src)
    out = Path(app.outdir)
    assert (out / "linked" / "report.html").exists()
    assert not (out / "traces" / "run" / "evil.html").exists()
    assert "torchtrace.input_sources" in warnings_of(app)


def test_a_folder_holding_the_generated_pages_is_left_to_sphinx(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """``torchtrace_generated_dir = "traces"`` and ``.. torchtrace:: traces``: the pages live
    in the input folder, so it cannot be excluded (the user's choice)."""
    src = _project(tmp_path, "Report\n======\n\n.. torchtrace:: traces\n   :name: run\n")
    (src / "conf.py").write_text(CONF + 'torchtrace_generated_dir = "traces"\n', encoding="utf-8")
    (src / "traces").mkdir()
    shutil.copy(SIMPLE_LOG, src / "traces" / "rank_0.log")
    app = make_site("", srcdir=src)
    assert (Path(app.outdir) / "traces" / "run" / "index.html").exists()


@pytest.mark.parametrize(
    "name",
    ["traces/run", "a b/c'd", "t*/x", "what?", "x[0]/y", "ранг/日志", "e\u0301", "[!a]", "**"],
)
def test_exclusion_pattern_matches_exactly_its_path(name: str) -> None:
    import unicodedata

    (match,) = compile_matchers([exclusion_pattern(name)])
    assert match(unicodedata.normalize("NFC", name))
    assert not match(name + "/x") and not match("other/" + name)
    if "*" in name or "?" in name:
        assert not match(name.replace("*", "a").replace("?", "b"))


def test_debug_folder_is_kept_out(make_site: SiteMaker, tmp_path: Path) -> None:
    src = _project(tmp_path, "Report\n======\n\n.. torchtrace:: dbg\n")
    shutil.copytree(DEBUG_DIR, src / "dbg", symlinks=True)
    (src / "dbg" / "evil.rst").write_text("Evil\n====\n\nleaked\n", encoding="utf-8")
    app = make_site("", srcdir=src)
    assert not list(Path(app.outdir).rglob("evil.html"))


def test_a_machine_path_is_named_as_the_likely_mistake(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """``TORCH_TRACE=/tmp/trace`` invites ``.. torchtrace:: /tmp/trace``: a leading ``/``
    starts at the source folder, and the warning says so, and that the path exists."""
    outside = tmp_path / "trace"
    outside.mkdir()
    shutil.copy(SIMPLE_LOG, outside / "rank_0.log")
    src = _project(tmp_path, f"Report\n======\n\n.. torchtrace:: {outside}\n")
    app = make_site("", srcdir=src)
    warnings = warnings_of(app)
    assert "torchtrace.read" in warnings and "a leading / means the source folder" in warnings
    assert "exists on this machine, outside the docs: copy it into the source folder" in warnings
