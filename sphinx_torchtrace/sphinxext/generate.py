"""Generate the pages of every trace at ``builder-inited``: stub sources on disk.

Sphinx reads only documents that exist as files, so each page of a trace is a
small stub in a folder the extension owns (``torchtrace_generated_dir``).  A
stub holds no trace text at all: a comment and ``.. torchtrace-page::``, whose
directive (:mod:`.page`) builds the page's nodes from the in-memory model when
Sphinx reads it.  Stubs are written in a suffix the project reads (rST, else
MyST), only when they change; files of traces no longer referenced are
removed; downloads (raw graph texts, chromium events) are written beside them,
path-rewritten.  The parsed traces live in memory for this process only
(Sphinx's ``-j`` workers are forked and see them), never in the pickled
environment.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from .. import __version__
from ..render.paths import PathRewriter, trace_rules
from ..site.artifacts import json_text, shown_record
from ..site.characters import console_text
from ..site.naming import label_segment
from ..site.plan import GraphPlan, PageSettings, TracePlan, plan_trace
from ..site.source import maybe_strip
from ..trace import Trace, TraceReadError, resolve_logs, summary
from ..trace.inputs import DEBUG_DIR, detect_kind
from ..trace.loader import choose_logs, rank_logs
from .config import torchtrace_config
from .debug_dir import clear as clear_debug_dirs
from .debug_dir import forget_debug_dirs, generate_debug_dir
from .options import TraceOptions
from .scan import TraceRequest, resolve_argument, scan_sources
from .text_logs import load_input
from .warnings import logger, warn


@dataclass
class GeneratedTrace:
    """A trace as this build knows it: its request, options, model, site plan and settings."""

    request: TraceRequest
    options: TraceOptions
    trace: Trace
    plan: TracePlan
    settings: PageSettings
    rewrite: PathRewriter
    notes: list[tuple[str, str]] = field(default_factory=list)  # (subtype, message) to warn
    extra_logs: list[Path] = field(default_factory=list)  # ``:with:`` files read

    @property
    def logs(self) -> list[Path]:
        """Every file the pages depend on (the trace's logs, then ``:with:`` files)."""
        own = resolve_logs_safely(self.request.path, self.options.latest, self.options.ranks)
        return own + [p for p in self.extra_logs if p not in own]


# Per source directory, so that two projects built in one process (tests) stay apart;
# module state, not the environment, so nothing of it is pickled, and forked ``-j``
# readers inherit it.  ``BuildEnvironment.app`` is deprecated, hence not on the app.
_TRACES: dict[str, dict[tuple[str, str], GeneratedTrace]] = {}
_PAGES: dict[str, dict[str, GeneratedTrace]] = {}
_PROBLEMS: dict[str, dict[tuple[str, str], tuple[str, str]]] = {}


def registry(app_or_env: Sphinx | BuildEnvironment) -> dict[tuple[str, str], GeneratedTrace]:
    """Traces of this build by (docname of the directive, its argument)."""
    return _TRACES.setdefault(os.fspath(app_or_env.srcdir), {})


def page_registry(app_or_env: Sphinx | BuildEnvironment) -> dict[str, GeneratedTrace]:
    """The trace behind each generated page, by docname."""
    return _PAGES.setdefault(os.fspath(app_or_env.srcdir), {})


def problems(app_or_env: Sphinx | BuildEnvironment) -> dict[tuple[str, str], tuple[str, str]]:
    """Why a directive has no trace, as (message, warning subtype), by the registry's key.

    The directive itself warns, at its own line, and only if it really runs: a
    ``.. torchtrace::`` the scan mistook for one (an example) stays silent.
    """
    return _PROBLEMS.setdefault(os.fspath(app_or_env.srcdir), {})


def forget_traces(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: the directives have run, the models need not outlive the build."""
    for store in (_TRACES, _PAGES, _PROBLEMS):
        store.pop(os.fspath(app.srcdir), None)
    forget_debug_dirs(app, exception)
    from .diff_directive import forget_diffs

    forget_diffs(app, exception)


def generated_dir(app: Sphinx) -> str:
    """``torchtrace_generated_dir``, checked (see :mod:`.config`)."""
    return torchtrace_config(app.config).generated_dir


def resolve_logs_safely(
    path: str, latest: bool = False, ranks: tuple[int, ...] | list[int] | None = None
) -> list[Path]:
    """The log files behind a path, or none when it cannot be read (warned elsewhere)."""
    try:
        return resolve_logs(path, latest=latest, ranks=list(ranks) if ranks else None)
    except (OSError, TraceReadError):
        return []


def stub_format(app: Sphinx) -> tuple[str, str]:
    """(suffix, parser) of the stubs: a suffix the project reads, rST first, else MyST."""
    suffixes = app.config.source_suffix
    mapping = suffixes if isinstance(suffixes, dict) else dict.fromkeys(suffixes or ())
    for suffix, filetype in mapping.items():
        if filetype in (None, "restructuredtext"):
            return suffix, "rst"
    for suffix, filetype in mapping.items():
        if filetype == "markdown":
            return suffix, "myst"
    return ".rst", "rst"


def _stub(parser: str, kind: str) -> str:
    """A page's whole source: a comment and the page directive; no text from the trace."""
    comment = f"generated by sphinx-torchtrace {__version__} ({_CODE_STAMP}); do not edit"
    if parser == "myst":
        return f"% {comment}\n\n```{{torchtrace-page}} {kind}\n```\n"
    return f".. {comment}\n\n.. torchtrace-page:: {kind}\n"


def page_kind(plan: TracePlan, docname: str) -> str:
    """``overview``, ``frame``, ``graph`` or ``kernel``: what the stub of a page says it is."""
    frame, item = plan.page_of(docname)
    if frame is None:
        return "overview"
    if item is None:
        return "frame"
    return "graph" if isinstance(item, GraphPlan) else "kernel"


def _code_stamp() -> str:
    """A fingerprint of the extension's code: a changed extension re-reads its pages."""
    package = Path(__file__).parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.glob("**/*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:12]


_CODE_STAMP = _code_stamp()


def generate_pages(app: Sphinx) -> None:
    """builder-inited: parse every referenced trace and (re)write its stubs and downloads."""
    gen_dir = generated_dir(app)
    root = Path(app.srcdir) / gen_dir
    cache_dir = os.path.join(app.doctreedir, "torchtrace-cache")
    suffix, parser = stub_format(app)
    # Builders that assemble one document need graph and kernel pages in a toctree.
    detail_toctree = app.builder.name not in ("html", "dirhtml", "linkcheck")
    config = torchtrace_config(app.config)
    wanted: dict[Path, str | None] = {}
    traces = registry(app)
    traces.clear()
    pages = page_registry(app)
    pages.clear()
    failed = problems(app)
    failed.clear()
    labels: dict[str, TraceRequest] = {}
    requests = scan_sources(app, gen_dir)
    clear_debug_dirs(app)
    for request in requests:  # grows: a debug folder adds the trace logs of its run
        key = (request.docname, request.argument)
        source_dir = Path(app.env.doc2path(request.docname)).parent
        request.path = resolve_argument(request.argument, source_dir, app.srcdir)
        try:
            options = request.options
        except ValueError as err:
            failed[key] = (str(err), "option")
            continue
        label = request.label()
        folder = label_segment(label)
        other = next((r for k, r in labels.items() if label_segment(k) == folder), None)
        if other is not None:
            other_key = (other.docname, other.argument)
            if other.path == request.path and other.raw_options == request.raw_options:
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
        if not os.path.exists(request.path):
            failed[key] = (
                f"no trace at {request.argument!r}: {request.path} does not exist (a path is "
                "relative to the page; a leading / means the source folder)",
                "read",
            )
            continue
        kind = options.format or detect_kind(request.path)
        if kind == DEBUG_DIR:
            requests.extend(generate_debug_dir(
                app, request, options, label, gen_dir, _stub(parser, "{kind}"), suffix, wanted,
                cache_dir,
            ))
            continue
        try:
            loaded = load_input(
                request.path,
                kind,
                options,
                [resolve_argument(p, source_dir, app.srcdir) for p in options.with_paths],
                display_root=app.srcdir,
                cache_dir=cache_dir,
                max_bytes=config.max_log_bytes,
            )
        except TraceReadError as e:
            failed[key] = (str(e), "read")
            continue
        trace = loaded.trace
        for d in trace.diagnostics:
            if d.kind != "mixed_runs":  # said at the directive, which can choose (notes)
                # "path:" for a whole file, as Sphinx writes it (no ":" would mean a docname)
                warn(d.kind, d.message, f"{d.path}:{d.line}" if d.line else f"{d.path}:")
        _say_which_logs(request, label, options)
        plan = plan_trace(label, trace, gen_dir, config.max_frames, config.fold_bytes)
        settings = PageSettings(
            no_source=options.no_source,
            sections=options.sections,
            sidebar_limit=None if detail_toctree else config.sidebar_frames,
            detail_toctree=detail_toctree,
        )
        generated = GeneratedTrace(
            request,
            options,
            trace,
            plan,
            settings,
            PathRewriter(trace_rules(trace, config.path_rewrites, config.default_path_rewrites)),
            extra_logs=loaded.extra_logs,
        )
        traces[key] = generated
        generated.notes.extend(loaded.notes)
        generated.notes.extend(
            (d.kind, d.message) for d in trace.diagnostics if d.kind == "mixed_runs"
        )
        if plan.past_limit:
            generated.notes.append(("limit", _past_limit_note(plan)))
        found: set[int | None]
        if loaded.text_ranks is not None:
            found = loaded.text_ranks
        elif os.path.isdir(request.path):
            found = set(rank_logs(request.path))
        else:  # one log: :ranks: has no effect (the directive says so)
            found = set(options.ranks or ())
        lacking = [r for r in options.ranks or () if r not in found]
        if lacking:
            known = ", ".join(str(r) for r in sorted(r for r in found if r is not None))
            generated.notes.append(
                ("option", f":ranks: {', '.join(map(str, lacking))} not in the trace "
                 f"(its ranks: {known or 'none'})")
            )
        srcdir = Path(app.srcdir)
        for docname in plan.docnames:
            pages[docname] = generated
            wanted[srcdir / (docname + suffix)] = _stub(parser, page_kind(plan, docname))
        stamp = _DownloadStamp(app, cache_dir, generated)
        kept = stamp.unchanged_files()
        if kept is not None:
            wanted.update(dict.fromkeys((srcdir / f for f in kept), None))
            continue
        downloads = _downloads(generated)
        for relpath, text in downloads.items():
            wanted[srcdir / relpath] = text
        stamp.save(list(downloads))
    from .diff_directive import generate_diffs  # it reads this module's registry

    generate_diffs(app, gen_dir, parser, suffix, wanted, cache_dir)
    _write_all(root, wanted)


def _past_limit_note(plan: TracePlan) -> str:
    """What the frame cap left out, and the setting that raises it."""
    left = len(plan.past_limit)
    paged = sum(not f.compile.id.is_unknown for f in plan.frames)
    return (
        f"trace {plan.label!r} has {paged + left} compiles; the first {paged} get pages "
        f"and {left} are only listed on its overview (\"Frames past the limit\"): raise "
        f"torchtrace_max_frames (now {plan.max_frames}) to give them pages"
    )


def _say_which_logs(request: TraceRequest, label: str, options: TraceOptions) -> None:
    """An info line naming the log(s) a directory stood for, and why those."""
    if not os.path.isdir(request.path):
        return
    try:
        choice = choose_logs(
            request.path, latest=options.latest, ranks=list(options.ranks or ()) or None
        )
    except (OSError, TraceReadError):
        return
    logger.info("torchtrace: %s: %s", console_text(label), console_text(choice.describe()))


def _downloads(generated: GeneratedTrace) -> dict[str, str]:
    """The files a trace's pages offer for download, by path relative to the sources."""
    plan, rewrite = generated.plan, generated.rewrite
    out: dict[str, str] = {}
    for rank_plan in plan.ranks:
        if rank_plan.rank.chromium_events:
            events = summary.chromium_events_json(rank_plan.rank)
            out[rank_plan.events_path] = rewrite(maybe_strip(events, generated.settings.no_source))
    for frame in plan.paged_frames:  # a rank that repeats another offers that rank's files
        for graph in frame.graphs:
            if graph.same_as is not None or not graph.raw_path:  # another's file, or shown whole
                continue
            text = maybe_strip(graph.artifact.text(), generated.settings.no_source)
            out[graph.raw_path] = rewrite(text)
        for raw in frame.downloads:  # too large to show on the frame page
            text = maybe_strip(raw.artifact.text(), generated.settings.no_source)
            out[raw.raw_path] = rewrite(text)
        for record in frame.compile.metrics:  # records too long to show whole
            path = frame.record_download(record)
            if path is not None:
                no_source = generated.settings.no_source
                text = json_text(shown_record(record.data, no_source))
                out[path] = rewrite(maybe_strip(text, no_source))
    return out


class _DownloadStamp:
    """Remembers which downloads a trace wrote, so an unchanged trace does not write them again.

    The key holds everything they depend on: the logs' sizes and times, the
    directive's options, the label, the configuration and the extension's code.
    """

    def __init__(self, app: Sphinx, cache_dir: str, generated: GeneratedTrace) -> None:
        request = generated.request
        parts = [
            __version__,
            _CODE_STAMP,
            generated.plan.label,
            sorted(request.raw_options.items()),
            generated_dir(app),
            sorted(torchtrace_config(app.config).rewrite_rules().items()),
            generated.plan.max_frames,  # which frames have downloads
            generated.plan.fold_bytes,  # which graphs have pages
            [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in generated.logs],
        ]
        self.key = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()
        self.path = Path(cache_dir) / f"downloads-{label_segment(generated.plan.label)}.json"
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
            pass  # no stamp: the next build writes them again, nothing worse


MANIFEST = ".torchtrace-manifest"
_IGNORE = ".gitignore"
_OUR_HEADER = ("..", "%")  # a stub's first line: ".. generated by sphinx-torchtrace"


def _ours(path: Path) -> bool:
    """A file an earlier version wrote without a manifest: a stub or page with our header."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(_OUR_HEADER) and "generated by sphinx-torchtrace" in first


def _write_all(root: Path, wanted: dict[Path, str | None]) -> None:
    """Write what changed and remove what the extension wrote before and no longer makes.

    A ``None`` text keeps the file as it is.  The folder may hold the user's own
    files (a trace kept beside its pages, a hand-written page): a manifest lists what
    the extension wrote, only those are ever removed, overwritten or ignored for git,
    and the others are left alone with one warning.
    """
    manifest = root / MANIFEST
    try:
        written = set(json.loads(manifest.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        written = set()
    rel = {path: path.relative_to(root).as_posix() for path in wanted}
    theirs: list[str] = []
    for path, text in wanted.items():
        if text is None:
            continue
        if rel[path] not in written and path.exists() and not _ours(path):
            theirs.append(rel[path])  # never overwrite a file the user keeps there
            continue
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except (OSError, ValueError):
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", errors="replace")
    made = {rel[p] for p in wanted} - set(theirs)
    if root.exists():
        for path in sorted(root.rglob("*"), reverse=True):
            name = path.relative_to(root).as_posix()
            if path.is_dir():
                if not any(path.iterdir()):
                    path.rmdir()
            elif name in made or name in (MANIFEST, _IGNORE):
                continue
            elif name in written or _ours(path):
                path.unlink()
            else:
                theirs.append(name)
    if theirs:
        shown = ", ".join(sorted(theirs)[:5]) + (" ..." if len(theirs) > 5 else "")
        warn(
            "user_files",
            f"{root} holds {len(theirs)} files sphinx-torchtrace did not write ({shown}); "
            "they are left as they are (choose another torchtrace_generated_dir to keep "
            "generated pages apart)",
        )
    if not made:
        for path in (manifest, root / _IGNORE):
            if path.exists() and (path.name == MANIFEST or _ours_ignore(path)):
                path.unlink()
        return
    root.mkdir(parents=True, exist_ok=True)
    listed = sorted(made)
    manifest.write_text(json.dumps(listed, indent=0), encoding="utf-8")
    ignore = root / _IGNORE
    if not ignore.exists() or _ours_ignore(ignore):
        lines = [_IGNORE_HEADER, f"/{MANIFEST}", f"/{_IGNORE}"] + [f"/{n}" for n in listed]
        ignore.write_text("\n".join(lines) + "\n", encoding="utf-8")


_IGNORE_HEADER = "# written by sphinx-torchtrace: the files it generates, and only those"


def _ours_ignore(path: Path) -> bool:
    try:
        first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    except OSError:
        return False
    return first == _IGNORE_HEADER or first == "# generated by sphinx-torchtrace"
