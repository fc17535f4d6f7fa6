"""``.. torchtrace-provenance::``: the three linked panes, in real builds of every provenance log.

What a reader notices when it breaks: a pane that is empty or shows other lines than the
log, highlights that link the wrong lines (the JSON the script reads differs from the
model's maps), bold lines that do nothing, kernel links to missing pages, a PDF or text
build without the listings and the node table, a silent typo in a label.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
from dataclasses import dataclass, field
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.render.paths import PathRewriter
from sphinx_torchtrace.site.plan import PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.sphinxext.families.trace import GeneratedTrace
from sphinx_torchtrace.sphinxext.families.trace_options import TraceOptions
from sphinx_torchtrace.sphinxext.provenance import (
    build_block,
    choose_view,
    fallback_children,
    find_frame,
    provenance_block,
    render_html,
)
from sphinx_torchtrace.sphinxext.scan import DirectiveRequest
from sphinx_torchtrace.trace import Trace, load_trace
from sphinx_torchtrace.trace.analyses.provenance import ProvenanceView, provenance_view
from sphinx_torchtrace.trace.analyses.provenance import _lines as payload_lines

from .conftest import DATA, SHARED

INPUTS = SHARED / "tlparse-inputs" / "inputs"
#: Every provenance log: JIT and AOT, CPU and CUDA, mapping versions 1 and 2.0.
LOGS = {
    "cpu-jit": SHARED / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log",
    "aot-cuda": INPUTS / "inductor_provenance_aot_cuda_log.txt",
    "aot-debug-handle": INPUTS / "inductor_provenance_aot_debug_handle_log.txt",
    "aot": INPUTS / "inductor_provenance_aot_log.txt",
    "aot-old": INPUTS / "inductor_provenance_aot_log_old.txt",
    "extended": INPUTS / "inductor_provenance_extended_log.txt",
    "jit-cuda": INPUTS / "inductor_provenance_jit_cuda_log.txt",
    "jit-debug-handle": INPUTS / "inductor_provenance_jit_debug_handle_log.txt",
    "jit": INPUTS / "inductor_provenance_jit_log.txt",
    "aoti-captured": DATA / "captured" / "aoti" / "dedicated_log_torch_trace_6w34n_rm.log",
    "single-op": DATA
    / "captured"
    / "single_op_provenance"
    / "dedicated_log_torch_trace_aui929la.log",
}
PANES = ["pre", "post", "code"]


@functools.cache
def planned(label: str) -> TracePlan:
    return plan_trace(label, load_trace(LOGS[label]), "torchtrace")


def view_of(label: str, name: str) -> ProvenanceView:
    view = choose_view(next(f for f in planned(label).frames if f.name == name).compile)
    assert view is not None
    return view


def frame_with_links(label: str) -> tuple[str, str]:
    """(compile id, frame object name) of the compile whose mappings link lines."""
    for frame in planned(label).frames:
        view = choose_view(frame.compile)
        if view is not None and not view.empty:
            return str(frame.compile.id), frame.name
    raise AssertionError(f"{label}: no compile with provenance links")


def write_site(srcdir: Path, labels: list[str], extra: str = "") -> Path:
    """A project whose index shows each trace and its provenance block (logs copied in)."""
    (srcdir / "logs").mkdir(parents=True)
    (srcdir / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\n', encoding="utf-8")
    parts = ["Provenance\n==========\n"]
    for label in labels:
        shutil.copy(LOGS[label], srcdir / "logs" / LOGS[label].name)
        cid, _ = frame_with_links(label)
        parts.append(
            f".. torchtrace:: /logs/{LOGS[label].name}\n   :name: {label}\n\n"
            f".. torchtrace-provenance:: {label} {cid}\n"
        )
    (srcdir / "index.rst").write_text("\n".join(parts) + extra, encoding="utf-8")
    return srcdir


def build(srcdir: Path, builder: str) -> SphinxTestApp:
    app = SphinxTestApp(
        builder,
        srcdir=srcdir,
        freshenv=True,
        status=StringIO(),
        warning=StringIO(),
        confoverrides={"show_warning_types": True},  # the default from Sphinx 8 on
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return app


# -- reading the HTML back --------------------------------------------------------------


@dataclass
class Line:
    number: int
    classes: set[str]
    text: str = ""
    links: list[str] = field(default_factory=list)


@dataclass
class Pane:
    key: str
    attrs: dict[str, str]
    title_href: str | None = None
    initial_line: int | None = None
    lines: list[Line] = field(default_factory=list)


@dataclass
class Block:
    attrs: dict[str, str]
    panes: list[Pane] = field(default_factory=list)
    maps_json: str = ""
    live: bool = False


class BlockParser(HTMLParser):
    """The provenance blocks of a page, as the DOM contract describes them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self._line: Line | None = None
        self._line_depth = 0
        self._spans = 0
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = set(a.get("class", "").split())
        if tag == "div" and "torchtrace-provenance" in classes:
            self.blocks.append(Block(a))
        elif not self.blocks:
            return
        elif tag == "div" and "torchtrace-pane" in classes:
            self.blocks[-1].panes.append(Pane(a["data-pane"], a))
        elif tag == "div" and "torchtrace-live" in classes:
            self.blocks[-1].live = a.get("aria-live") == "polite"
        elif tag == "pre" and "torchtrace-pane-body" in classes and "data-initial-line" in a:
            self.blocks[-1].panes[-1].initial_line = int(a["data-initial-line"])
        elif tag == "a" and "torchtrace-pane-title" in classes:
            self.blocks[-1].panes[-1].title_href = a["href"]
        elif tag == "span":
            self._spans += 1
            if "torchtrace-line" in classes:
                self._line = Line(int(a["data-line"]), classes)
                self._line_depth = self._spans
                self.blocks[-1].panes[-1].lines.append(self._line)
        elif tag == "a" and self._line is not None:
            self._line.links.append(a["href"])
        elif tag == "script" and "torchtrace-provenance-maps" in classes:
            assert a.get("type") == "application/json"
            self._in_script = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self.blocks:
            if self._line is not None and self._spans == self._line_depth:
                self._line = None
            self._spans -= 1
        elif tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._line is not None:
            self._line.text += data
        elif self._in_script:
            self.blocks[-1].maps_json += data


def blocks_of(page: Path) -> dict[str, Block]:
    parser = BlockParser()
    parser.feed(page.read_text(encoding="utf-8"))
    return {b.attrs["data-frame"]: b for b in parser.blocks}


def published(text: str) -> list[str]:
    """The lines a pane should show: the payload's, with the default path rewrites."""
    rewrite = PathRewriter()
    return [rewrite(line) for line in payload_lines(text)]


# -- HTML: every provenance log -------------------------------------------------------------


@pytest.fixture(scope="module")
def html_site(tmp_path_factory: pytest.TempPathFactory) -> SphinxTestApp:
    srcdir = write_site(tmp_path_factory.mktemp("provenance") / "site", list(LOGS))
    return build(srcdir, "html")


def test_html_build_has_no_provenance_warning(html_site: SphinxTestApp) -> None:
    assert "torchtrace.provenance" not in html_site.warning.getvalue()
    static = html_site.outdir / "_static"
    assert (static / "sphinx-torchtrace.js").is_file()  # the viewer is in the one script
    assert (static / "sphinx-torchtrace.css").is_file()
    page = (html_site.outdir / "index.html").read_text(encoding="utf-8")
    assert "_static/sphinx-torchtrace.js" in page
    assert "_static/sphinx-torchtrace.css" in page


def resolves(outdir: Path, href: str) -> bool:
    """A link of a page at the top of ``outdir`` leads to a file that has its anchor (a
    graph or kernel folded on its frame page is an anchor there)."""
    path, _, anchor = href.partition("#")
    target = outdir / path
    if path.endswith("/") or target.is_dir():  # dirhtml
        target = target / "index.html"
    if not target.is_file():
        return False
    return not anchor or f'id="{anchor}"' in target.read_text(encoding="utf-8")


@pytest.mark.parametrize("label", list(LOGS))
def test_three_panes_show_the_logged_texts(html_site: SphinxTestApp, label: str) -> None:
    _, name = frame_with_links(label)
    block = blocks_of(html_site.outdir / "index.html")[name]
    view = view_of(label, name)
    assert [p.key for p in block.panes] == PANES
    assert block.attrs["data-language"] == view.language
    assert block.live
    for pane, artifact in zip(block.panes, (view.pre_grad, view.post_grad, view.code), strict=True):
        assert artifact is not None
        assert pane.attrs["role"] == "region" and pane.attrs["tabindex"] == "0"
        assert artifact.name in pane.attrs["aria-label"]
        assert [line.text for line in pane.lines] == published(artifact.text())
        assert [line.number for line in pane.lines] == list(range(1, len(pane.lines) + 1))
        # the pane's title opens the artifact: its own page, or its fold on the frame page
        assert pane.title_href is not None
        assert resolves(html_site.outdir, pane.title_href), pane.title_href


@pytest.mark.parametrize("label", list(LOGS))
def test_the_script_reads_the_models_maps(html_site: SphinxTestApp, label: str) -> None:
    _, name = frame_with_links(label)
    block = blocks_of(html_site.outdir / "index.html")[name]
    view = view_of(label, name)
    maps = json.loads(block.maps_json)
    assert maps == {k: {str(n): v for n, v in m.items()} for k, m in view.line_maps.items()}
    # bold (linked) lines are exactly the lines the maps start from
    mapped = {
        p.key: {line.number for line in p.lines if "torchtrace-mapped" in line.classes}
        for p in block.panes
    }
    assert mapped["pre"] == set(view.line_maps["preToPost"])
    assert mapped["post"] == set(view.line_maps["postToPre"]) | set(view.post_to_code)
    assert mapped["code"] == set(view.code_to_post)
    assert mapped["pre"] and mapped["post"] and mapped["code"]


@pytest.mark.parametrize("label", list(LOGS))
def test_kernel_calls_link_to_kernel_pages(html_site: SphinxTestApp, label: str) -> None:
    _, name = frame_with_links(label)
    block = blocks_of(html_site.outdir / "index.html")[name]
    code = block.panes[2]
    links = [(line, href) for line in code.lines for href in line.links]
    assert links, "no kernel call of the code pane links to its kernel page"
    for line, href in links:
        assert resolves(html_site.outdir, href), href
        assert line.number in {n for ns in view_of(label, name).kernel_lines.values() for n in ns}


def test_single_operator_post_grad_pane_is_not_empty(html_site: SphinxTestApp) -> None:
    """tlparse shows an empty post-grad pane for a one-operator program; we must not."""
    block = blocks_of(html_site.outdir / "index.html")["single-op/[0/0]"]
    post = block.panes[1]
    assert any("aten.relu" in line.text for line in post.lines)
    relu = next(line for line in post.lines if line.text.strip().startswith("relu"))
    assert "torchtrace-mapped" in relu.classes
    maps = json.loads(block.maps_json)
    assert maps["postToPre"][str(relu.number)]
    assert maps["postToPyCode"][str(relu.number)]
    # the graph's class name is text, not markup
    assert any("class <lambda>" in line.text for line in post.lines)
    raw = (html_site.outdir / "index.html").read_text(encoding="utf-8")
    assert "class <lambda>" not in raw and "class &lt;lambda&gt;" in raw


def test_cpp_code_pane_opens_at_run_impl(html_site: SphinxTestApp) -> None:
    """As tlparse does: the wrapper's first hundreds of lines are declarations."""
    for label, marker in (("aot-cuda", "::run_impl("), ("cpu-jit", "def call(")):
        _, name = frame_with_links(label)
        code = blocks_of(html_site.outdir / "index.html")[name].panes[2]
        assert code.initial_line is not None
        assert marker in code.lines[code.initial_line - 1].text


# -- other builders: the fallback -----------------------------------------------------------


@pytest.fixture(scope="module")
def small_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_site(tmp_path_factory.mktemp("provenance-small") / "site", ["single-op", "aot"])


def test_text_build_has_listings_and_mapping_table(small_site: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(small_site, site)
    app = build(site, "text")
    assert "torchtrace.provenance" not in app.warning.getvalue()
    text = (app.outdir / "index.txt").read_text(encoding="utf-8")
    for heading in (
        "Pre-grad graph: before_pre_grad_graph",
        "Post-grad graph: inductor_post_grad_graph",
        "Generated code (Python wrapper): inductor_output_code",
        "Post-grad graph: after_post_grad_graph",
        "Generated code (AOTInductor C++ wrapper): inductor_aot_wrapper_code",
    ):
        assert heading in text
    # a line of each listing, and the table's columns and kernels
    assert "torch.relu(l_x_)" in text
    assert "torch.ops.aten.relu.default(arg0_1)" in text
    assert "AOTInductorModel::run_impl(" in text
    assert "Pre-grad node" in text and "Post-grad nodes" in text
    assert "cpp_fused_relu_0:1" in text  # a version 2.0 kernel key, with its debug handle
    assert "cpp_fused_mul_relu_sigmoid_0" in text  # a version 1 key


def test_latex_build_has_listings_and_mapping_table(small_site: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(small_site, site)
    app = build(site, "latex")
    assert "torchtrace.provenance" not in app.warning.getvalue()
    tex = next(app.outdir.glob("*.tex")).read_text(encoding="utf-8")
    title = "Inductor provenance of single\\sphinxhyphen{}op/{[}0/0{]}"
    # The frame page shows the block too (with only the table: its graphs have pages);
    # the user's page shows the listings, then the table.
    starts = [i for i in range(len(tex)) if tex.startswith(title, i)]
    blocks = [tex[i : tex.index("\\end{tabulary}", i)] for i in starts]
    block = next(b for b in blocks if "\\begin{sphinxVerbatim}" in b)
    assert block.count("\\begin{sphinxVerbatim}") == 3
    assert "numbers=left" in block
    assert "Pre\\sphinxhyphen{}grad node" in block
    assert "Node mappings" in block
    assert "cpp\\_fused\\_relu\\_0:1" in block


def test_dirhtml_and_singlehtml_links(small_site: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(small_site, site)
    app = build(site, "dirhtml")
    block = blocks_of(app.outdir / "index.html")["single-op/[0/0]"]
    hrefs = [h for line in block.panes[2].lines for h in line.links]
    assert hrefs
    for href in hrefs:
        assert resolves(app.outdir, href), href
    single = build(site, "singlehtml")
    block = blocks_of(single.outdir / "index.html")["single-op/[0/0]"]
    # every page is on the one page: each link is a fragment of it, and lands
    hrefs = [h for line in block.panes[2].lines for h in line.links]
    assert hrefs and all(h.startswith("#") and h.count("#") == 1 for h in hrefs)
    for href in hrefs:
        assert resolves(single.outdir, href), href
    assert len(block.panes[2].lines) > 10


# -- naming a compile, and mistakes --------------------------------------------------------


def test_unknown_label_or_compile_warns_at_the_directive(tmp_path: Path) -> None:
    extra = (
        "\n.. torchtrace-provenance:: nope [0/0]\n"
        "\n.. torchtrace-provenance:: cpu-jit [7/0]\n"
        "\n.. torchtrace-provenance:: cpu-jit [-/-]\n"
    )
    app = build(write_site(tmp_path / "site", ["cpu-jit"], extra), "html")
    warnings = app.warning.getvalue()
    lines = [w for w in warnings.splitlines() if "[torchtrace.provenance]" in w]
    assert len(lines) == 3, warnings
    assert "no trace labelled 'nope'" in lines[0] and "index.rst:" in lines[0]
    assert "has no compile [7/0]" in lines[1]
    assert "logged no provenance node mappings" in lines[2]  # [-/-] exists, has no mappings
    # the good block still renders
    assert "cpu-jit/[0/0]" in blocks_of(app.outdir / "index.html")


def _generated(trace: Trace, label: str) -> GeneratedTrace:
    return GeneratedTrace(
        DirectiveRequest("index", label, label),
        TraceOptions(),
        trace,
        plan_trace(label, trace, "tt"),
        PageSettings(),
        PathRewriter(),
    )


def test_find_frame_accepts_object_names_label_and_id_and_ranks() -> None:
    path = INPUTS / "multi_rank_messy_input"
    trace = load_trace(path)
    generated = _generated(trace, "ranks")
    found = find_frame([generated], "ranks/rank1/[0/0]")
    assert not isinstance(found, str) and found[1].name == "ranks/rank1/[0/0]"
    found = find_frame([generated], "ranks rank1/[0/0]")
    assert not isinstance(found, str) and found[1].name == "ranks/rank1/[0/0]"
    ambiguous = find_frame([generated], "ranks [0/0]")
    assert isinstance(ambiguous, str) and "ambiguous" in ambiguous
    assert "ranks/rank0/[0/0]" in ambiguous

    # a bare label: the one compile whose mappings link lines, or the choice to make
    single = load_trace(LOGS["single-op"])
    one = _generated(single, "p")
    found = find_frame([one], "p")
    assert not isinstance(found, str) and found[1].name == "p/[0/0]"
    two = load_trace(LOGS["cpu-jit"])
    both = _generated(two, "q")
    choice = find_frame([one, both], "q")
    assert isinstance(choice, str) and "q/[0/0], q/[0/1]" in choice


def test_an_empty_last_mapping_falls_back_to_the_linked_one() -> None:
    """[0/1] of the CPU log logs a linked mapping, then an empty one (as training does)."""
    trace = load_trace(LOGS["cpu-jit"])
    compile_ = next(c for c in trace.ranks[0].compiles if str(c.id) == "[0/1]")
    last = provenance_view(compile_)
    assert last is not None and last.empty
    chosen = choose_view(compile_)
    assert chosen is not None and not chosen.empty


# -- escaping ---------------------------------------------------------------------------------


def test_html_escapes_every_piece_of_trace_text() -> None:
    hostile = '</script><img src=x onerror="alert(1)">'
    trace = load_trace(LOGS["single-op"])
    plan = plan_trace("p", trace, "tt")
    frame = plan.frames[0]
    view = choose_view(frame.compile)
    assert view is not None
    node = build_block(frame, view, lambda line: line + hostile)
    node["frame"] = hostile
    node["panes"][0]["title"] = hostile
    node["panes"][0]["artifact"] = hostile
    out = render_html(node, lambda docname: '"><script>x</script>' + docname)
    assert "<img" not in out
    assert out.count("<script") == 1  # only the JSON's own element
    assert "</script><img" not in out
    parser = BlockParser()
    parser.feed(out)
    (block,) = parser.blocks
    assert block.attrs["data-frame"] == hostile
    assert all(line.text.endswith(hostile) for pane in block.panes for line in pane.lines)
    assert json.loads(block.maps_json)["preToPost"] == {"6": [4]}


def test_node_children_are_the_fallback() -> None:
    trace = load_trace(LOGS["single-op"])
    frame = plan_trace("p", trace, "tt").frames[0]
    view = choose_view(frame.compile)
    assert view is not None
    node = build_block(frame, view)
    assert isinstance(node, provenance_block)
    assert not node.children  # made at write time, for builders other than HTML
    node += fallback_children(node)
    listings = [c for c in node.findall() if c.tagname == "literal_block"]
    assert len(listings) == 3
    tables = [c for c in node.findall() if c.tagname == "table"]
    assert len(tables) == 1
    assert "relu" in tables[0].astext()
    assert "cpp_fused_relu_0:1" in tables[0].astext()
    table_only = build_block(frame, view, fallback="table")
    assert not [c for c in fallback_children(table_only) if c.tagname == "literal_block"]


def test_graph_node_names_link_to_their_graph_pages(small_site: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(small_site, site)
    app = build(site, "html")
    pages = [p.read_text(encoding="utf-8") for p in Path(app.outdir).rglob("*.html")]
    links = [
        m
        for page in pages
        for m in re.findall(r'<a class="torchtrace-node-link" href="([^"]+)"', page)
    ]
    assert links, "no node name was linked"
    assert all("graph-" in href for href in links)
