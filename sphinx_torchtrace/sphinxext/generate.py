"""Generate the pages of every trace at ``builder-inited``: real Sphinx sources on disk.

Sphinx reads only documents that exist as files, so each trace becomes
``.rst`` files in a folder the extension owns (``torchtrace_generated_dir``).
A file is written only when its text changes, so an unchanged trace costs no
re-read; files of traces no longer referenced are removed; the folder ignores
itself for VCS.  The parsed traces live in memory for this process only
(Sphinx's ``-j`` workers are forked and see them), never in the pickled
environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util import logging

from . import __version__
from .naming import DEFAULT_GENERATED_DIR, generated_folder, slugify
from .plan import TracePlan, plan_trace
from .render import Renderer
from .trace import Trace, TraceReadError, load_trace, resolve_logs

logger = logging.getLogger(__name__)

# `.. torchtrace:: path` in rST (also inside eval-rst blocks of MyST) and
# ```{torchtrace} path / :::{torchtrace} path in MyST.
_RST_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+torchtrace::[ \t]*(?P<arg>\S.*?)\s*$")
_MYST_DIRECTIVE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})\{torchtrace\}[ \t]*(?P<arg>\S.*?)\s*$")
_OPTION = re.compile(r"^[ \t]*:(?P<key>[\w-]+):(?:[ \t]+(?P<value>.*?))?\s*$")

SUPPORTED_SUFFIXES = (".rst", ".md", ".txt")


@dataclass
class TraceRequest:
    """One ``torchtrace`` directive found in a source file."""

    docname: str
    argument: str
    path: str  # absolute
    options: dict[str, str] = field(default_factory=dict)

    @property
    def latest(self) -> bool:
        return "latest" in self.options

    @property
    def ranks(self) -> list[int] | None:
        value = self.options.get("ranks", "all").strip()
        if value in ("", "all"):
            return None
        return [int(r) for r in value.split(",") if r.strip().isdigit()]

    def label(self) -> str:
        name = self.options.get("name")
        if name:
            return name.strip()
        p = Path(self.path)
        return p.stem if p.is_file() or p.suffix else p.name


@dataclass
class GeneratedTrace:
    """A trace as this build knows it: its request, model and site plan."""

    request: TraceRequest
    trace: Trace
    plan: TracePlan


# Per source directory, so that two projects built in one process (tests) stay apart;
# module state, not the environment, so nothing of it is pickled, and forked ``-j``
# readers inherit it.  ``BuildEnvironment.app`` is deprecated, hence not on the app.
_TRACES: dict[str, dict[tuple[str, str], GeneratedTrace]] = {}
_PROBLEMS: dict[str, dict[tuple[str, str], tuple[str, str]]] = {}


def registry(app_or_env: Sphinx | BuildEnvironment) -> dict[tuple[str, str], GeneratedTrace]:
    """Traces of this build by (docname of the directive, its argument)."""
    return _TRACES.setdefault(os.fspath(app_or_env.srcdir), {})


def problems(app_or_env: Sphinx | BuildEnvironment) -> dict[tuple[str, str], tuple[str, str]]:
    """Why a directive has no trace, as (message, warning subtype), by the registry's key.

    The directive itself warns, at its own line, and only if it really runs: a
    ``.. torchtrace::`` the scan mistook for one (an example) stays silent.
    """
    return _PROBLEMS.setdefault(os.fspath(app_or_env.srcdir), {})


def forget_traces(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: the directives have run, the models need not outlive the build."""
    _TRACES.pop(os.fspath(app.srcdir), None)
    _PROBLEMS.pop(os.fspath(app.srcdir), None)


def generated_dir(app: Sphinx) -> str:
    """``torchtrace_generated_dir``, checked (see :func:`.naming.generated_folder`)."""
    folder = generated_folder(app.config.torchtrace_generated_dir)
    if folder is None:
        logger.warning(
            "torchtrace_generated_dir %r must name a sub-folder of the sources; using %r",
            app.config.torchtrace_generated_dir, DEFAULT_GENERATED_DIR,
            type="torchtrace", subtype="config",
        )
        return DEFAULT_GENERATED_DIR
    return folder


def scan_sources(app: Sphinx, gen_dir: str | None = None) -> list[TraceRequest]:
    """Find every ``torchtrace`` directive in the project's sources (rST and MyST)."""
    env = app.env
    env.find_files(app.config, app.builder)  # found_docs is stale on an incremental build
    generated = (gen_dir or generated_dir(app)) + "/"
    requests: list[TraceRequest] = []
    for docname in sorted(env.found_docs):
        if docname.startswith(generated):
            continue
        source = Path(env.doc2path(docname))
        if source.suffix not in SUPPORTED_SUFFIXES:
            continue
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "torchtrace" not in text:
            continue
        requests.extend(_requests_in(docname, source, text.splitlines()))
    return requests


# Blocks whose text is shown, not parsed: a ``.. torchtrace::`` in them is an example.
_RST_LITERAL = re.compile(
    r"^[ \t]*\.\.[ \t]+(?:code-block|code|sourcecode|parsed-literal|literalinclude|doctest"
    r"|testcode|testoutput|prompt)::"
)
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}|:{3,})[ \t]*(?P<info>[^\s`]*)")
_MYST_LITERAL_DIRECTIVES = ("{code-block}", "{code}", "{sourcecode}", "{literalinclude}")


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _requests_in(docname: str, source: Path, lines: list[str]) -> list[TraceRequest]:
    """The directives of one source, skipping examples in literal blocks and code fences."""
    found = []
    literal_indent: int | None = None  # inside an rST literal block opened at this indent
    literal_fence: str | None = None  # inside a Markdown code fence closed by this
    parsed_fences: list[str] = []  # open MyST directive fences ({note}, {eval-rst} ...)
    for i, line in enumerate(lines):
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if literal_fence is not None:
            if _closes(line, literal_fence):
                literal_fence = None
            continue
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if parsed_fences and _closes(line, parsed_fences[-1]):
            parsed_fences.pop()
            continue
        opening = _FENCE.match(line)
        if opening is not None:
            info = opening.group("info")
            # ```python, ```rst, ```{code-block}: shown; ```{eval-rst}, ```{note}: parsed
            if opening.group("fence")[0] != ":" and (
                not info.startswith("{") or info in _MYST_LITERAL_DIRECTIVES
            ):
                literal_fence = opening.group("fence")
                continue
            parsed_fences.append(opening.group("fence"))
        match = _RST_DIRECTIVE.match(line) or _MYST_DIRECTIVE.match(line)
        if match is None:
            if _RST_LITERAL.match(line) or (
                stripped.endswith("::") and not stripped.startswith("..")
            ):
                literal_indent = indent
            continue
        found.append(TraceRequest(docname, match.group("arg"), "", _options_after(lines, i)))
    return found


def _options_after(lines: list[str], i: int) -> dict[str, str]:
    """``:key: value`` lines after a directive, or MyST's ``---`` YAML block."""
    options: dict[str, str] = {}
    following = lines[i + 1 :]
    if following and following[0].strip() == "---":
        for line in following[1:]:
            if line.strip() == "---":
                break
            key, sep, value = line.partition(":")
            if sep and key.strip():
                options[key.strip()] = value.strip().strip("\"'")
        return options
    for line in following:
        if not line.strip():
            if options:
                break
            continue
        opt = _OPTION.match(line)
        if opt is None:
            break
        options[opt.group("key")] = opt.group("value") or ""
    return options


def resolve_logs_safely(
    path: str, latest: bool = False, ranks: list[int] | None = None
) -> list[Path]:
    """The log files behind a path, or none when it cannot be read (warned elsewhere)."""
    try:
        return resolve_logs(path, latest=latest, ranks=ranks)
    except (OSError, TraceReadError):
        return []


def _srcdir_relative(app: Sphinx, source_dir: Path, argument: str) -> str:
    if argument.startswith("/"):
        return os.path.normpath(os.path.join(app.srcdir, argument.lstrip("/")))
    return os.path.normpath(os.path.join(source_dir, argument))


def generate_pages(app: Sphinx) -> None:
    """builder-inited: parse every referenced trace and (re)write its pages."""
    gen_dir = generated_dir(app)
    root = Path(app.srcdir) / gen_dir
    cache_dir = os.path.join(app.doctreedir, "torchtrace-cache")
    renderer = Renderer(app)
    # Builders that assemble one document need graph and kernel pages in a toctree.
    detail_toctree = app.builder.name not in ("html", "dirhtml", "linkcheck")
    wanted: dict[Path, str | None] = {}
    traces = registry(app)
    traces.clear()
    failed = problems(app)
    failed.clear()
    labels: dict[str, TraceRequest] = {}
    for request in scan_sources(app, gen_dir):
        key = (request.docname, request.argument)
        source_dir = Path(app.env.doc2path(request.docname)).parent
        request.path = _srcdir_relative(app, source_dir, request.argument)
        label = request.label()
        other = next((r for k, r in labels.items() if slugify(k) == slugify(label)), None)
        if other is not None:
            other_key = (other.docname, other.argument)
            if other.path == request.path and other.options == request.options:
                # the same trace shown on two pages: one set of pages
                if other_key in traces:
                    traces[key] = traces[other_key]
                if other_key in failed:
                    failed[key] = failed[other_key]
                continue
            failed[key] = (
                f"trace label {label!r} is used twice (also in {other.docname}); "
                "give one a :name:",
                "label",
            )
            continue
        labels[label] = request
        try:
            trace = load_trace(
                request.path,
                latest=request.latest,
                ranks=request.ranks,
                display_root=app.srcdir,
                cache_dir=cache_dir,
            )
        except TraceReadError as e:
            failed[key] = (str(e), "read")
            continue
        for d in trace.diagnostics:
            logger.warning(
                d.message,
                location=f"{d.path}:{d.line}" if d.line else d.path,
                type="torchtrace",
                subtype=d.kind,
            )
        plan = plan_trace(label, trace, gen_dir)
        traces[key] = GeneratedTrace(request, trace, plan)
        stamp = _PageStamp(app, cache_dir, request, label, detail_toctree)
        kept = stamp.unchanged_files()
        if kept is not None:
            # Same logs, options and templates as the last build: its pages stand.
            wanted.update(dict.fromkeys((Path(app.srcdir) / f for f in kept), None))
            continue
        pages = renderer.render_trace(plan, request, detail_toctree=detail_toctree)
        for relpath, text in pages.items():
            wanted[Path(app.srcdir) / relpath] = text
        stamp.save(list(pages))
    _write_all(root, wanted)


class _PageStamp:
    """Remembers which pages a trace rendered to, so an unchanged trace is not rendered again.

    Rendering every page to compare it with the file on disk was most of a
    no-change rebuild; the key holds everything the pages depend on: the logs'
    sizes and times, the directive's options, the label, the configuration, the
    builder kind and the extension's version, code and templates.
    """

    def __init__(
        self, app: Sphinx, cache_dir: str, request: TraceRequest, label: str, detail: bool
    ) -> None:
        logs = resolve_logs_safely(request.path, request.latest, request.ranks)
        package = Path(__file__).parent
        code = sorted(package.glob("**/*.py")) + sorted((package / "templates").iterdir())
        parts = [
            __version__,
            label,
            sorted(request.options.items()),
            generated_dir(app),
            detail,
            repr(app.config.torchtrace_path_rewrites),
            app.config.torchtrace_sidebar_frames,
            [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in logs],
            [(str(f), f.stat().st_mtime_ns) for f in code],  # a changed extension renders anew
        ]
        self.key = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()
        self.path = Path(cache_dir) / f"pages-{slugify(label)}.json"
        self.srcdir = Path(app.srcdir)

    def unchanged_files(self) -> list[str] | None:
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        files = saved.get("files") if isinstance(saved, dict) else None
        if saved.get("key") != self.key or not isinstance(files, list):
            return None
        if not all(isinstance(f, str) and (self.srcdir / f).is_file() for f in files):
            return None
        return files

    def save(self, files: list[str]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"key": self.key, "files": files}), "utf-8")
        except OSError:
            pass  # no stamp: the next build renders again, nothing worse


def _write_all(root: Path, wanted: dict[Path, str | None]) -> None:
    """Write what changed, remove what is no longer generated, keep the folder out of VCS.

    A ``None`` text keeps the file as it is.
    """
    header = f".. generated by sphinx-torchtrace {__version__} from a trace; do not edit\n\n"
    for path, text in wanted.items():
        if text is None:
            continue
        content = header + text if path.suffix == ".rst" else text
        try:
            if path.read_text(encoding="utf-8") == content:
                continue
        except OSError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    if not root.exists():
        return
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_file() and path not in wanted and path.name != ".gitignore":
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()
    if root.exists():
        ignore = root / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# generated by sphinx-torchtrace\n*\n", encoding="utf-8")
