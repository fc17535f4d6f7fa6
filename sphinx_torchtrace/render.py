"""Render a trace's site plan into rST sources with the Jinja templates in ``templates/``.

Templates get the plan and a few filters (``e`` escapes prose, ``code`` makes a
literal block, ``lit`` an inline literal); every piece of trace text passes
through the configured path rewrites before it is written.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import jinja2

from . import charts, rst
from .fastcode import is_fast
from .plan import GraphPlan, TracePlan
from .table import CELL_SEPARATOR
from .trace import STATUS_LEGEND, Artifact, Compile, compare, summary
from .trace.provenance import kernel_stack_traces, provenance_view, provenance_views

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from .generate import TraceRequest

T = TypeVar("T")
TEMPLATES = Path(__file__).parent / "templates"
#: Code blocks longer than this (characters) are written to a side file and included.
INLINE_CODE_LIMIT = 2000

#: Rewrites applied to every path in published text unless configured otherwise.
DEFAULT_PATH_REWRITES: dict[str, str] = {
    r"/[^\s\"'<>]*?/(?:site|dist)-packages/": "<site-packages>/",
    # home directories: Linux and macOS users, and the superuser's
    r"/(?:(?:home|Users)/[^/\s\"']+|root)/": "~/",
}

#: The order of the PyTorch 2 pipeline, for listing artifacts as a reader follows them.
PIPELINE = [
    "dynamo_start",
    "dynamo_output_graph",
    "optimize_ddp_split_graph",
    "optimize_ddp_split_child",
    "compiled_autograd_graph",
    "aot_joint_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
    "before_pre_grad_graph",
    "inductor_pre_grad_graph",
    "after_pre_grad_graph",
    "before_joint_graph",
    "after_joint_graph",
    "before_post_grad_graph",
    "inductor_post_grad_graph",
    "after_post_grad_graph",
    "fx_graph_runnable",
    "inductor_output_code",
    "inductor_aot_wrapper_code",
    "inductor_aot_kernel_code",
    "dynamo_guards",
    "dynamo_cpp_guards_str",
]

_LANGUAGE = {
    "inductor_output_code": "python",
    "fx_graph_runnable": "python",
    "inductor_aot_wrapper_code": "cpp",
    "inductor_aot_kernel_code": "cpp",
}


def pipeline_position(artifact: Artifact) -> int:
    try:
        return PIPELINE.index(artifact.name)
    except ValueError:
        try:
            return PIPELINE.index(artifact.kind)
        except ValueError:
            return len(PIPELINE)


def language_of(artifact: Artifact) -> str:
    if artifact.name in _LANGUAGE:
        return _LANGUAGE[artifact.name]
    if artifact.encoding == "json":
        return "json"
    if artifact.is_graph:
        return "torchtrace-fx"  # fast, FX-aware; Pygments' Python lexer is 7x slower here
    return "text"


def download_suffix(artifact: Artifact) -> str:
    if artifact.name == "fx_graph_runnable" or artifact.name == "inductor_output_code":
        return ".py"
    if language_of(artifact) == "cpp":
        return ".cpp"
    if artifact.encoding == "json":
        return ".json"
    return ".txt"


class Renderer:
    """Turns plans into ``{path relative to srcdir: text}``."""

    def __init__(self, app: Sphinx | None = None, rewrites: dict[str, str] | None = None) -> None:
        if rewrites is None:
            configured = app.config.torchtrace_path_rewrites if app is not None else None
            rewrites = DEFAULT_PATH_REWRITES if configured is None else configured
        self._rewrites = [(re.compile(p), r) for p, r in rewrites.items()]
        self.sidebar_frames = int(app.config.torchtrace_sidebar_frames) if app is not None else 50
        self._page: tuple[str, str] | None = None  # (trace root, docname) being rendered
        self._side_files: dict[str, str] = {}
        self._root = ""
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(TEMPLATES)),
            autoescape=False,  # noqa: S701 - the output is rST; rst.escape does the escaping
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            bytecode_cache=_bytecode_cache(),
        )
        self.env.filters.update(
            e=lambda v: rst.escape(self.rewrite(str(v))),
            lit=lambda v: rst.literal(self.rewrite(str(v))),
            names=lambda items: rst.literal(self.rewrite(", ".join(str(i) for i in items))),
            indent_rst=rst.indent,
            json=lambda v: json.dumps(v, indent=1, sort_keys=True, default=str),
            seconds=_seconds,
            size=_size,
        )
        self.env.globals.update(
            code=self.code,
            heading=lambda t, c="=": rst.heading(self.rewrite(t), c),
            table=rst.table,
            include=rst.literal_include,
            SEP=CELL_SEPARATOR,  # between the cells of a torchtrace-table row
            doc=_doc_link,
            status_legend=STATUS_LEGEND,
            summary=summary,
            compare=compare,
            provenance_view=_once(provenance_view),
            provenance_views=_once(provenance_views),
            kernel_stack_traces=kernel_stack_traces,
            charts=charts,
            pipeline_position=pipeline_position,
            language_of=language_of,
            is_fast=is_fast,
            group_nodes=group_nodes,
            node_list=self.node_list,
            kernels_in=lambda frame, artifact: [k for k in frame.kernels if k.artifact is artifact],
            status_counts=lambda compiles: Counter(c.status for c in compiles),
        )

    def rewrite(self, text: str) -> str:
        for pattern, replacement in self._rewrites:
            text = pattern.sub(replacement, text)
        return text

    def node_list(self, members: list[tuple[str, int | None]]) -> str:
        """Graph nodes, each with its line, as one literal: ``a (4), b (7)``.

        One literal for the list rather than one per name: provenance tables hold
        thousands of names, and each literal is two more nodes for Sphinx to process.
        """
        parts = (node + (f" ({line})" if line is not None else "") for node, line in members)
        return rst.literal(self.rewrite(", ".join(parts)))

    def code(self, text: str, language: str = "text", **options: Any) -> str:
        """A highlighted block; a long one goes to a side file and is included from there.

        docutils reads an inline block line by line, a ``literalinclude`` in one
        step: on a big trace this halves the time Sphinx spends reading.
        """
        text = self.rewrite(text)
        options.setdefault("fast", is_fast(language, len(text)))
        if len(text) < INLINE_CODE_LIMIT or self._page is None:
            return rst.code_block(text, language, **options)
        name = hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:20] + ".txt"
        path = posixpath.join(self._page[0], "_raw", "blocks", name)
        self._side_files[path] = text
        return rst.literal_include(
            posixpath.relpath(path, posixpath.dirname(self._page[1])), language, **options
        )

    def render_trace(
        self, plan: TracePlan, request: TraceRequest, detail_toctree: bool = False
    ) -> dict[str, str]:
        """Every page (and raw download) of one trace, by path relative to srcdir.

        ``detail_toctree`` puts graph and kernel pages in their frame's toctree:
        for builders that assemble one document (LaTeX, singlehtml); in HTML they
        stay orphans so the sidebar does not list thousands of pages.
        """
        no_source = "no-source" in request.options
        context = {
            "plan": plan,
            "request": request,
            "no_source": no_source,
            "detail_toctree": detail_toctree,
            # frames in the overview's toctree (and so the sidebar): all of them where one
            # document is assembled, else up to torchtrace_sidebar_frames
            "list_frames": detail_toctree or len(plan.frames) <= self.sidebar_frames,
            "raw_download": lambda g, from_doc: _raw_download(plan, g, from_doc),
        }
        out: dict[str, str] = {}
        self._side_files = out
        self._root = plan.root
        out[plan.index_docname + ".rst"] = self._render("index.rst.jinja", context)
        for rank in plan.trace.ranks:
            if rank.chromium_events:
                path = posixpath.join(plan.root, summary.chromium_file(plan.trace, rank))
                out[path] = self.rewrite(summary.chromium_events_json(rank))
        for frame in plan.frames:
            frame_ctx = {**context, "frame": frame, "c": frame.compile}
            out[frame.docname + ".rst"] = self._render("frame.rst.jinja", frame_ctx, frame.docname)
            for graph in frame.graphs:
                text = self._source(graph.artifact.text(), no_source)
                raw = _raw_path(plan, graph)
                out[raw] = self.rewrite(text)
                out[graph.docname + ".rst"] = self._render(
                    "graph.rst.jinja",
                    {**frame_ctx, "graph": graph, "a": graph.artifact, "text": text,
                     "raw": posixpath.relpath(raw, posixpath.dirname(graph.docname))},
                    graph.docname,
                )
            for kernel in frame.kernels:
                out[kernel.docname + ".rst"] = self._render(
                    "kernel.rst.jinja",
                    {**frame_ctx, "kernel": kernel, "k": kernel.kernel},
                    kernel.docname,
                )
        self._page = None
        return out

    def _render(self, template: str, context: dict[str, Any], docname: str = "") -> str:
        self._page = (self._root, docname or context["plan"].index_docname)
        return self.env.get_template(template).render(**context)

    @staticmethod
    def _source(text: str, no_source: bool) -> str:
        """With ``:no-source:``, drop the user code that graphs quote in comments."""
        if not no_source:
            return text
        return re.sub(r"(# File: [^\n]*?), code: [^\n]*", r"\1", text)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Jinja's compiled templates kept between builds, as Python keeps ``.pyc`` files.

    Compiling the templates took half a second of every build.  Jinja's own
    cache lives in a private per-user temporary folder and is keyed by each
    template's source, so an edited template is compiled afresh; without a
    usable folder, templates are compiled every time as before.
    """
    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):
        return None


def _once(compute: Callable[[Compile], T]) -> Callable[[Compile], T]:
    """Remember a per-compile computation: every graph and kernel page of a frame asks."""
    cache: dict[int, tuple[Compile, T]] = {}

    def cached(compile_: Compile) -> T:
        hit = cache.get(id(compile_))
        if hit is None or hit[0] is not compile_:
            hit = cache[id(compile_)] = (compile_, compute(compile_))
        return hit[1]

    return cached


def _raw_path(plan: TracePlan, graph: GraphPlan) -> str:
    name = posixpath.basename(graph.docname)
    return posixpath.join(plan.root, "_raw", name + download_suffix(graph.artifact))


def _raw_download(plan: TracePlan, graph: GraphPlan, from_docname: str) -> str:
    """``:download:`` markup for a graph's raw text, relative to the page that links it."""
    target = posixpath.relpath(_raw_path(plan, graph), posixpath.dirname(from_docname))
    label = "runnable .py" if graph.artifact.name == "fx_graph_runnable" else "raw"
    return f":download:`{label} <{target}>`"


def group_nodes(
    targets_of: dict[str, list[str]], lines: dict[str, int], nodes: list[str] | None = None
) -> list[tuple[list[str], list[tuple[str, int | None]]]]:
    """Graph nodes grouped by what they map to, in graph order: ``[(targets, [(node, line)])]``.

    Provenance tables list many nodes that share their kernels (a fused kernel
    computes a dozen nodes); one row per group reads better and is a fraction
    of the table cells a big trace's build has to process.
    """
    far = 1 << 60

    def where(node: str) -> tuple[int, str]:
        return (lines.get(node, far), node)

    groups: dict[tuple[str, ...], list[str]] = {}
    for node in sorted(targets_of if nodes is None else nodes, key=where):
        groups.setdefault(tuple(targets_of.get(node, [])), []).append(node)
    return [
        (list(key), [(node, lines.get(node)) for node in members])
        for key, members in groups.items()
    ]


def _doc_link(target_docname: str, from_docname: str, text: str) -> str:
    """A ``:doc:`` reference from one generated page to another, relative so it survives moves."""
    rel = posixpath.relpath(target_docname, posixpath.dirname(from_docname))
    return f":doc:`{rst.escape(text)} <{rel}>`"


def _seconds(value: Any) -> str:
    return f"{value:.3f} s" if isinstance(value, (int, float)) else "—"


def _size(value: int) -> str:
    if value >= 1 << 20:
        return f"{value / (1 << 20):.1f} MiB"
    if value >= 1 << 10:
        return f"{value / (1 << 10):.1f} KiB"
    return f"{value} B"

