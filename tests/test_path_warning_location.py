"""A machine path left in what the extension published is warned at the user's own
directive line (the page and line of the ``.. torchtrace::`` whose pages hold it), not
at a generated page the user never wrote; the message names that page."""

from __future__ import annotations

from pathlib import Path

from sphinx.util.console import strip_colors

from .conftest import SiteMaker, warnings_of


def _path_warning(warnings: str) -> str:
    (line,) = [w for w in strip_colors(warnings).splitlines() if "[torchtrace.path]" in w]
    return line


def _directive_line(page: Path, directive: str) -> int:
    lines = page.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.startswith(f".. {directive}::"))


def test_a_path_warning_points_at_the_directive_that_made_the_page(
    make_site: SiteMaker,
) -> None:
    app = make_site("simple", confoverrides={"torchtrace_default_path_rewrites": False})
    line = _path_warning(warnings_of(app))
    index = Path(app.srcdir) / "index.rst"
    assert line.startswith(f"{index}:{_directive_line(index, 'torchtrace')}: WARNING: "), line
    assert "/home/user/" in line and "torchtrace_path_rewrites" in line
    assert "torchtrace/simple/" in line  # the generated page that holds the first one


def test_in_a_parallel_build_too(make_site: SiteMaker) -> None:
    """With ``-j`` pages are written by other processes and read back at the end."""
    page = (
        "Two\n===\n\nSome text.\n\n.. torchtrace:: "
        "@DATA@/shared/simple/dedicated_log_torch_trace_5aek85xk.log\n   :name: other\n"
    )
    app = make_site(
        "simple",
        parallel=2,
        pages={"index.rst": page},
        confoverrides={"torchtrace_default_path_rewrites": False},
    )
    line = _path_warning(warnings_of(app))
    index = Path(app.srcdir) / "index.rst"
    assert line.startswith(f"{index}:6: WARNING: "), line
