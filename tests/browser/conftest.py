"""One test site, built once, served on 127.0.0.1, and a headless Chromium to read it.

The site is built by ``sphinx-build`` in a child process (furo theme) from real logs
copied into its source folder: ``prov`` (Inductor provenance), ``train`` (graph breaks,
empty and missing compiles) and ``err`` (compile errors), plus ``prose.rst``, a page of
text with ``:torchtrace:frame:`` roles of every status and a provenance block.

Without Playwright or a Chromium the tests skip, saying why; under ``CI=true`` they fail
instead, so a CI run can never pass without having looked at a page.  Chromium is the
system's (``/usr/bin/chromium``, or ``$TORCHTRACE_CHROMIUM``), else Playwright's own.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import importlib.util
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from sphinx_torchtrace.site.plan import FramePlan, TracePlan, plan_trace
from sphinx_torchtrace.trace import load_trace

from ..conftest import SHARED

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "tests" / ".artifacts" / "screenshots"
LOGS = {
    "prov": SHARED / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log",
    "train": SHARED / "training" / "dedicated_log_torch_trace_ukjvghtw.log",
    "err": SHARED / "compile_error" / "dedicated_log_torch_trace_fqqib31t.log",
}
#: Frames named by roles on the prose page, one of each status.
PROSE_FRAMES = [
    "train/[0/0]",
    "train/[1/0]",
    "train/[4/0]",
    "train/[-/-]",
    "err/[1/0]",
    "err/[3/0]",
]
PROVENANCE_FRAME = "prov/[0/0]"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

CONF_PY = """\
project = "browser tests"
extensions = ["sphinx_torchtrace"]
html_theme = "furo"
exclude_patterns = ["_build"]
"""
INDEX_RST = """\
Browser tests
=============

.. toctree::

   prose

.. torchtrace:: logs/prov.log
   :name: prov

.. torchtrace:: logs/train.log
   :name: train

.. torchtrace:: logs/err.log
   :name: err
"""
PROSE_RST = """\
Prose
=====

The first step compiles as :torchtrace:frame:`train/[0/0]`, then the optimizer step breaks
at :torchtrace:frame:`train/[1/0]` (its second attempt empty); :torchtrace:frame:`train/[4/0]`
holds no operation and :torchtrace:frame:`train/[-/-]` logged no metrics.  A failing model
stops at :torchtrace:frame:`err/[1/0]` and breaks at :torchtrace:frame:`err/[3/0]`.

Provenance
----------

.. torchtrace-provenance:: prov [0/0]
"""


@functools.cache
def planned(label: str) -> TracePlan:
    """The model's plan of one of the site's traces: the truth the pages are checked against."""
    return plan_trace(label, load_trace(LOGS[label]), "torchtrace")


def frame_named(name: str) -> FramePlan:
    label = name.split("/", 1)[0]
    return next(f for f in planned(label).frames if f.name == name)


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under CI: a CI run must not pass without the browser tests."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and the browser tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class Site:
    srcdir: Path
    html: Path
    url: str  # ends with "/"

    def page_url(self, docname: str, query: str = "") -> str:
        return f"{self.url}{docname}.html{query}"


@pytest.fixture(scope="session")
def playwright_api() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Python package 'playwright' is not installed (pip install playwright)")
    manager = sync_playwright().start()
    try:
        yield manager
    finally:
        manager.stop()


def chromium_executable(playwright: Any) -> str | None:
    """The system's Chromium (or ``$TORCHTRACE_CHROMIUM``), else Playwright's download."""
    configured = os.environ.get("TORCHTRACE_CHROMIUM")
    if configured:
        return configured
    for name in CHROMIUM_CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    try:
        bundled = playwright.chromium.executable_path
    except Exception:  # noqa: BLE001 - no download is as good as a missing one
        return None
    return bundled if bundled and Path(bundled).exists() else None


@pytest.fixture(scope="session")
def browser(playwright_api: Any) -> Iterator[Browser]:
    executable = chromium_executable(playwright_api)
    if executable is None:
        unavailable("no Chromium found (apt-get install chromium, or set TORCHTRACE_CHROMIUM)")
    try:
        launched = playwright_api.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
    except Exception as error:  # noqa: BLE001 - any launch failure means no browser
        unavailable(f"Chromium at {executable} does not start: {error}")
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory, browser: Browser) -> Iterator[Site]:
    """The test site, built once by sphinx-build, served over HTTP for the whole session.

    Asks for the browser first so that a run without one skips before the build.
    """
    if importlib.util.find_spec("furo") is None:
        unavailable("the furo theme is not installed (pip install furo)")
    root = tmp_path_factory.mktemp("browser-site")
    srcdir = root / "src"
    (srcdir / "logs").mkdir(parents=True)
    for label, log in LOGS.items():
        shutil.copyfile(log, srcdir / "logs" / f"{label}.log")
    (srcdir / "conf.py").write_text(CONF_PY, encoding="utf-8")
    (srcdir / "index.rst").write_text(INDEX_RST, encoding="utf-8")
    (srcdir / "prose.rst").write_text(PROSE_RST, encoding="utf-8")
    with served_site(srcdir, root / "html", "browser-site") as site:
        yield site


@contextlib.contextmanager
def served_site(srcdir: Path, html: Path, name: str) -> Iterator[Site]:
    """``sphinx-build -b html`` of ``srcdir`` in a child process, served on 127.0.0.1 while
    the context is open (the browser tests' sites)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(srcdir), str(html)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, f"sphinx-build failed:\n{built.stdout}\n{built.stderr}"
    handler = functools.partial(_QuietHandler, directory=str(html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield Site(srcdir=srcdir, html=html, url=f"http://127.0.0.1:{server.server_port}/")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base signature
        pass


PageMaker = Callable[..., "Page"]


@pytest.fixture
def open_page(browser: Browser, site: Site) -> Iterator[PageMaker]:
    """``open_page("prose", dark=False)``: a fresh browser context showing that page.

    ``dark=True`` emulates ``prefers-color-scheme: dark`` and stores furo's choice
    ``theme=dark`` before any script runs.  Errors thrown by page scripts fail the test.
    """
    contexts: list[Any] = []
    errors: list[str] = []

    def make(docname: str, *, dark: bool = False, query: str = "") -> Page:
        context = browser.new_context(
            viewport={"width": 1280, "height": 900},
            color_scheme="dark" if dark else "light",
            reduced_motion="reduce",
        )
        contexts.append(context)
        theme = "dark" if dark else "light"
        context.add_init_script(f"try {{ localStorage.setItem('theme', '{theme}') }} catch {{}}")
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(site.page_url(docname, query))
        return page

    yield make
    for context in contexts:
        context.close()
    assert not errors, f"script errors in the page: {errors}"


SAVED: list[Path] = []


def save_screenshot(target: Any, name: str, **options: Any) -> Path:
    """A page's or element's PNG under ``tests/.artifacts/screenshots`` (git-ignored)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    target.screenshot(path=str(path), **options)
    SAVED.append(path)
    return path


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SAVED:
        terminalreporter.write_line(f"browser screenshots ({len(SAVED)}): {SCREENSHOTS.resolve()}")
