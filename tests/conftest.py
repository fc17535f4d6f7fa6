"""Building real Sphinx projects with sphinx-torchtrace, through ``sphinx.testing``.

Test roots live in ``tests/roots/test-<name>``; their pages name logs as
``@DATA@/shared/...``, replaced on copy by the path from the page to
``tests/data``, so no log is duplicated and relative paths survive the copy.
Every site is built in its own temporary folder: the extension writes its
generated pages into the source folder.
"""

from __future__ import annotations

import os
import re
import shutil
import zlib
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from sphinx.testing.util import SphinxTestApp

pytest_plugins = ("sphinx.testing.fixtures", "tests.progress")

TESTS = Path(__file__).parent
DATA = TESTS / "data"
ROOTS = TESTS / "roots"
SHARED = DATA / "shared"
SIMPLE_LOG = SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
TEXT_SUFFIXES = (".rst", ".md", ".py", ".txt")


@pytest.fixture(scope="session", autouse=True)
def _own_cache_home(tmp_path_factory: pytest.TempPathFactory) -> None:
    """``sphinx-torchtrace build`` keeps its projects in ``$XDG_CACHE_HOME``: the tests'
    builds (and the commands they run) use a folder of their own, never the user's."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))


@pytest.fixture(scope="session")
def rootdir() -> Path:
    """Where ``@pytest.mark.sphinx(testroot=...)`` finds its roots."""
    return ROOTS


def copy_testroot(name: str, dest: Path) -> Path:
    """``tests/roots/test-<name>`` copied to ``dest``, ``@DATA@`` made relative to each page."""
    shutil.copytree(ROOTS / f"test-{name}", dest)
    for path in dest.rglob("*"):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            text = path.read_text(encoding="utf-8")
            if "@DATA@" in text:
                rel = Path(os.path.relpath(DATA, path.parent)).as_posix()
                path.write_text(text.replace("@DATA@", rel), encoding="utf-8")
    return dest


def write_page(srcdir: Path, name: str, text: str) -> Path:
    """A page written at test time; ``@DATA@`` works as in test roots."""
    path = srcdir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    rel = Path(os.path.relpath(DATA, path.parent)).as_posix()
    path.write_text(text.replace("@DATA@", rel), encoding="utf-8")
    return path


def page_words(path: Path) -> str:
    """A built HTML page's main content as a reader sees it: no markup, spaces collapsed."""
    html = path.read_text(encoding="utf-8")
    html = html[html.index('role="main"') :]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#8217;", "'")


def warnings_of(app: SphinxTestApp) -> str:
    return app.warning.getvalue()


def inventory(app: SphinxTestApp) -> dict[str, dict[str, str]]:
    """``objects.inv`` of an HTML build: ``{role: {name: uri}}``, read the way intersphinx does."""
    raw = (app.outdir / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    found: dict[str, dict[str, str]] = {}
    for line in zlib.decompress(raw[header_end:]).decode("utf-8").splitlines():
        # name domain:role priority uri dispname; names may hold spaces, roles do not
        name, rest = line.split(" torchtrace:", 1) if " torchtrace:" in line else (line, "")
        if not rest:
            continue
        role, _priority, uri, _dispname = rest.split(" ", 3)
        found.setdefault(role, {})[name] = uri
    return found


def generated_pages(app: SphinxTestApp, kind: str = "") -> list[str]:
    """Generated ``.rst`` pages (docnames) whose file name starts with ``kind``."""
    root = Path(app.srcdir) / app.config.torchtrace_generated_dir
    return sorted(
        p.relative_to(app.srcdir).with_suffix("").as_posix()
        for p in root.rglob("*.rst")
        if p.name.startswith(kind)
    )


SiteMaker = Callable[..., SphinxTestApp]

#: Every test site: warnings end in [torchtrace.<subtype>] (as from Sphinx 8 on by default),
#: and pages do not depend on whether torch (its graph-break registry) is installed.
QUIET: dict[str, Any] = {"show_warning_types": True, "torchtrace_graph_break_registry": False}


@pytest.fixture
def make_site(make_app: Callable[..., SphinxTestApp], tmp_path: Path) -> SiteMaker:
    """``make_site("simple", "html", pages={...}, **app_kwargs)``: a test root's fresh copy, built.

    ``srcdir=`` builds an existing copy again (incremental builds: pass
    ``freshenv=False``); ``pages`` adds or replaces pages before Sphinx starts.
    """
    counter = iter(range(1000))
    made: list[SphinxTestApp] = []

    def make(
        testroot: str,
        buildername: str = "html",
        *,
        build: bool = True,
        srcdir: Path | None = None,
        pages: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> SphinxTestApp:
        if srcdir is None:
            srcdir = copy_testroot(testroot, tmp_path / f"{testroot}-{next(counter)}")
        for name, text in (pages or {}).items():
            write_page(srcdir, name, text)
        kwargs.setdefault("freshenv", True)
        kwargs["confoverrides"] = {**QUIET, **kwargs.get("confoverrides", {})}
        for previous in made:  # one live app at a time, or the next one warns about nodes
            previous.cleanup()
        app = make_app(buildername, srcdir=srcdir, **kwargs)
        made.append(app)
        if build:
            app.build()
        return app

    return make


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., SphinxTestApp]:
    """``built_site("multi", "html")``: one build per (root, builder) for the whole session.

    For tests that only read a build's output; a test that builds again or edits
    sources uses ``make_site``.
    """
    apps: dict[tuple[str, str, int, str], SphinxTestApp] = {}

    def get(
        testroot: str,
        buildername: str = "html",
        parallel: int = 0,
        confoverrides: dict[str, Any] | None = None,
    ) -> SphinxTestApp:
        key = (testroot, buildername, parallel, repr(sorted((confoverrides or {}).items())))
        if key not in apps:
            name = f"{testroot}-{buildername}-j{parallel}-{len(apps)}"
            srcdir = copy_testroot(testroot, tmp_path_factory.mktemp("sites") / name)
            apps[key] = build_once(srcdir, buildername, parallel, confoverrides)
        return apps[key]

    return get


def build_once(
    srcdir: Path,
    buildername: str = "html",
    parallel: int = 0,
    confoverrides: dict[str, Any] | None = None,
) -> SphinxTestApp:
    """A fresh build of ``srcdir`` for tests that only read its output (a session or module
    fixture's site): built, then its nodes and roles unregistered."""
    app = SphinxTestApp(
        buildername,
        srcdir=srcdir,
        freshenv=True,
        parallel=parallel,
        confoverrides={**QUIET, **(confoverrides or {})},
        status=StringIO(),
        warning=StringIO(),
    )
    try:
        app.build()
    finally:
        # unregister its nodes and roles now, or the next app warns about them;
        # the output, env and config stay readable
        app.cleanup()
    return app


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The corpus sites first: each builds every bundled trace for minutes, so started last
    it kept one worker busy long after the other ran out of tests (12 minutes of a 30-minute
    suite).  The order of everything else is kept; every worker sorts alike."""
    items.sort(key=lambda item: item.get_closest_marker("corpus") is None)
