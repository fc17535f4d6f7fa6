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
from ...site.published import ShownPayload, published_trace
from ...site.source import maybe_strip
from ...trace import Trace, TraceReadError
from ...trace.analyses.break_registry import installed_registry
from ...trace.analyses.chromium import chromium_events_all_ranks, chromium_events_json
from ...trace.analyses.divergence import divergence, diverging_aspects
from ...trace.analyses.naming import function_name, function_place
from ...trace.inputs.formats import DEBUG_DIR
from ...trace.inputs.loading import LoadedInput, LoadNote, load_input
from ...trace.inputs.no_records import has_records, no_records_message
from ...trace.inputs.opening import FileStamp, OpenedInput, open_input
from ...trace.model import Artifact
from ...trace.runtime import profile_lines
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
from .base import Context, build_date, missing_input, page_section
from .debug_dir import generate_debug_dir
from .family import Family, Options
from .trace_kept import MODEL_LOADS, Made, kept_trace, recorded, save_made
from .trace_options import (
    DIRECTIVE,
    OPTION_EFFECTS,
    OPTION_FORMATS,
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
    #: What the directive named and its ``:with:`` files, opened (their logs, companions
    #: and stamps), and the ``runtime/`` profiles the trace read with their meta files.
    inputs: list[OpenedInput] = field(default_factory=list)
    runtime: list[Path] = field(default_factory=list)
    #: The path rewrites alone, for a text the published copy masked already (a payload).
    paths_only: Callable[[str], str] | None = None

    @property
    def logs(self) -> list[Path]:
        """Every file the pages depend on (the trace's logs, then ``:with:`` files, then
        the runtime profiles it read and their meta files)."""
        own = self.inputs[0].logs if self.inputs else []
        out = own + [p for p in self.extra_logs if p not in own]
        return out + self.runtime

    def stamps(self) -> list[tuple[str, int, int]]:
        """Each of :attr:`logs` as it was opened: path, size and modification time."""
        known = {s.path: s for opened in self.inputs for s in opened.stamps}
        out = []
        for path in self.logs:
            found = known.get(path) or FileStamp(path, -1, -1)
            out.append((str(path), found.size, found.mtime_ns))
        return out

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

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
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


class TraceHandler:
    """What a ``torchtrace`` directive names, opened once: a trace log or folder, a text log
    (``:format: torch-logs`` or detected), or a debug folder (:mod:`.debug_dir`'s pages)."""

    def accepts(self, path: str, options: TraceOptions) -> bool:
        return True  # the family's one kind: the input's format decides, once opened

    def generate(
        self, context: Context, request: DirectiveRequest, options: TraceOptions
    ) -> list[DirectiveRequest]:
        if not context.claim_label(request, DIRECTIVE):
            return []
        opened = open_input(
            request.path, format=options.format, latest=options.latest, ranks=options.ranks
        )
        if opened.format == DEBUG_DIR:
            return generate_debug_dir(context, request, options, opened)
        if not opened.exists:
            context.fail(request, DIRECTIVE, missing_input(request.argument, request.path), READ)
            return []
        kept = kept_trace(
            context, request, opened, lambda: _read(context, request, options, opened)
        )
        if kept is not None:  # nothing it depends on changed: not read again
            kept.register(context, DIRECTIVE)
            return []
        with recorded() as said:
            generated = _read(context, request, options, opened)
        if generated is None:
            return []
        context.register(request, DIRECTIVE, generated)
        plan = generated.plan
        pages = [(docname, page_role(plan, docname)) for docname in plan.docnames]
        for docname, kind in pages:
            context.add_page(docname, generated, kind)
        downloads = _add_downloads(context, generated)
        made = Made(pages, downloads, generated.meanings(), [])
        save_made(context, request, opened, generated, made, said)
        return []


def _read(
    context: Context, request: DirectiveRequest, options: TraceOptions, opened: OpenedInput
) -> GeneratedTrace | None:
    """The input read, masked and planned, with the notes its directive says."""
    loaded = _load(context, request, options, opened)
    if loaded is None:
        return None
    generated = _generated(context, request, options, opened, loaded)
    generated.notes.extend(_notes(context, generated, opened, loaded))
    return generated


def _load(
    context: Context, request: DirectiveRequest, options: TraceOptions, opened: OpenedInput
) -> LoadedInput | None:
    """The input read into the model, its diagnostics warned; None when it cannot be read
    or holds no record (the directive says why, at its own line)."""
    source_dir = context.source_dir(request)
    MODEL_LOADS.n += 1
    try:
        loaded = load_input(
            opened,
            [resolve_argument(p, source_dir, context.srcdir) for p in options.with_paths],
            display_root=context.srcdir,
            cache_dir=context.cache_dir,
            max_bytes=context.config.max_log_bytes,
        )
    except TraceReadError as e:
        context.fail(request, DIRECTIVE, str(e), READ, opened.logs)
        return None
    trace = loaded.trace
    if not has_records(trace):  # no report that reads "no problems": one warning here
        message = no_records_message(request.path, opened.format, request.argument)
        context.fail(request, DIRECTIVE, message, READ, opened.logs)
        return None
    for d in trace.diagnostics:
        if d.subtype != "mixed_runs":  # said at the directive, which can choose (notes)
            # "path:" for a whole file, as Sphinx writes it (no ":" would mean a docname)
            where = f"{d.path}:{d.line}" if d.line else f"{d.path}:"
            warn(diagnostic(d.subtype), d.message, where)
    return loaded


def _generated(
    context: Context,
    request: DirectiveRequest,
    options: TraceOptions,
    opened: OpenedInput,
    loaded: LoadedInput,
) -> GeneratedTrace:
    """The trace as its pages show it: masked, planned, with its settings."""
    config, trace = context.config, loaded.trace
    label = request.label()
    _say_which_logs(label, opened)
    masker = trace_masker(config, [trace], [*opened.logs, *loaded.extra_logs])
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
    rules = page_rules(config, context.srcdir, [trace])
    # the trace is the directive's path, or a :with: trace beside a text log
    read = loaded.trace_input
    return GeneratedTrace(
        request,
        options,
        shown,
        plan,
        settings,
        PathRewriter(rules, masker),
        extra_logs=loaded.extra_logs,
        inputs=[opened, *loaded.others],
        runtime=list(read.companions) if read is not None else [],
        paths_only=PathRewriter(rules, _masked_already),
    )


def _masked_already(text: str) -> str:
    """A text of the published copy: masked as read (masking again finds nothing)."""
    return text


def _notes(
    context: Context, generated: GeneratedTrace, opened: OpenedInput, loaded: LoadedInput
) -> list[Note]:
    """What the directive says at its own line: options without effect, ``:with:`` files,
    mixed runs, the frame cap, diverging ranks, ranks asked that the trace lacks."""
    options, plan, trace = generated.options, generated.plan, loaded.trace
    notes: list[Note] = ineffective_notes(opened.is_folder, opened.format, options)
    notes.extend((LOAD_NOTES[subtype], message) for subtype, message in loaded.notes)
    notes.extend(
        (diagnostic(d.subtype), d.message) for d in trace.diagnostics if d.subtype == "mixed_runs"
    )
    if plan.past_limit:
        notes.append((diagnostic("limit"), _past_limit_note(plan)))
    if context.config.warn_divergence and trace.is_multi_rank:
        diverging = divergence_words(diverging_aspects(divergence(trace)))
        if diverging:
            said = "the ranks diverge in " + ", ".join(diverging) + " (see the overview)"
            notes.append((DIVERGENCE, said))
    found: set[int | None]
    if loaded.text_ranks is not None:
        found = loaded.text_ranks
    elif opened.is_folder:
        found = set(opened.folder_ranks)
    else:  # one log: :ranks: has no effect (said above)
        found = set(options.ranks or ())
    lacking = [r for r in options.ranks or () if r not in found]
    if lacking:
        known = ", ".join(str(r) for r in sorted(r for r in found if r is not None))
        notes.append(
            (
                OPTION,
                f":ranks: {', '.join(map(str, lacking))} not in the trace "
                f"(its ranks: {known or 'none'})",
            )
        )
    return notes


def _add_downloads(context: Context, generated: GeneratedTrace) -> list[str]:
    """The trace's downloads, made again only when what they depend on changed."""
    stamp = _DownloadStamp(context, generated)
    kept = stamp.unchanged_files()
    if kept is not None:
        for relpath in kept:
            context.add_file(relpath, None)
        return kept
    downloads = _downloads(generated)
    for relpath, text in downloads.items():
        context.add_file(relpath, text)
    stamp.save(list(downloads))
    return list(downloads)


def page_role(plan: TracePlan, docname: str) -> str:
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


def _say_which_logs(label: str, opened: OpenedInput) -> None:
    """An info line naming the log(s) a directory stood for, and why those."""
    if opened.is_folder and opened.choice is not None:
        describe = opened.choice.describe()
        logger.info("torchtrace: %s: %s", console_text(label), console_text(describe))


def _downloads(generated: GeneratedTrace) -> dict[str, Content]:
    """The files a trace's pages offer for download, by path relative to the sources; the
    large ones (chromium events, raw graphs) are made when written, one at a time."""
    plan, rewrite, no_source = generated.plan, generated.rewrite, generated.settings.no_source

    def shown(text: str) -> str:
        return rewrite(maybe_strip(text, no_source))

    def text_of(make: Callable[[], str]) -> Callable[[], list[str]]:
        return lambda: [shown(make())]

    paths_only = generated.paths_only

    def payload_of(artifact: Artifact) -> Callable[[], list[str]]:
        """A payload's download: the published copy's text, masked once as it was read
        (whole, as logged), its paths rewritten; with ``:no-source:``, masked again once
        its code lines are cut, as its page shows it."""
        if paths_only is None or no_source or not isinstance(artifact.payload, ShownPayload):
            return text_of(artifact.text)
        return lambda: [paths_only(artifact.text())]

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
            out[graph.raw_path] = payload_of(graph.artifact)
        for raw in frame.downloads:  # too large to show on the frame page
            out[raw.raw_path] = payload_of(raw.artifact)
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
            generated.stamps(),
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
    description="a trace log or folder, a debug folder or a text log, and its pages",
    options=Options(OPTION_SPEC, parse_options, OPTION_FORMATS, OPTION_EFFECTS),
    handlers=(TraceHandler(),),  # a debug folder too: its format is known once it is opened
    input_paths=input_paths,
    warnings=(UNMATCHED, DIVERGENCE),
)
