"""The caches never lie in what a build publishes.

``sphinx-build -b html docs out`` (no ``-d``, as many CI jobs run it) keeps Sphinx's
doctrees in ``out/.doctrees``, and a job that publishes ``out`` publishes that folder too.
The extension's caches hold a trace's text as the log has it (paths the pages rewrite,
whole captured logs), so such a build keeps them in the user's cache instead.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sphinx_torchtrace.sphinxext.cache_dirs import (
    CAPTURES,
    MODEL_CACHE,
    UNUSED_FOR,
    cache_home,
)

from .conftest import copy_testroot

#: A path of the bundled log that every page shows rewritten (``~/project``).
RAW = b"/home/user/"


def _build(src: Path, out: Path, builder: str = "html") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", builder, str(src), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _files_holding(folder: Path, data: bytes) -> list[str]:
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.is_file() and data in p.read_bytes()
    )


def _user_caches() -> set[Path]:
    """The model caches in the user's cache that hold something."""
    return {p for p in (cache_home() / "doctrees").glob("*/" + MODEL_CACHE) if any(p.iterdir())}


def test_a_build_without_a_doctree_folder_publishes_no_trace_text(tmp_path: Path) -> None:
    src = copy_testroot("simple", tmp_path / "src")
    out = tmp_path / "out"
    old = out / ".doctrees" / MODEL_CACHE  # as an earlier version left it
    old.mkdir(parents=True)
    (old / "stale.json").write_text('{"path": "/home/user/old"}', encoding="utf-8")
    before = _user_caches()
    done = _build(src, out)
    assert done.returncode == 0, done.stderr
    assert (out / ".doctrees" / "environment.pickle").is_file()  # Sphinx's, where it said
    assert not (out / ".doctrees" / MODEL_CACHE).exists()
    assert not list(out.rglob(CAPTURES))
    assert _files_holding(out, RAW) == []  # the pages and downloads show ~/...
    (cache,) = _user_caches() - before
    models = {p.name: p.stat().st_mtime_ns for p in cache.iterdir()}
    assert "stale.json" in models  # moved out of the output
    assert any(len(name.split("-")[0]) == 64 for name in models)  # this log's model
    again = _build(src, out)
    assert again.returncode == 0, again.stderr
    assert {p.name: p.stat().st_mtime_ns for p in cache.iterdir()} == models  # read back


def test_an_epub_without_a_doctree_folder_packs_none_of_the_caches(tmp_path: Path) -> None:
    src = copy_testroot("simple", tmp_path / "src")
    with (src / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write('\nproject = "traces"\ncopyright = "2026, us"\nversion = "1"\n')
    done = _build(src, tmp_path / "out", "epub")
    assert done.returncode == 0, done.stderr
    # Sphinx names its own doctrees there ("unknown mimetype"), never the extension's files
    unknown = [line for line in done.stderr.splitlines() if "unknown mimetype" in line]
    assert unknown and all(".doctree," in line or ".pickle," in line for line in unknown)


def test_a_folder_of_the_user_cache_unused_for_30_days_is_removed(tmp_path: Path) -> None:
    home = cache_home() / "doctrees"
    stale, recent, foreign = home / ("0" * 16), home / ("1" * 16), home / "not-ours"
    for folder in (stale, recent, foreign):
        (folder / MODEL_CACHE).mkdir(parents=True, exist_ok=True)
    for folder, age in ((stale, UNUSED_FOR + 3600), (recent, UNUSED_FOR - 3600)):
        mark = folder / ".last-used"
        mark.touch()
        then = time.time() - age
        os.utime(mark, (then, then))
    done = _build(copy_testroot("simple", tmp_path / "src"), tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert not stale.exists() and recent.is_dir() and foreign.is_dir()


def test_a_build_with_a_doctree_folder_keeps_its_caches_there(tmp_path: Path) -> None:
    src = copy_testroot("simple", tmp_path / "src")
    doctrees = tmp_path / "doctrees"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-q",
            "-b",
            "html",
            "-d",
            str(doctrees),
            str(src),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert any((doctrees / MODEL_CACHE).iterdir())
