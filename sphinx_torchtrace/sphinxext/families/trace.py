"""Trace logs and folders, and TORCH_LOGS text logs: the ``torchtrace`` directive's main kind.

A text log is read into the same model as a trace (:mod:`...trace.inputs.text_log`), so both
get the same pages: an overview, a page per frame, pages for big graphs and their
kernels (small ones are folds on their frame's page).  Downloads (raw graph texts,
chromium events, long records) are written beside the stubs, path-rewritten, and only
when what they depend on changed (:class:`_DownloadStamp`).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ...render.paths import PathRewriter
from ...site import blocks as b
from ...site.artifacts import json_text, shown_record
from ...site.blocks import Page
from ...site.characters import console_text
from ...site.divergence_words import divergence_words
from ...site.naming import label_segment
from ...site.pages import build_page
from ...site.pages.overview import triage_blocks
from ...site.plan import GraphPlan, PageSettings, TracePlan, plan_trace
from ...site.published import published_trace
from ...site.source import maybe_strip
from ...trace import Trace, TraceReadError
from ...trace.analyses.break_registry import installed_registry
from ...trace.analyses.chromium import chromium_events_all_ranks, chromium_events_json
from ...trace.analyses.divergence import divergence, diverging_kinds
from ...trace.analyses.naming import function_name, function_place
from ...trace.folders import real_root, refusal
from ...trace.inputs.kinds import TRACE, detect_kind
from ...trace.inputs.loader import choose_logs, rank_logs
from ...trace.inputs.loading import LoadNote, load_input
from ...trace.inputs.no_records import has_records, no_records_message
from ...trace.runtime import MAX_PROFILES, RUNTIME_DIR, meta_file, profile_files, profile_lines
from ...version import __version__
from ..config import torchtrace_config
from ..doctree import DoctreeBuilder, chart_nodes
from ..files import CODE_STAMP, Content
from ..glance import GLANCE_OF
from ..project_root import page_rules
from ..provenance import provenance_nodes
from ..scan import DirectiveRequest, resolve_argument
from ..secrets import trace_masker, warn_trace_secrets
from ..targets import object_target
from ..warnings import OPTION, Note, WarningType, diagnostic, logger, warn
from .base import Context, build_date, missing_input, page_section, resolve_logs_safely
from .debug_dir import DebugDirKind
from .family import Family, Options
from .trace_options import (
    DIRECTIVE,
    OPTION_EFFECTS,
    OPTION_KINDS,
    OPTION_SPEC,
    TraceOptions,
    ineffective_notes,
    input_paths,
    parse_options,
)

#: The family's own warning subtypes (``Family.warnings``).
UNMATCHED = WarningType(
    "unmatched",
    "a text log given with :with: names compiles its trace has not (a log of "
    "another run?): their lines are shown under [-/-]",
)
DIVERGENCE = WarningType(
    "divergence",
    "the ranks of a trace diverge (compile ids, statuses, caches, graph shapes, "
    "collective schedules, tensor metadata or execution order); only with "
    "torchtrace_warn_divergence = True",
)
READ = diagnostic("read")
#: The subtype of each note of :func:`...trace.inputs.loading.load_input`.
LOAD_NOTES: dict[LoadNote, WarningType] = {"read": READ, "option": OPTION, "unmatched": UNMATCHED}


@dataclass
class GeneratedTrace:
    """A trace as this build knows it: its request, options, model, site plan and settings."""

    request: DirectiveRequest
    options: TraceOptions
    trace: Trace
    plan: TracePlan
    settings: PageSettings
    rewrite: PathRewriter
    notes: list[Note] = field(default_factory=list)  # (subtype, message) to warn
    extra_logs: list[Path] = field(default_factory=list)  # ``:with:`` files read
    #: The paths whose ``runtime/`` profiles the trace read (the trace log's or folder).
    runtime_from: list[str] = field(default_factory=list)

    @property
    def logs(self) -> list[Path]:
        """Every file the pages depend on (the trace's logs, then ``:with:`` files, then
        the runtime profiles it read and their meta files)."""
        own = resolve_logs_safely(self.request.path, self.options.latest, self.options.ranks)
        out = own + [p for p in self.extra_logs if p not in own]
        return out + [p for source in self.runtime_from for p in runtime_inputs(source)]

    def page(self, docname: str) -> Page:
        return build_page(self.plan, docname, self.settings)

    def meanings(self) -> dict[str, str]:
        """Each frame object: the compiled function, where it starts (path-rewritten)."""
        out: dict[str, str] = {}
        for frame in self.plan.paged_frames:
            c = frame.compile
            function = function_name(c) or "(unknown function)"
            place = function_place(c)
            out[frame.name] = self.rewrite(f"{function} ({place})" if place else function)
        return out

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        return page_section(
            directive,
            docname,
            self.page(docname),
            self.rewrite,
            lambda builder, block: self._special(directive, builder, block),
        )

    def _special(
        self, directive: SphinxDirective, builder: DoctreeBuilder, block: object
    ) -> list[nodes.Node]:
        """Blocks that need more of Sphinx than a node: objects, charts, provenance."""
        if isinstance(block, b.ObjectTarget):
            return [object_target(directive, block, self.rewrite)]
        if isinstance(block, b.Chart):
            return chart_nodes(builder, block)
        if isinstance(block, b.Provenance):
            return provenance_nodes(directive, self, block.frame, block.fallback, block.view)
        raise TypeError(f"no nodes for {type(block).__name__}")

    def summary_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        """The answer at a glance and the way into the trace's pages.

        The glance's figures are the only ones said here: a count of its own (attempts as
        compilations, records outside any compile as one) contradicted the line below it.
        """
        plan = self.plan
        said = b.Paragraph(["Trace ", plan.label, ", at a glance:"])
        builder = DoctreeBuilder(directive.env, directive.state.document, self.rewrite)
        glance = triage_blocks(plan, self.settings, titled=False)  # the answer first
        out = builder.blocks([said, *glance])
        for node in out:  # said again by the overview, which a book prints right after
            if isinstance(node, nodes.Element) and self.settings.shows("glance"):
                node[GLANCE_OF] = plan.index_docname
        out += builder.blocks([b.Toctree([plan.index_docname])])
        wrapper = out[-1]
        assert isinstance(wrapper, nodes.Element)
        wrapper["classes"].append("torchtrace-summary")
        return out


class TraceKind:
    """Trace logs and folders, and text logs (``:format: torch-logs`` or detected)."""

    def accepts(self, path: str, options: TraceOptions) -> bool:
        return True  # the last kind asked: whatever the other kinds are not

    def generate(
        self, context: Context, request: DirectiveRequest, options: TraceOptions
    ) -> list[DirectiveRequest]:
        if not context.claim_label(request, DIRECTIVE):
            return []
        if not os.path.exists(request.path):
            context.fail(request, DIRECTIVE, missing_input(request.argument, request.path), READ)
            return []
        config = context.config
        kind = options.format or detect_kind(request.path)
        source_dir = context.source_dir(request)
        try:
            loaded = load_input(
                request.path,
                kind,
                [resolve_argument(p, source_dir, context.srcdir) for p in options.with_paths],
                latest=options.latest,
                ranks=options.ranks,
                display_root=context.srcdir,
                cache_dir=context.cache_dir,
                max_bytes=config.max_log_bytes,
            )
        except TraceReadError as e:
            context.fail(
                request,
                DIRECTIVE,
                str(e),
                READ,
                resolve_logs_safely(request.path, options.latest, options.ranks),
            )
            return []
        trace = loaded.trace
        if not has_records(trace):  # no report that reads "no problems": one warning here
            context.fail(
                request,
                DIRECTIVE,
                no_records_message(request.path, kind, request.argument),
                READ,
                resolve_logs_safely(request.path, options.latest, options.ranks),
            )
            return []
        for d in trace.diagnostics:
            if d.kind != "mixed_runs":  # said at the directive, which can choose (notes)
                # "path:" for a whole file, as Sphinx writes it (no ":" would mean a docname)
                warn(
                    diagnostic(d.kind), d.message, f"{d.path}:{d.line}" if d.line else f"{d.path}:"
                )
        label = request.label()
        _say_which_logs(request, label, options)
        logs = resolve_logs_safely(request.path, options.latest, options.ranks)
        masker = trace_masker(config, [trace], [*logs, *loaded.extra_logs])
        warn_trace_secrets(label, trace, masker)
        # what the pages show, masked by record
        shown = published_trace(trace, masker, homes=config.default_path_rewrites)
        plan = plan_trace(label, shown, context.gen_dir, config.max_frames, config.fold_bytes)
        settings = PageSettings(
            no_source=options.no_source,
            sections=options.sections,
            sidebar_limit=None if context.detail_toctree else config.sidebar_frames,
            detail_toctree=context.detail_toctree,
            break_registry=installed_registry() if config.graph_break_registry else None,
            made_on=build_date(),
        )
        generated = GeneratedTrace(
            request,
            options,
            shown,
            plan,
            settings,
            PathRewriter(page_rules(config, context.srcdir, [trace]), masker),
            extra_logs=loaded.extra_logs,
            # the trace is the directive's path, or a :with: trace beside a text log
            runtime_from=[request.path] if kind == TRACE else list(map(str, loaded.extra_logs)),
        )
        context.register(request, DIRECTIVE, generated)
        generated.notes.extend(ineffective_notes(request.path, kind, options))
        generated.notes.extend((LOAD_NOTES[kind], message) for kind, message in loaded.notes)
        generated.notes.extend(
            (diagnostic(d.kind), d.message) for d in trace.diagnostics if d.kind == "mixed_runs"
        )
        if plan.past_limit:
            generated.notes.append((diagnostic("limit"), _past_limit_note(plan)))
        if config.warn_divergence and trace.is_multi_rank:
            diverging = divergence_words(diverging_kinds(divergence(trace)))
            if diverging:
                generated.notes.append(
                    (
                        DIVERGENCE,
                        "the ranks diverge in " + ", ".join(diverging) + " (see the overview)",
                    )
                )
        found: set[int | None]
        if loaded.text_ranks is not None:
            found = loaded.text_ranks
        elif os.path.isdir(request.path):
            found = set(rank_logs(request.path))
        else:  # one log: :ranks: has no effect (said above)
            found = set(options.ranks or ())
        lacking = [r for r in options.ranks or () if r not in found]
        if lacking:
            known = ", ".join(str(r) for r in sorted(r for r in found if r is not None))
            generated.notes.append(
                (
                    OPTION,
                    f":ranks: {', '.join(map(str, lacking))} not in the trace "
                    f"(its ranks: {known or 'none'})",
                )
            )
        for docname in plan.docnames:
            context.add_page(docname, generated, page_kind(plan, docname))
        stamp = _DownloadStamp(context, generated)
        kept = stamp.unchanged_files()
        if kept is not None:
            for relpath in kept:
                context.add_file(relpath, None)
            return []
        downloads = _downloads(generated)
        for relpath, text in downloads.items():
            context.add_file(relpath, text)
        stamp.save(list(downloads))
        return []


def runtime_inputs(path: str) -> list[Path]:
    """The files of ``run --runtime`` a trace at ``path`` (a log or a folder) reads: its
    folder's ``runtime/`` profiles, each with its meta file if it has one; a page showing
    them depends on them as on its logs.

    Only files the trace may read are listed (their content is digested): never a link out
    of the folder nor a FIFO, and neither a profile whose meta file is refused (it is not
    read) nor one past :data:`MAX_PROFILES`.  A profile that appears, goes, changes or is
    refused changes the list or a listed file's content, so the pages are read again; an
    unchanged folder reads nothing again."""
    folder = Path(path) if os.path.isdir(path) else Path(path).parent
    root = real_root(folder)
    profiles, _ = profile_files(folder / RUNTIME_DIR, root)
    out: list[Path] = []
    for profile in profiles[:MAX_PROFILES]:
        meta = meta_file(profile)
        if not os.path.lexists(meta):
            out.append(profile)
        elif refusal(meta, root) is None:  # a file that may be read
            out += [profile, meta]
    return out


def page_kind(plan: TracePlan, docname: str) -> str:
    """``overview``, ``frame``, ``graph`` or ``kernel``: what the stub of a page says it is."""
    frame, item = plan.page_of(docname)
    if frame is None:
        return "overview"
    if item is None:
        return "frame"
    return "graph" if isinstance(item, GraphPlan) else "kernel"


def _past_limit_note(plan: TracePlan) -> str:
    """What the frame cap left out, and the setting that raises it."""
    left = len(plan.past_limit)
    paged = sum(not f.compile.id.is_unknown for f in plan.frames)
    return (
        f"trace {plan.label!r} has {paged + left} compiles; the first {paged} get pages "
        f'and {left} are only listed on its overview ("Frames past the limit"): raise '
        f"torchtrace_max_frames (now {plan.max_frames}) to give them pages"
    )


def _say_which_logs(request: DirectiveRequest, label: str, options: TraceOptions) -> None:
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


def _downloads(generated: GeneratedTrace) -> dict[str, Content]:
    """The files a trace's pages offer for download, by path relative to the sources; the
    large ones (chromium events, raw graphs) are made when written, one at a time."""
    plan, rewrite, no_source = generated.plan, generated.rewrite, generated.settings.no_source

    def shown(text: str) -> str:
        return rewrite(maybe_strip(text, no_source))

    def text_of(make: Callable[[], str]) -> Callable[[], list[str]]:
        return lambda: [shown(make())]

    out: dict[str, Content] = {}
    for rank_plan in plan.ranks:
        if plan.own_events(rank_plan):
            events = partial(chromium_events_json, rank_plan.rank)
            out[rank_plan.events_path] = text_of(events)
    if plan.events_all_path is not None:
        trace = plan.trace
        out[plan.events_all_path] = lambda: map(shown, chromium_events_all_ranks(trace))
    for profile in plan.trace.runtime:  # torch's Chrome trace, as the profiler wrote it
        if profile.path in plan.runtime_downloads and profile.file:
            out[plan.runtime_downloads[profile.path]] = partial(profile_lines, profile, shown)
    for frame in plan.paged_frames:  # a rank that repeats another offers that rank's files
        for graph in frame.graphs:
            if graph.same_as is not None or not graph.raw_path:  # another's file, or shown whole
                continue
            out[graph.raw_path] = text_of(graph.artifact.text)
        for raw in frame.downloads:  # too large to show on the frame page
            out[raw.raw_path] = text_of(raw.artifact.text)
        for record in frame.compile.metrics:  # records too long to show whole
            path = frame.record_download(record)
            if path is not None:
                out[path] = shown(json_text(shown_record(record.data, no_source)))
    return out


class _DownloadStamp:
    """Remembers which downloads a trace wrote, so an unchanged trace does not write them again.

    The key holds everything they depend on: the logs' sizes and times, the
    directive's options, the label, the configuration and the extension's code.
    """

    def __init__(self, context: Context, generated: GeneratedTrace) -> None:
        request = generated.request
        parts = [
            __version__,
            CODE_STAMP,
            generated.plan.label,
            sorted(request.raw_options.items()),
            context.gen_dir,
            sorted(torchtrace_config(context.app.config).rewrite_rules().items()),
            torchtrace_config(context.app.config).secrets_keep,  # what is masked in them
            generated.plan.max_frames,  # which frames have downloads
            generated.plan.fold_bytes,  # which graphs have pages
            [(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in generated.logs],
        ]
        self.key = hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()
        name = f"downloads-{label_segment(generated.plan.label)}.json"
        self.path = Path(context.cache_dir) / name
        self.context = context

    def unchanged_files(self) -> list[str] | None:
        try:
            saved = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(saved, dict):  # damaged: the downloads are written again
            return None
        files = saved.get("files")
        if saved.get("key") != self.key or not isinstance(files, list):
            return None
        if not all(isinstance(f, str) and self.context.has_download(f) for f in files):
            return None
        return files

    def save(self, files: list[str]) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"key": self.key, "files": files}), "utf-8")
        except OSError:
            pass  # no stamp: the next build writes them again, nothing worse


FAMILY = Family(
    name=DIRECTIVE,
    summary="a trace log or folder, a debug folder or a text log, and its pages",
    options=Options(OPTION_SPEC, parse_options, OPTION_KINDS, OPTION_EFFECTS),
    kinds=(DebugDirKind(), TraceKind()),  # the catch-all last
    input_paths=input_paths,
    warnings=(UNMATCHED, DIVERGENCE),
)
