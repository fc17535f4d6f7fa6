"""A throwaway Sphinx project around some traces: ``sphinx-torchtrace build``.

For someone who just wants to look, as with ``tlparse LOG``: one page per
trace in a temporary source folder (the logs linked, never copied), an
embedded configuration (furo when installed, else Sphinx's default theme),
Sphinx run in-process.  Page names are computed (``[a-z0-9-]``), so a log's
file name never reaches the generated rST.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from sphinx.util.console import color_terminal, nocolor

_CONF = """\
# Written by `sphinx-torchtrace build`: a throwaway project around the linked traces.
extensions = ["sphinx_torchtrace"]
project = "Compile report"
master_doc = "index"
exclude_patterns = ["_build", "traces"]
html_theme = {theme!r}
html_title = "Compile report"
"""


class StandaloneBuildError(Exception):
    """The build failed; the message is one line for the command's stderr."""


def build_site(paths: list[Path], out: Path, *, latest: bool = False) -> Path:
    """Build a report site of ``paths`` into ``out``; the path of its ``index.html``."""
    out = out.resolve()
    with tempfile.TemporaryDirectory(prefix="torchtrace-src-") as tmp:
        src = Path(tmp)
        (src / "conf.py").write_text(_CONF.format(theme=_theme()), encoding="utf-8")
        _write_pages(src, paths, latest)
        if not (sys.stderr.isatty() and color_terminal()):
            nocolor()  # colour codes only on a terminal, never in a file or a CI log
        try:
            app = Sphinx(
                str(src),
                str(src),
                str(out),
                str(out / ".doctrees"),
                "html",
                status=None,
                warning=sys.stderr,
                freshenv=True,
                verbosity=0,
            )
            app.build()
        except SphinxError as e:
            raise StandaloneBuildError(f"build failed: {e}") from None
        if app.statuscode:
            raise StandaloneBuildError("build failed (see the messages above)")
    return out / "index.html"


def _write_pages(src: Path, paths: list[Path], latest: bool) -> None:
    """``index.rst`` and one page per trace, each naming a link to its log."""
    traces = src / "traces"
    traces.mkdir()
    taken: set[str] = set()
    pages = []
    for i, path in enumerate(paths):
        name = _slug(path, taken)
        (traces / f"t{i}").symlink_to(path.resolve())
        option = "   :latest:\n" if latest else ""
        title = f"Trace {name}"
        directive = f".. torchtrace:: traces/t{i}\n   :name: {name}\n{option}"
        (src / f"{name}.rst").write_text(
            f"{title}\n{'=' * len(title)}\n\n{directive}", encoding="utf-8"
        )
        pages.append(name)
    toctree = "".join(f"   {p}\n" for p in pages)
    (src / "index.rst").write_text(
        f"Compile report\n==============\n\n.. toctree::\n   :maxdepth: 1\n\n{toctree}",
        encoding="utf-8",
    )


def _slug(path: Path, taken: set[str]) -> str:
    """A page name from the log's file name: ``[a-z0-9-]``, at most 40 characters, unique."""
    stem = re.sub(r"(\.log)?(\.gz)?$", "", path.resolve().name.lower())
    stem = stem.removeprefix("dedicated_log_torch_trace_")
    name = re.sub(r"[^a-z0-9]+", "-", stem).strip("-")[:40].strip("-")
    name = name if name and name[0].isalpha() else f"run-{name}".rstrip("-")
    base, n = name, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def _theme() -> str:
    return "furo" if importlib.util.find_spec("furo") is not None else "alabaster"
