"""TORCH_COMPILE_DEBUG folders in a build: stubs and downloads at ``builder-inited``, nodes
when a stub or the directive is read.

A debug folder is its own kind of input (:mod:`..trace.inputs`): its pages come from
:func:`..site.plan.plan_debug_dir` and :mod:`..site.pages.debug_dir`.  A trace log torch
wrote inside the folder (``tlparse/``) or one given with ``:with:`` becomes a second trace
of the build (label ``<label>-trace``, ``<label>-with-<n>``), with its usual pages; the graph
folders link to its frames where their content matches.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

from ..render.paths import DEFAULT_PATH_REWRITES, PathRewriter
from ..site import blocks as b
from ..site.naming import label_segment
from ..site.pages.debug_dir import build_debug_page
from ..site.plan import DebugDirPlan, PageSettings, plan_debug_dir
from ..site.source import maybe_strip
from ..trace import TraceReadError, load_trace
from ..trace.debug_dir import DebugDir, load_debug_dir, match_compiles
from .config import torchtrace_config
from .doctree import DoctreeBuilder, mark_output
from .options import TraceOptions
from .scan import TraceRequest, resolve_argument
from .warnings import warn


@dataclass
class GeneratedDebugDir:
    request: TraceRequest
    options: TraceOptions
    debug: DebugDir
    plan: DebugDirPlan
    settings: PageSettings
    rewrite: PathRewriter
    companions: list[TraceRequest] = field(default_factory=list)  # trace logs of the run


_BY_KEY: dict[str, dict[tuple[str, str], GeneratedDebugDir]] = {}
_BY_PAGE: dict[str, dict[str, GeneratedDebugDir]] = {}


def debug_registry(
    app_or_env: Sphinx | BuildEnvironment,
) -> dict[tuple[str, str], GeneratedDebugDir]:
    return _BY_KEY.setdefault(os.fspath(app_or_env.srcdir), {})


def debug_pages(app_or_env: Sphinx | BuildEnvironment) -> dict[str, GeneratedDebugDir]:
    return _BY_PAGE.setdefault(os.fspath(app_or_env.srcdir), {})


def forget_debug_dirs(app: Sphinx, exception: BaseException | None) -> None:
    for store in (_BY_KEY, _BY_PAGE):
        store.pop(os.fspath(app.srcdir), None)


def clear(app: Sphinx) -> None:
    debug_registry(app).clear()
    debug_pages(app).clear()


def generate_debug_dir(
    app: Sphinx,
    request: TraceRequest,
    options: TraceOptions,
    label: str,
    gen_dir: str,
    stub: str,
    suffix: str,
    wanted: dict[Path, str | None],
    cache_dir: str,
) -> list[TraceRequest]:
    """Plan a debug folder's pages, add their stubs and downloads to ``wanted``; returns the
    requests of the trace logs of the same run (to be generated as traces)."""
    config = torchtrace_config(app.config)
    debug = load_debug_dir(request.path)
    for d in debug.diagnostics:
        # a path alone would be taken for a docname: a node with a source says "path:"
        warn(d.kind, d.message, f"{d.path}:{d.line}" if d.line else _whole_file(d.path))
    plan = plan_debug_dir(label, debug, gen_dir)
    source_dir = Path(app.env.doc2path(request.docname)).parent
    companions: list[TraceRequest] = []
    traces: list[tuple[str, str]] = []  # (label, path)
    if debug.trace_logs:
        folder = os.fspath(debug.trace_logs[0].parent)
        traces.append((f"{label}-trace", folder))
    for n, other in enumerate(options.with_paths, 1):
        traces.append((f"{label}-with-{n}", resolve_argument(other, source_dir, app.srcdir)))
    for trace_label, path in traces:
        argument = os.path.relpath(path, source_dir)
        given = {"name": trace_label} | ({"no-source": ""} if options.no_source else {})
        companions.append(TraceRequest(request.docname, argument, "", given))
        try:
            trace = load_trace(path, display_root=app.srcdir, cache_dir=cache_dir,
                               max_bytes=config.max_log_bytes)
        except (OSError, TraceReadError):
            continue
        found = match_compiles(debug, trace)
        for g in plan.graphs:
            g.frames.extend(f"{trace_label}/{cid}" for cid in found.get(g.graph.name, ()))
        if plan.trace_label is None:
            plan.trace_label = trace_label
            plan.trace_index = f"{gen_dir}/{label_segment(trace_label)}/index"
    rules = dict(config.path_rewrites)
    if config.default_path_rewrites:
        for pattern, replacement in DEFAULT_PATH_REWRITES.items():
            rules.setdefault(pattern, replacement)
    generated = GeneratedDebugDir(
        request, options, debug, plan,
        PageSettings(no_source=options.no_source, detail_toctree=app.builder.name
                     not in ("html", "dirhtml", "linkcheck")),
        PathRewriter(rules), companions,
    )
    debug_registry(app)[(request.docname, request.argument)] = generated
    pages = debug_pages(app)
    srcdir = Path(app.srcdir)
    for docname in plan.docnames:
        pages[docname] = generated
        kind, _ = plan.page_of(docname)
        wanted[srcdir / (docname + suffix)] = stub.replace("{kind}", kind)
    for g in plan.graphs:
        for fname, raw in g.raw.items():
            text = g.graph.text(fname)
            if text is not None:
                wanted[srcdir / raw] = generated.rewrite(maybe_strip(text, options.no_source))
    return companions


def _whole_file(path: str) -> nodes.Node:
    """A location of a whole file: Sphinx writes a node with a source and no line as
    ``path:`` (a string without ``:`` would be taken for a docname)."""
    node = nodes.Element()
    node.source = path
    return node


def debug_page_nodes(directive: SphinxDirective, docname: str) -> list[nodes.Node] | None:
    """The nodes of a generated debug-folder page, or None when the page is not one."""
    generated = debug_pages(directive.env).get(docname)
    if generated is None:
        return None
    from .page import object_target

    page = build_debug_page(generated.plan, docname, generated.settings)
    if page.orphan:
        directive.env.metadata[docname]["orphan"] = True

    def special(block: object) -> list[nodes.Node]:
        if isinstance(block, b.ObjectTarget):
            return [object_target(directive, block)]
        raise TypeError(f"no nodes for {type(block).__name__}")

    builder = DoctreeBuilder(directive.env, directive.state.document, generated.rewrite,
                             special=special)
    section = builder.section(page.title, page.blocks, "page")
    directive.set_source_info(section)
    return [section]


def debug_summary_nodes(directive: SphinxDirective, argument: str) -> list[nodes.Node] | None:
    """What the ``torchtrace`` directive shows for a debug folder, or None if it is not one."""
    generated = debug_registry(directive.env).get((directive.env.docname, argument))
    if generated is None:
        return None
    plan = generated.plan
    kernels = sum(len(g.kernels) for g in plan.graphs)
    summary = b.Paragraph([
        "TORCH_COMPILE_DEBUG folder ", plan.label,
        f": {len(plan.debug.runs)} run(s), {len(plan.graphs)} graph folder(s), "
        f"{kernels} kernel(s).",
    ])
    docnames = [plan.index_docname]
    if plan.trace_index is not None:
        docnames.append(plan.trace_index)
    builder = DoctreeBuilder(directive.env, directive.state.document, generated.rewrite)
    out = builder.blocks([summary, b.Toctree(docnames)])
    wrapper = out[-1]
    if isinstance(wrapper, nodes.Element):
        wrapper["classes"].append("torchtrace-summary")
    return mark_output(out)
