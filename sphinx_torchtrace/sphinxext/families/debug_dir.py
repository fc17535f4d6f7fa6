"""TORCH_COMPILE_DEBUG folders: the ``torchtrace`` directive's other kind.

Its pages come from :func:`...site.plan.plan_debug_dir` and
:mod:`...site.pages.debug_dir`.  A trace log torch wrote inside the folder
(``tlparse/``) or one given with ``:with:`` becomes a second input of the build
(label ``<label>-trace``, ``<label>-with-<n>``, ``:no-source:`` kept), read by the
trace kind with its usual pages; the graph folders link to its frames where their
content matches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ...render.paths import PathRewriter
from ...site import blocks as b
from ...site.blocks import Page
from ...site.naming import label_segment
from ...site.pages.debug_dir import build_debug_page
from ...site.plan import DebugDirPlan, PageSettings, plan_debug_dir, plan_trace
from ...site.source import maybe_strip
from ...trace import Trace, TraceReadError, load_trace
from ...trace.analyses.compile_time import compile_time_tree
from ...trace.inputs.debug_dir import DebugDir, load_debug_dir, matching_compiles
from ...trace.inputs.formats import DEBUG_DIR
from ...trace.inputs.opening import OpenedInput
from ..doctree import DoctreeBuilder
from ..project_root import page_rules
from ..scan import DirectiveRequest, resolve_argument
from ..secrets import debug_masker, warn_debug_secrets
from ..targets import object_target
from ..warnings import Note, diagnostic, warn
from .base import Context, page_section
from .trace_options import DIRECTIVE, TraceOptions, ineffective_notes


@dataclass
class GeneratedDebugDir:
    """A debug folder as this build knows it."""

    request: DirectiveRequest
    options: TraceOptions
    debug: DebugDir
    plan: DebugDirPlan
    settings: PageSettings
    rewrite: PathRewriter
    companions: list[DirectiveRequest] = field(default_factory=list)  # trace logs of the run
    notes: list[Note] = field(default_factory=list)

    @property
    def logs(self) -> list[Path]:
        return []  # its files are read when the build starts, each time

    def page(self, docname: str) -> Page:
        return build_debug_page(self.plan, docname, self.settings)

    def meanings(self) -> dict[str, str]:
        return {}  # no object whose meaning a recapture changes under the same name

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        def special(builder: DoctreeBuilder, block: object) -> list[nodes.Node]:
            if isinstance(block, b.ObjectTarget):
                return [object_target(directive, block, self.rewrite)]
            raise TypeError(f"no nodes for {type(block).__name__}")

        return page_section(directive, docname, self.page(docname), self.rewrite, special)

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        plan = self.plan
        kernels = sum(len(g.kernels) for g in plan.graphs)
        summary = b.Paragraph(
            [
                "TORCH_COMPILE_DEBUG folder ",
                plan.label,
                f": {len(plan.debug.runs)} run(s), {len(plan.graphs)} graph folder(s), "
                f"{kernels} kernel(s).",
            ]
        )
        docnames = [plan.index_docname]
        if plan.trace_index is not None:
            docnames.append(plan.trace_index)
        builder = DoctreeBuilder(directive.env, directive.state.document, self.rewrite)
        out = builder.blocks([summary, b.Toctree(docnames)])
        wrapper = out[-1]
        if isinstance(wrapper, nodes.Element):
            wrapper["classes"].append("torchtrace-summary")
        return out


def generate_debug_dir(
    context: Context, request: DirectiveRequest, options: TraceOptions, opened: OpenedInput
) -> list[DirectiveRequest]:
    """Plan the pages of a debug folder (``opened``: a ``torchtrace`` directive's input, its
    label claimed); returns the requests of the trace logs of its run."""
    debug = load_debug_dir(request.path, opened.debug_shape)
    _warn_diagnostics(debug)
    plan = plan_debug_dir(request.label(), debug, context.gen_dir)
    companions = _run_traces(context, request, options, debug)
    read = [t for c in companions if (t := _link_trace(context, plan, debug, c)) is not None]
    generated = _generated(context, request, options, debug, plan, read, companions)
    generated.notes.extend(ineffective_notes(opened.is_folder, DEBUG_DIR, options))
    context.register(request, DIRECTIVE, generated)
    _add_pages(context, generated)
    return companions


def _warn_diagnostics(debug: DebugDir) -> None:
    """What reading the folder found, each at its file (and line)."""
    for d in debug.diagnostics:
        # a path alone would be taken for a docname: a node with a source says "path:"
        warn(
            diagnostic(d.subtype),
            d.message,
            f"{d.path}:{d.line}" if d.line else _whole_file(d.path),
        )


def _run_traces(
    context: Context, request: DirectiveRequest, options: TraceOptions, debug: DebugDir
) -> list[DirectiveRequest]:
    """The trace logs of the run, as directives of the same page and line: the one torch
    wrote inside the folder (``<label>-trace``), then each ``:with:`` (``<label>-with-<n>``);
    each request's path is the log's, resolved."""
    label = request.label()
    source_dir = context.source_dir(request)
    traces: list[tuple[str, str]] = []  # (label, path)
    if debug.trace_logs:
        traces.append((f"{label}-trace", os.fspath(debug.trace_logs[0].parent)))
    for n, other in enumerate(options.with_paths, 1):
        traces.append((f"{label}-with-{n}", resolve_argument(other, source_dir, context.srcdir)))
    out = []
    for trace_label, path in traces:
        given = {"name": trace_label} | ({"no-source": ""} if options.no_source else {})
        argument = os.path.relpath(path, source_dir)
        out.append(DirectiveRequest(request.docname, argument, path, given, line=request.line))
    return out


def _link_trace(
    context: Context, plan: DebugDirPlan, debug: DebugDir, companion: DirectiveRequest
) -> Trace | None:
    """Read one trace log of the run and link each graph folder to the frames of that
    trace whose compiles it matches; the first log read is the run's trace on the pages.
    None when it cannot be read (its own directive warns)."""
    config = context.config
    try:
        trace = load_trace(
            companion.path,
            display_root=context.srcdir,
            cache_dir=context.cache_dir,
            max_bytes=config.max_log_bytes,
        )
    except (OSError, TraceReadError):
        return None
    found = matching_compiles(debug, trace)
    # the trace's own frame objects, as its directive names them (ranks, repeats
    # after a reset, the frame cap): a compile with no frame object is not linked
    frames = (
        plan_trace(companion.label(), trace, context.gen_dir, config.max_frames, config.fold_bytes)
        if found
        else None
    )
    for g in plan.graphs:
        for compile_ in found.get(g.graph.name, ()):
            frame = frames.frame_for(compile_) if frames is not None else None
            if frame is not None and frame.name not in g.frames:
                g.frames.append(frame.name)
    if plan.trace_label is None:
        plan.trace_label = trace_label = companion.label()
        plan.trace_index = f"{context.gen_dir}/{label_segment(trace_label)}/index"
        tree = compile_time_tree(trace)  # the folder's own files carry no times
        plan.trace_compile_seconds = tree.seconds if tree.children else None
    return trace


def _generated(
    context: Context,
    request: DirectiveRequest,
    options: TraceOptions,
    debug: DebugDir,
    plan: DebugDirPlan,
    read: list[Trace],
    companions: list[DirectiveRequest],
) -> GeneratedDebugDir:
    """The folder as the build knows it, with the path rewrites of the folder and of the
    run's traces (their project roots are hidden here too) and its secrets masked."""
    masker = debug_masker(context.config, debug)
    warn_debug_secrets(request.label(), debug, masker)
    return GeneratedDebugDir(
        request,
        options,
        debug,
        plan,
        PageSettings(no_source=options.no_source, detail_toctree=context.detail_toctree),
        PathRewriter(page_rules(context.config, context.srcdir, read), masker),
        companions,
    )


def _add_pages(context: Context, generated: GeneratedDebugDir) -> None:
    """Its pages, and a download of each graph folder's raw files."""
    plan = generated.plan
    for docname in plan.docnames:
        kind, _ = plan.page_of(docname)
        context.add_page(docname, generated, kind)
    no_source = generated.options.no_source
    for g in plan.graphs:
        for fname, raw in g.raw.items():
            text = g.graph.text(fname)
            if text is not None:
                context.add_file(raw, generated.rewrite(maybe_strip(text, no_source)))


def _whole_file(path: str) -> nodes.Node:
    """A location of a whole file: Sphinx writes a node with a source and no line as
    ``path:`` (a string without ``:`` would be taken for a docname)."""
    node = nodes.Element()
    node.source = path
    return node
