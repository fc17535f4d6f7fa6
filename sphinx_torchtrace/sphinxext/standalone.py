"""A Sphinx project around some traces: ``sphinx-torchtrace build``.

For someone who just wants to look, as with ``tlparse LOG``: one page per
trace, an embedded configuration (furo when installed, else Sphinx's default
theme), Sphinx run in-process.  Page names are computed (``[a-z0-9-]``), so a
log's file name never reaches the generated rST.

The project (sources, doctrees and the extension's model cache) lives in the
user's cache folder, one per output folder, never in the output: building the
same logs again reads nothing again.  What the terminal or CI log gets: a
progress line per stage on stderr (``quiet`` silences them), which log each
path stood for, warnings naming the user's paths (not the project's links),
colour only on a terminal (``NO_COLOR`` honoured); stdout gets the index path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import os
import re
import sys
import time
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from sphinx.application import Sphinx
from sphinx.builders.html import StandaloneHTMLBuilder
from sphinx.errors import SphinxError
from sphinx.util.console import color_terminal, nocolor
from sphinx.util.docutils import docutils_namespace, patch_docutils

from ..site.artifacts import size_text
from ..site.characters import console_text
from ..trace.folders import inside, real_root, refusal
from ..trace.inputs.opening import open_input
from .built import built
from .cache_dirs import cache_home
from .config import torchtrace_config

_CONF = """\
# Written by `sphinx-torchtrace build`: a project around the linked traces.
extensions = ["sphinx_torchtrace"]
project = "Compile report"
master_doc = "index"
exclude_patterns = ["_build", "traces"]
html_theme = {theme!r}
html_title = "Compile report"
show_warning_types = True  # "[torchtrace.md5]": what suppress_warnings takes (default 8.0+)
"""


class StandaloneBuildError(Exception):
    """The build failed; the message is one line for the command's stderr."""


def build_site(
    paths: Sequence[Path],
    out: Path,
    *,
    latest: bool = False,
    quiet: bool = False,
    rewrites: Sequence[tuple[str, str]] = (),
) -> Path:
    """Build a report site of ``paths`` into ``out``; the page to open: the overview of
    a single trace (as ``tlparse`` opens on its report, no index page between), else the
    ``index.html`` listing the traces.  ``rewrites``: (path, what the pages say instead)
    pairs, before the rules of every build (``--rewrite``)."""
    out = out.resolve()
    say: Callable[[str], None] = (lambda _line: None) if quiet else _progress
    project = cache_home() / "projects" / hashlib.sha256(os.fsencode(out)).hexdigest()[:16]
    src = project / "src"
    pages, names = _write_project(src, paths, latest, say, rewrites)
    if os.environ.get("NO_COLOR") or not (sys.stderr.isatty() and color_terminal()):
        nocolor()  # colour codes only on a terminal, never in a file or a CI log
    warnings = _UserPaths(sys.stderr, src, pages)
    started = time.monotonic()
    try:
        # as sphinx-build does: the roles, directives and node classes a build registers
        # are docutils' globals, undone after it (a second build in one process, the
        # commands' tests, would otherwise warn that each is registered already)
        with patch_docutils(str(src)), docutils_namespace():
            app = Sphinx(
                str(src),
                str(src),
                str(out),
                str(project / "doctrees"),
                "html",
                status=None,
                warning=typing.cast(IO[str], warnings),  # a text stream, as Sphinx needs
                freshenv=False,
                verbosity=0,
            )
            _connect_progress(app, say, started)
            unshown = _connect_problems(app)
            app.build()
    except SphinxError as e:
        raise StandaloneBuildError(f"build failed: {e}") from None
    finally:
        warnings.flush()
    if app.statuscode:
        raise StandaloneBuildError("build failed (see the messages above)")
    if unshown:  # a site without a report of some input is no all-clear (summary refuses it)
        raise StandaloneBuildError("; ".join(warnings.user_text(m) for m in unshown))
    _remove_stale_pages(app, out, project / "pages.json")
    return _first_page(app, out, names)


def _first_page(app: Sphinx, out: Path, names: list[str]) -> Path:
    """The overview of the one trace, where it was built; else the index."""
    if len(names) == 1:
        overview = f"{torchtrace_config(app.config).generated_dir}/{names[0]}/index"
        if overview in app.env.found_docs:
            builder = typing.cast(StandaloneHTMLBuilder, app.builder)
            return Path(builder.get_outfilename(overview))
    return out / "index.html"


def _remove_stale_pages(app: Sphinx, out: Path, manifest: Path) -> None:
    """Delete the pages an earlier build into ``out`` wrote for documents this project no
    longer has (another log built into the same folder): Sphinx never deletes an output,
    and a stale page links to pages that are gone.  Only pages listed in this project's
    manifest (in the cache, never in ``out``) are touched, never a file the user put there."""
    builder = typing.cast(StandaloneHTMLBuilder, app.builder)  # build_site runs "html"
    current = sorted(
        os.path.relpath(builder.get_outfilename(doc), os.fspath(out)) for doc in app.env.found_docs
    )
    try:
        old = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        old = []
    if not isinstance(old, list):
        old = []
    root = out.resolve()
    for name in set(n for n in old if isinstance(n, str)) - set(current):
        page = (out / name).resolve()
        if page.suffix == ".html" and page.is_relative_to(root) and page.is_file():
            page.unlink()
            _remove_empty_folders(page.parent, root)
    _write(manifest, json.dumps(current))


def _remove_empty_folders(folder: Path, root: Path) -> None:
    """Remove ``folder`` and its parents up to ``root`` while they are empty."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


#: The host names a preview answers to (a request's ``Host``, with or without the port):
#: loopback by name and by address.  A page elsewhere that points a name of its own at
#: 127.0.0.1 (DNS rebinding) sends that name, and gets :data:`NOT_OUR_HOST`.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
#: What a request for another host name gets: refused, never served.
NOT_OUR_HOST = 403


def own_host(host: str | None, port: int) -> bool:
    """Whether a request's ``Host`` header names this preview: a loopback name or address
    of :data:`LOOPBACK_HOSTS`, alone or with the preview's port."""
    if host is None:
        return False
    host = host.strip().lower()
    return any(host in (name, f"{name}:{port}") for name in LOOPBACK_HOSTS)


def serve(
    folder: Path, port: int = 8000, *, ready: Callable[[str], None] = print, page: str = ""
) -> None:
    """Serve a built site on 127.0.0.1 until interrupted (a preview, never a server for
    others: nothing but this machine can reach it); ``page``, a path in ``folder``, is the
    one the printed address opens.

    It answers only requests that name it (:func:`own_host`; others get
    :data:`NOT_OUR_HOST`), and only with what is inside ``folder``: an entry whose real
    path (links followed) is outside it, or that is no regular file or folder, is "not
    found", as :mod:`~..trace.folders` decides for every folder the user names."""
    import functools
    from http import HTTPStatus
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    root = real_root(folder)

    class Handler(SimpleHTTPRequestHandler):
        port = 0  # the port bound, once it is

        def send_head(self) -> Any:
            hosts = self.headers.get_all("Host") or []
            if len(hosts) != 1 or not own_host(hosts[0], self.port):
                self.send_error(
                    NOT_OUR_HOST,
                    "Not this preview's host name",
                    "This preview answers only requests for 127.0.0.1, localhost or [::1].",
                )
                return None
            path = self.translate_path(self.path)
            if not inside(path, root) or refusal(path, root) not in (None, ""):
                self.send_error(HTTPStatus.NOT_FOUND, "File not found")
                return None
            return super().send_head()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's
            # a request line is whatever a client sent: escaped, and on a line of our own
            sys.stderr.write(console_text(f"served: {format % args}") + "\n")

    handler = functools.partial(Handler, directory=os.fspath(folder))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        Handler.port = server.server_address[1]
        ready(
            f"serving {console_text(os.fspath(folder))} at "
            f"http://127.0.0.1:{server.server_address[1]}/{quote(page)} (answers only "
            "requests for 127.0.0.1, localhost or [::1]; Ctrl+C to stop)"
        )
        server.serve_forever()


# -- the project ----------------------------------------------------------------------------


def _write_project(
    src: Path,
    paths: Sequence[Path],
    latest: bool,
    say: Callable[[str], None],
    rewrites: Sequence[tuple[str, str]] = (),
) -> tuple[dict[str, str], list[str]]:
    """``conf.py``, ``index.rst`` and one page per trace, each naming a link to its log
    (written only when they change, so a second build of the same logs reads nothing);
    returns each project path a warning may name → the user's path it stands for, and the
    traces' names (each its page and its ``:name:``)."""
    traces = src / "traces"
    traces.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    pages: list[str] = []
    user: dict[str, str] = {}
    # the user's paths, as given: a literal path (never a regex) at a path's boundary
    shown_as: dict[str, str] = {
        rf"(?<![\w.-]){re.escape(path.rstrip('/'))}(?![\w.-])": name.replace("\\", "\\\\")
        for path, name in rewrites
        if path.strip("/")
    }
    for i, path in enumerate(paths):
        name = _slug(path, taken)
        link = traces / f"t{i}"
        target = path.resolve()
        if not link.is_symlink() or Path(os.readlink(link)) != target:
            link.unlink(missing_ok=True)
            link.symlink_to(target)
        _say_logs(path, latest, say)
        option = "   :latest:\n" if latest else ""
        title = f"Trace {name}"
        directive = f".. torchtrace:: traces/t{i}\n   :name: {name}\n{option}"
        _write(src / f"{name}.rst", f"{title}\n{'=' * len(title)}\n\n{directive}")
        pages.append(name)
        shown = os.fspath(path)
        user[os.fspath(src / f"{name}.rst")] = shown
        user[os.fspath(link)] = shown
        user[f"traces/t{i}"] = shown
        # The pages name the logs as the user did, not by the project's link to them; an
        # absolute path by its name alone (a published report shows no machine's folders).
        named = path.name if path.is_absolute() else shown
        shown_as[rf"(?<![\w./-])traces/t{i}(?![\w.-])"] = named.replace("\\", "\\\\")
    for stale in traces.iterdir():  # links of an earlier build with more paths
        if stale.name not in {f"t{i}" for i in range(len(paths))}:
            stale.unlink()
    for stale in src.glob("*.rst"):
        if stale.stem not in pages and stale.name != "index.rst":
            stale.unlink()
    conf = _CONF.format(theme=_theme()) + f"torchtrace_path_rewrites = {shown_as!r}\n"
    _write(src / "conf.py", conf)
    toctree = "".join(f"   {p}\n" for p in pages)
    _write(
        src / "index.rst",
        f"Compile report\n==============\n\n.. toctree::\n   :maxdepth: 1\n\n{toctree}",
    )
    return user, pages


#: Logs of a folder the progress output names one by one; past this, a count.
LOGS_NAMED = 8


def _say_logs(path: Path, latest: bool, say: Callable[[str], None]) -> None:
    """Which log(s) a path stands for, and their sizes: always said, never guessed at."""
    opened = open_input(path, latest=latest)
    if opened.choice is None:
        return  # a debug folder, or no log: the build says why, at the page
    choice = opened.choice
    known = {stamp.path: stamp.size for stamp in opened.stamps}
    sizes = [max(known.get(log, 0), 0) for log in choice.logs]  # 0: gone, or never there
    if opened.is_folder:
        say(f"folder {os.fspath(path)}: {choice.describe()}, {size_text(sum(sizes))}")
        for log, size in list(zip(choice.logs, sizes, strict=True))[:LOGS_NAMED]:
            say(f"  log {os.fspath(log)} ({size_text(size)})")
        if len(choice.logs) > LOGS_NAMED:
            say(f"  and {len(choice.logs) - LOGS_NAMED} more logs")
    else:
        say(f"log {os.fspath(path)} ({size_text(sizes[0])})")


def _write(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    path.write_text(text, encoding="utf-8")


def _slug(path: Path, taken: set[str]) -> str:
    """A page name from the log's file name: ``[a-z0-9-]``, at most 40 characters, unique."""
    stem = re.sub(r"(\.log)?(\.gz)?$", "", path.resolve().name.lower())
    stem = stem.removeprefix("dedicated_log_torch_trace_")
    name = re.sub(r"[^a-z0-9]+", "-", stem).strip("-")[:40].strip("-")
    name = name if name and name[0].isalpha() else f"run-{name}".rstrip("-")
    base, n = name, 2
    while name in taken or name == "index":
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def _theme() -> str:
    return "furo" if importlib.util.find_spec("furo") is not None else "alabaster"


# -- what the terminal gets -----------------------------------------------------------------


def _progress(line: str) -> None:
    sys.stderr.write(console_text(line) + "\n")
    sys.stderr.flush()


def _connect_progress(app: Sphinx, say: Callable[[str], None], started: float) -> None:
    """One line per stage: the logs read, the pages read, the pages written."""
    marks = {"read": started}

    def before_read(_app: Sphinx, _env: object, docnames: list[str]) -> None:
        say(
            f"logs read in {time.monotonic() - started:.1f} s; "
            f"reading {len(docnames)} changed page(s)"
        )
        marks["read"] = time.monotonic()

    def before_write(_app: Sphinx, _env: object) -> list[str]:
        say(f"pages read in {time.monotonic() - marks['read']:.1f} s; writing HTML")
        return []

    def finished(_app: Sphinx, error: BaseException | None) -> None:
        if error is None:
            say(f"built in {time.monotonic() - started:.1f} s")

    app.connect("env-before-read-docs", before_read)
    app.connect("env-updated", before_write)
    app.connect("build-finished", finished)


def _connect_problems(app: Sphinx) -> list[str]:
    """Why each input got no report (no trace record, nothing readable), in page order,
    filled in at build-finished (before the registry is forgotten)."""
    found: list[str] = []

    def finished(_app: Sphinx, error: BaseException | None) -> None:
        if error is None:
            problems = built(app).problems
            found.extend(problems[k].message for k in sorted(problems))

    app.connect("build-finished", finished, priority=100)
    return found


class _UserPaths(io.TextIOBase):
    """The warning stream, with the project's paths (page sources, links to the logs)
    written as the paths the user gave: a warning names a file they know."""

    def __init__(self, stream: IO[str], src: Path, paths: dict[str, str]) -> None:
        self._stream = stream
        self._buffer = ""
        # longest first: an absolute path before the relative one it ends with
        names = sorted(paths, key=len, reverse=True)
        alternatives = "|".join(re.escape(n) for n in names)
        # a line of a generated page means nothing to the user: their path alone
        self._pattern = re.compile(f"({alternatives})(:[0-9]+)?(?![0-9])") if names else None
        self._paths = {n: console_text(p) for n, p in paths.items()}
        self._src = os.fspath(src) + os.sep

    def write(self, text: str) -> int:
        self._buffer += text
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            self._stream.write(self._rewrite(line) + "\n")
        return len(text)

    def flush(self) -> None:
        if self._buffer:
            self._stream.write(self._rewrite(self._buffer) + "\n")
            self._buffer = ""
        self._stream.flush()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def user_text(self, text: str) -> str:
        """``text`` naming the user's paths, as a warning line is written."""
        return self._rewrite(text)

    def _shown(self, m: re.Match[str]) -> str:
        name, line = m.group(1), m.group(2) or ""
        return self._paths[name] + ("" if name.endswith(".rst") else line)

    def _rewrite(self, line: str) -> str:
        if self._pattern is not None:
            line = self._pattern.sub(self._shown, line)
        # the command line has no conf.py: its advice names the option that sets the rule
        line = _CONF_ADVICE.sub(
            "give --rewrite PATH=NAME for each (--rewrite /srv/ci/checkout=<project>)", line
        )
        return line.replace(self._src, "")


#: The publish check's advice for a conf.py (see :mod:`.publish_check`).
_CONF_ADVICE = re.compile(
    r"add a rule for them to torchtrace_path_rewrites \(a \{regex: "
    r"replacement\} dict, such as \{[^}]*\}\)"
)
