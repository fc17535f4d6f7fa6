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

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.util import logging

from . import __version__
from .naming import slugify
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


def registry(app: Sphinx) -> dict[tuple[str, str], GeneratedTrace]:
    """Traces of this build by (docname of the directive, its argument)."""
    if not hasattr(app, "_torchtrace_traces"):
        app._torchtrace_traces = {}  # type: ignore[attr-defined]
    return app._torchtrace_traces  # type: ignore[attr-defined, no-any-return]


def scan_sources(app: Sphinx) -> list[TraceRequest]:
    """Find every ``torchtrace`` directive in the project's sources (rST and MyST)."""
    env = app.env
    env.find_files(app.config, app.builder)  # found_docs is stale on an incremental build
    generated = app.config.torchtrace_generated_dir.strip("/") + "/"
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


def _requests_in(docname: str, source: Path, lines: list[str]) -> list[TraceRequest]:
    found = []
    for i, line in enumerate(lines):
        match = _RST_DIRECTIVE.match(line) or _MYST_DIRECTIVE.match(line)
        if match is None:
            continue
        arg = match.group("arg")
        options: dict[str, str] = {}
        for following in lines[i + 1 :]:
            if not following.strip():
                if options:
                    break
                continue
            opt = _OPTION.match(following)
            if opt is None:
                break
            options[opt.group("key")] = opt.group("value") or ""
        found.append(TraceRequest(docname, arg, "", options))
    return found


def resolve_logs_safely(path: str) -> list[Path]:
    """The log files behind a path, or none when it cannot be read (warned elsewhere)."""
    try:
        return resolve_logs(path)
    except (OSError, TraceReadError):
        return []


def _srcdir_relative(app: Sphinx, source_dir: Path, argument: str) -> str:
    if argument.startswith("/"):
        return os.path.normpath(os.path.join(app.srcdir, argument.lstrip("/")))
    return os.path.normpath(os.path.join(source_dir, argument))


def generate_pages(app: Sphinx) -> None:
    """builder-inited: parse every referenced trace and (re)write its pages."""
    config = app.config
    gen_dir = config.torchtrace_generated_dir.strip("/")
    root = Path(app.srcdir) / gen_dir
    cache_dir = os.path.join(app.doctreedir, "torchtrace-cache")
    renderer = Renderer(app)
    wanted: dict[Path, str] = {}
    traces = registry(app)
    traces.clear()
    labels: dict[str, TraceRequest] = {}
    for request in scan_sources(app):
        source_dir = Path(app.env.doc2path(request.docname)).parent
        request.path = _srcdir_relative(app, source_dir, request.argument)
        label = request.label()
        if slugify(label) in {slugify(k) for k in labels} and labels.get(label) is not request:
            other = next(r for k, r in labels.items() if slugify(k) == slugify(label))
            if other.path == request.path and other.options == request.options:
                traces[(request.docname, request.argument)] = traces[
                    (other.docname, other.argument)
                ]
                continue
            logger.warning(
                "trace label %r is used twice (also in %s); give one a :name:",
                label, other.docname,
                location=request.docname, type="torchtrace", subtype="label",
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
            logger.warning(
                str(e), location=request.docname, type="torchtrace", subtype="read"
            )
            continue
        for d in trace.diagnostics:
            logger.warning(
                d.message,
                location=f"{d.path}:{d.line}" if d.line else d.path,
                type="torchtrace",
                subtype=d.kind,
            )
        plan = plan_trace(label, trace, gen_dir)
        traces[(request.docname, request.argument)] = GeneratedTrace(request, trace, plan)
        for relpath, text in renderer.render_trace(plan, request).items():
            wanted[root.parent / relpath] = text
    _write_all(root, wanted)


def _write_all(root: Path, wanted: dict[Path, str]) -> None:
    """Write what changed, remove what is no longer generated, keep the folder out of VCS."""
    header = f".. generated by sphinx-torchtrace {__version__} from a trace; do not edit\n\n"
    for path, text in wanted.items():
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
