"""Provenance highlight blocks: pre-grad graph, post-grad graph and generated code, linked.

``.. torchtrace-provenance:: <label> [<compile id>]`` (or a frame's object name,
``train/rank1/[0/0]``) shows the three texts of one compile side by side, as
``tlparse --inductor-provenance`` does, but inside any page: hovering a linked line
highlights what it became or came from in the other panes.  The line maps come from
:func:`~sphinx_torchtrace.trace.analyses.provenance.provenance_view` (or, when that last mapping
links nothing, the last one that does: see :func:`choose_view`); this module only lays
them out.  Trace text passes through the path rewrites (and ``:no-source:``) line by line,
so the line numbers stay the model's, and is HTML-escaped here.  Other builders (LaTeX,
text, man, Texinfo) get the node's children: the three listings with line numbers (unless
``:fallback: table``) and a table pre-grad node → post-grad nodes → kernels.

**DOM contract** (stable: the browser tests and the JS rely on it)::

    div.torchtrace-provenance[data-language=python|cpp][data-frame=<frame name>]
      p.torchtrace-provenance-help
      div.torchtrace-provenance-panes
        div.torchtrace-pane[data-pane=pre|post|code][role=region][aria-label][tabindex=0]
          div.torchtrace-pane-header > a.torchtrace-pane-title (full page, when there is one)
                             + code.torchtrace-pane-artifact
          pre.torchtrace-pane-body[data-initial-line]       (the scrolling element)
            span.torchtrace-line[data-line=N]               (1-based line of the artifact text)
              .torchtrace-mapped                            (the line has links: bold)
              a.torchtrace-kernel-link[href]                (code pane: kernel name -> kernel page)
              a.torchtrace-node-link[href]                  (graph panes: node name -> graph page)
          p.torchtrace-pane-missing                         (instead of the body: not logged)
      div.torchtrace-live[role=status][aria-live=polite]    ("N lines related. ...")
      script.torchtrace-provenance-maps[type=application/json]
                                                    (the six maps, tlparse's names)

The script adds ``.torchtrace-selected`` (and, when pinned by a click or the keyboard,
``aria-current="true"``) to the line under the pointer or selected, and ``.torchtrace-hl`` to
every line related to it, transitively; the live region then starts with
``"N lines related"`` (``"1 line related"``).  In singlehtml the links are fragments of
the one page (:mod:`.single_page`), made before the page is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.builders.singlehtml import SingleFileHTMLBuilder
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective, SphinxTranslator
from sphinx.writers.html5 import HTML5Translator

from ..render.provenance_html import provenance_html
from ..site.artifacts import language_of
from ..site.characters import one_line
from ..site.plan import FramePlan, PageSettings, TracePlan
from ..site.source import strip_source
from ..trace.analyses.provenance import MAP_KEYS, ProvenanceView, provenance_view, provenance_views
from ..trace.analyses.provenance import _lines as payload_lines
from ..trace.model import Artifact, Compile
from .built import built
from .doctree import label_of
from .patches.compat import builder_format
from .single_page import is_single_page, single_page
from .warnings import PROVENANCE, warn

logger = logging.getLogger(__name__)


PANE_KEYS = ("pre", "post", "code")
PANE_TITLES = {"pre": "Pre-grad graph", "post": "Post-grad graph"}
CODE_TITLES = {
    "python": "Generated code (Python wrapper)",
    "cpp": "Generated code (AOTInductor C++ wrapper)",
}

# Control characters (CR included: a lone one inside a line must not start a new one).
_COMPILE_ID = re.compile(r"^(?P<label>.*?)\s+(?P<cid>(?:rank[\w-]*/)?\[[^\]\s]*\](?:#\d+)?)$")


class provenance_block(nodes.General, nodes.Element):  # noqa: N801 - docutils node naming
    """One compile's provenance; attributes for HTML, children for every other builder
    (made from the attributes at write time, by :class:`ProvenanceFallback`).

    Attributes: ``frame`` (object name), ``language``, ``panes`` (list of
    ``{"pane", "title", "artifact", "lines" (list or None), "docname", "language"}``),
    ``line_maps`` (:data:`MAP_KEYS` -> {line: [lines]}), ``kernel_links``
    ({code line: [[kernel name, docname or None], ...]}), ``initial_line``; for the
    fallback: ``fallback`` (``listings`` or ``table``), ``mapping_rows`` (see
    :func:`mapping_rows`), ``kernel_docs`` (kernel name -> its page).
    """


class TraceSite(Protocol):
    """A trace of this build (:class:`.families.trace.GeneratedTrace`), as provenance uses it."""

    @property
    def plan(self) -> TracePlan: ...

    @property
    def settings(self) -> PageSettings: ...

    @property
    def rewrite(self) -> Callable[[str], str]: ...

    @property
    def logs(self) -> list[Path]: ...


def traces_of(env: Any) -> list[TraceSite]:
    """The traces of this build: the inputs whose plan is a trace's."""
    return [
        g  # type: ignore[misc]  # a Generated whose plan is a trace's is a TraceSite
        for g in built(env).directives.values()
        if isinstance(getattr(g, "plan", None), TracePlan)
    ]


# -- the directive ------------------------------------------------------------------


class ProvenanceDirective(SphinxDirective):
    """``.. torchtrace-provenance:: <label> [0/0]``: the provenance viewer of one compile."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = {
        # other builders: "listings" (the three texts and the table) or "table" (only the
        # table, for pages whose document already holds the texts)
        "fallback": lambda v: directives.choice(v, ("listings", "table")),
    }

    def run(self) -> list[nodes.Node]:
        argument = " ".join(self.arguments[0].split())
        found = find_frame(traces_of(self.env), argument)
        if isinstance(found, str):
            warn(PROVENANCE, found, self.get_location())
            return []
        generated, frame = found
        for log in generated.logs:  # a page of the user's: read again when a log changes
            self.env.note_dependency(str(log))
        fallback = self.options.get("fallback", "listings")
        return provenance_nodes(self, generated, frame.name, fallback)


def provenance_nodes(
    directive: SphinxDirective,
    generated: TraceSite,
    frame_name: str,
    fallback: str,
    index: int | None = None,
) -> list[nodes.Node]:
    """The provenance block of one frame of a trace (nothing, and a warning, without maps):
    of its ``index``-th node mapping, or of the one :func:`choose_view` picks."""
    frame = next((f for f in generated.plan.frames if f.name == frame_name), None)
    if frame is None:
        warn(PROVENANCE, f"no frame {frame_name!r}", directive.get_location())
        return []
    views = provenance_views(frame.compile)
    view = views[index] if index is not None and index < len(views) else choose_view(frame.compile)
    if view is None:
        warn(
            PROVENANCE,
            f"compile {frame.name!r} logged no provenance node mappings "
            "(run with INDUCTOR_PROVENANCE=1)",
            directive.get_location(),
        )
        return []
    clean = _cleaner(generated.rewrite, generated.settings.no_source)
    node = build_block(frame, view, clean, fallback)
    directive.set_source_info(node)
    return [node]


def find_frame(traces: Iterable[TraceSite], argument: str) -> tuple[TraceSite, FramePlan] | str:
    """The frame a directive argument names, or why there is none (a warning's text).

    Accepted: a frame object name (``train/[0/0]``, ``train/rank1/[0/0]#2``), a label and a
    compile id (``train [0/0]``, ``train rank1/[0/0]``), or a bare label when exactly one
    compile of that trace has node mappings that link lines.
    """
    unique: dict[int, TraceSite] = {id(t): t for t in traces}
    plans = list(unique.values())
    for generated in plans:
        for frame in generated.plan.frames:
            if frame.name == argument:
                return generated, frame
    match = _COMPILE_ID.match(argument)
    label, cid = (match["label"], match["cid"]) if match else (argument, None)
    owners = [g for g in plans if g.plan.label == label]
    if not owners:
        known = ", ".join(sorted(repr(g.plan.label) for g in plans)) or "none"
        return f"no trace labelled {label!r} in this project (traces: {known})"
    generated = owners[0]
    plan = generated.plan
    if cid is None:
        views = [(f, choose_view(f.compile)) for f in plan.frames]
        mapped = [f for f, v in views if v is not None]
        linked = [f for f, v in views if v is not None and not v.empty]
        if len(linked) == 1 or (not linked and len(mapped) == 1):
            return generated, (linked or mapped)[0]
        return (
            f"trace {label!r} has {len(mapped)} compiles with provenance node mappings; "
            f"name one: {_names(mapped)}"
        )
    candidates = [f for f in plan.frames if _frame_matches(plan, f, cid)]
    if len(candidates) == 1:
        return generated, candidates[0]
    if candidates:
        return f"compile id {cid} is ambiguous in trace {label!r}: {_names(candidates)}"
    return f"trace {label!r} has no compile {cid}"


def choose_view(compile_: Compile) -> ProvenanceView | None:
    """tlparse's view (the compile's last mapping), unless it links nothing and an earlier
    one does: a training compile logs the forward's mapping, then an empty backward one."""
    view = provenance_view(compile_)
    if view is None or not view.empty:
        return view
    linked = [v for v in provenance_views(compile_) if not v.empty]
    return linked[-1] if linked else view


def _frame_matches(plan: TracePlan, frame: FramePlan, cid: str) -> bool:
    """``[0/0]`` names the compile in any rank (ambiguous when several have it)."""
    rest = frame.name[len(plan.label) + 1 :]
    return rest == cid or (
        rest.startswith("rank") and not cid.startswith("rank") and rest.split("/", 1)[-1] == cid
    )


def _names(frames: Sequence[FramePlan]) -> str:
    shown = ", ".join(f.name for f in frames[:8])
    return shown + (", ..." if len(frames) > 8 else "") if frames else "none"


def _cleaner(rewrite: Callable[[str], str], no_source: bool) -> Callable[[str], str]:
    """Per-line publication filter: path rewrites, ``:no-source:``, no control characters.

    Works on single lines and never adds one, so line numbers stay the model's.
    """

    def clean(line: str) -> str:
        if no_source:
            line = strip_source(line)
        return one_line(rewrite(line))

    return clean


# -- building the node ----------------------------------------------------------------


def build_block(
    frame: FramePlan,
    view: ProvenanceView,
    clean: Callable[[str], str] = lambda s: s,
    fallback: str = "listings",
) -> provenance_block:
    """The node for one view: everything the HTML needs, and the fallback as children."""
    language = view.language
    artifacts: dict[str, Artifact | None] = {
        "pre": view.pre_grad,
        "post": view.post_grad,
        "code": view.code,
    }
    panes: list[dict[str, Any]] = []
    for key in PANE_KEYS:
        artifact = artifacts[key]
        graph = frame.graph_for(artifact) if artifact is not None else None
        panes.append(
            {
                "pane": key,
                "title": PANE_TITLES.get(key) or CODE_TITLES[language],
                "artifact": artifact.name if artifact is not None else "",
                "lines": (
                    [clean(line) for line in payload_lines(artifact.text())]
                    if artifact is not None
                    else None
                ),
                # "docname#anchor" for a graph shown on its frame page
                "docname": (
                    None
                    if graph is None
                    else f"{graph.docname}#{graph.anchor}"
                    if graph.anchor
                    else graph.docname
                ),
                "language": language_of(artifact) if artifact is not None else "text",
                # graph panes: line -> the node defined there, linked to its graph page
                "nodes": {
                    line: name
                    for name, line in (
                        view.pre_node_lines
                        if key == "pre"
                        else view.post_node_lines
                        if key == "post"
                        else {}
                    ).items()
                    if name.isidentifier()  # tlparse's matching also finds "class X(...)"
                },
            }
        )
    line_maps = {key: {int(k): list(v) for k, v in view.line_maps[key].items()} for key in MAP_KEYS}
    kernel_docs = kernel_docnames(frame, view)
    kernel_links: dict[int, list[list[str | None]]] = {}
    for key, lines in view.kernel_lines.items():
        name = kernel_base(key)
        for line in lines:
            entries = kernel_links.setdefault(line, [])
            if [name, kernel_docs.get(name)] not in entries:
                entries.append([name, kernel_docs.get(name)])
    node = provenance_block(
        frame=frame.name,
        language=language,
        panes=panes,
        line_maps=line_maps,
        kernel_links=kernel_links,
        initial_line=_initial_line(panes[2]["lines"], language, view),
    )
    node["classes"].append("torchtrace-provenance-fallback")
    # Other builders' children are made at write time (ProvenanceFallback): HTML never
    # shows them, and a big trace's mapping tables were a tenth of its doctree nodes.
    node["fallback"] = fallback
    node["mapping_rows"] = mapping_rows(view)
    node["kernel_docs"] = kernel_docs
    return node


def kernel_base(key: str) -> str:
    """``cpp_fused_relu_0:2`` -> ``cpp_fused_relu_0``: the debug handle (v2.0 maps) dropped."""
    name, sep, handle = key.rpartition(":")
    return name if sep and handle.isdigit() else key


def kernel_docnames(frame: FramePlan, view: ProvenanceView) -> dict[str, str]:
    """Kernel name -> its kernel page (``docname#anchor`` for a kernel folded on its frame
    page), preferring kernels of the code pane's artifact."""
    found: dict[str, str] = {}
    for plan in sorted(frame.kernels, key=lambda k: k.artifact is not view.code):
        where = f"{plan.docname}#{plan.anchor}" if plan.anchor else plan.docname
        found.setdefault(plan.kernel.name, where)
    return found


def _initial_line(lines: list[str] | None, language: str, view: ProvenanceView) -> int | None:
    """Where the code pane opens: C++ at ``run_impl`` (as tlparse), Python at ``call``."""
    if not lines:
        return None
    marker = "::run_impl(" if language == "cpp" else "def call("
    for number, line in enumerate(lines, 1):
        if marker in line:
            return number
    mapped = view.code_to_post
    return min(mapped) if mapped else None


# -- fallback (non-HTML builders) ------------------------------------------------------


class ProvenanceFallback(SphinxPostTransform):
    """Every builder but HTML shows a block's children: the listings and the mapping table."""

    default_priority = 5  # before ReferencesResolver (10): the table's kernel links resolve

    def run(self, **kwargs: Any) -> None:
        if builder_format(self) == "html":
            return
        for node in self.document.findall(provenance_block):
            if not node.children:
                node += fallback_children(node)


def fallback_children(node: provenance_block) -> list[nodes.Node]:
    """The listings (unless ``fallback`` is ``table``) and the node mapping table."""
    panes: list[dict[str, Any]] = node["panes"]
    out: list[nodes.Node] = []
    intro = nodes.paragraph()
    intro += nodes.Text(f"Inductor provenance of {node['frame']}: ")
    intro += nodes.Text(
        "which pre-grad node became which post-grad nodes, and which kernels compute them."
    )
    out.append(intro)
    if node.get("fallback", "listings") == "listings":
        for pane in panes:
            out.append(nodes.rubric("", f"{pane['title']}: {pane['artifact'] or 'not logged'}"))
            lines = pane["lines"]
            if lines is None:
                out.append(nodes.paragraph("", "Not logged for this compile."))
                continue
            out.append(_listing(lines, pane["language"]))
    out.append(nodes.rubric("", "Node mappings"))
    rows: list[MappingRow] = node["mapping_rows"]
    if not rows:
        out.append(nodes.paragraph("", "The node mappings link no nodes of these graphs."))
        return out
    out.append(_table(rows, node["kernel_docs"]))
    return out


def _listing(lines: list[str], language: str) -> nodes.literal_block:
    """A numbered listing whose numbers are the artifact's lines (leading blanks dropped:
    Pygments would drop them and shift every number)."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    text = "\n".join(lines[start:]) or " "
    block = nodes.literal_block(text, text, language=language, linenos=True)
    block["highlight_args"] = {"linenostart": start + 1}
    block["classes"].append("torchtrace-provenance-listing")
    return block


MappingRow = tuple[list[tuple[str, int | None]], list[tuple[str, int | None]], list[str]]


def mapping_rows(view: ProvenanceView) -> list[MappingRow]:
    """Rows of (pre-grad nodes, post-grad nodes, kernel keys), each node with its line.

    One row per pre-grad node (in graph order), then one per post-grad node no pre-grad
    node reaches (a single operator's graph, or nodes Inductor added).
    """
    pre_lines, post_lines = view.pre_node_lines, view.post_node_lines
    rows: list[MappingRow] = []
    reached: set[str] = set()

    def order(node: str, lines: dict[str, int]) -> tuple[int, str]:
        return (lines.get(node, 1 << 30), node)

    for pre in sorted(view.pre_to_post, key=lambda n: order(n, pre_lines)):
        posts = sorted(set(view.pre_to_post[pre]), key=lambda n: order(n, post_lines))
        reached.update(posts)
        kernels = _unique(k for p in posts for k in view.post_to_kernels.get(p, []))
        rows.append(([(pre, pre_lines.get(pre))], [(p, post_lines.get(p)) for p in posts], kernels))
    rest = set(view.post_to_pre) | set(view.post_to_kernels)
    for post in sorted(rest - reached, key=lambda n: order(n, post_lines)):
        pres = sorted(set(view.post_to_pre.get(post, [])), key=lambda n: order(n, pre_lines))
        rows.append(
            (
                [(p, pre_lines.get(p)) for p in pres],
                [(post, post_lines.get(post))],
                _unique(view.post_to_kernels.get(post, [])),
            )
        )
    return rows


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _table(rows: list[MappingRow], kernel_docs: dict[str, str]) -> nodes.table:
    table = nodes.table(classes=["torchtrace-provenance-table"])
    group = nodes.tgroup(cols=3)
    table += group
    for width in (30, 35, 35):  # characters in text output, proportions elsewhere
        group += nodes.colspec(colwidth=width)
    head = nodes.thead()
    group += head
    head += _row([nodes.Text(t)] for t in ("Pre-grad node", "Post-grad nodes", "Kernels"))
    body = nodes.tbody()
    group += body
    for pres, posts, kernels in rows:
        body += _row(
            [
                _node_cell(pres),
                _node_cell(posts),
                _joined(_kernel_ref(k, kernel_docs.get(kernel_base(k))) for k in kernels),
            ]
        )
    return table


def _row(cells: Iterable[list[nodes.Node]]) -> nodes.row:
    row = nodes.row()
    for content in cells:
        entry = nodes.entry()
        para = nodes.paragraph()
        para.extend(content)
        entry += para
        row += entry
    return row


def _node_cell(named: list[tuple[str, int | None]]) -> list[nodes.Node]:
    parts: list[list[nodes.Node]] = []
    for name, line in named:
        part: list[nodes.Node] = [nodes.literal(name, name)]
        if line is not None:
            part.append(nodes.Text(f" (line {line})"))
        parts.append(part)
    return _joined(parts) if parts else [nodes.Text("—")]


def _kernel_ref(key: str, docname: str | None) -> list[nodes.Node]:
    literal = nodes.literal(key, key)
    if docname is None:
        return [literal]
    page, _, anchor = docname.partition("#")
    if anchor:  # a kernel folded on its frame page
        ref = addnodes.pending_xref(
            "",
            refdomain="std",
            reftype="ref",
            reftarget=label_of(page, anchor),
            refexplicit=True,
        )
    else:
        ref = addnodes.pending_xref(
            "", refdomain="std", reftype="doc", reftarget="/" + docname, refexplicit=True
        )
    ref += literal
    return [ref]


def _joined(parts: Iterable[list[nodes.Node]]) -> list[nodes.Node]:
    out: list[nodes.Node] = []
    for part in parts:
        if out:
            out.append(nodes.Text(", "))
        out.extend(part)
    return out or [nodes.Text("—")]


# -- HTML ---------------------------------------------------------------------------


def render_html(node: provenance_block, uri: Callable[[str], str | None]) -> str:
    """The viewer's markup, built by :mod:`..render.provenance_html` (which escapes).

    ``uri(docname)`` gives a link to a page of this build, or None where none can be made.
    """
    return provenance_html(
        frame=node["frame"],
        language=node["language"],
        panes=node["panes"],
        line_maps=node["line_maps"],
        kernel_links=node["kernel_links"],
        initial_line=node["initial_line"],
        uri=uri,
    )


def visit_provenance_html(self: HTML5Translator, node: provenance_block) -> None:
    builder = self.builder
    env = builder.env
    current = getattr(builder, "current_docname", None) or env.docname

    single: dict[str, str] = node.get("single_page_hrefs", {})

    def uri(target: str) -> str | None:
        if isinstance(builder, SingleFileHTMLBuilder):  # made on the assembled page
            return single.get(target)
        docname, _, anchor = target.partition("#")
        if docname not in env.all_docs:
            return None
        try:
            found = builder.get_relative_uri(current, docname)
        except Exception:  # noqa: BLE001 - a link is worth less than the page
            return None
        return found + "#" + anchor if anchor else found

    self.body.append(render_html(node, uri))
    raise nodes.SkipNode


def single_page_hrefs(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """singlehtml: each block's links as fragments of the one page, made (aliases of
    repeated ids included) before any of the page is written."""
    if not is_single_page(app, docname):
        return
    page = single_page(doctree, docname)
    for node in doctree.findall(provenance_block):
        targets = {p["docname"] for p in node["panes"] if p.get("docname")}
        targets |= {e[1] for links in node["kernel_links"].values() for e in links if e[1]}
        hrefs: dict[str, str] = {}
        for target in sorted(targets):
            href = page.href(*target.split("#", 1))
            if href is not None:
                hrefs[target] = href
        node["single_page_hrefs"] = hrefs


def _pass(self: SphinxTranslator, node: nodes.Node) -> None:
    """Other builders show the children (listings and mapping table)."""


# -- registration ------------------------------------------------------------------


def setup_provenance(app: Sphinx) -> None:
    """The ``torchtrace-provenance`` directive, its node and the viewer's JS and CSS."""
    passthrough = (_pass, _pass)
    app.add_node(
        provenance_block,
        html=(visit_provenance_html, _pass),
        latex=passthrough,
        text=passthrough,
        man=passthrough,
        texinfo=passthrough,
    )
    app.add_directive("torchtrace-provenance", ProvenanceDirective)
    app.add_post_transform(ProvenanceFallback)
    app.connect("doctree-resolved", single_page_hrefs, priority=901)  # after the page's links
    # after extension.py's own builder-inited handler, so the static folder is added once


__all__ = [
    "ProvenanceDirective",
    "ProvenanceFallback",
    "build_block",
    "choose_view",
    "fallback_children",
    "find_frame",
    "mapping_rows",
    "provenance_block",
    "render_html",
    "setup_provenance",
]
