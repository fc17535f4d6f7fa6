"""The element writer, and the provenance viewer's HTML built with it.

What a reader notices when it breaks: a log's string that turns into markup (a script
that runs, a chart or page that stops rendering because the SVG or HTML is no longer
well-formed), or a provenance viewer whose panes, links or highlights differ from what
the old string-built HTML showed.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from html.parser import HTMLParser
from typing import Any

import pytest

from sphinx_torchtrace.render.provenance_html import ProvenancePane, provenance_html
from sphinx_torchtrace.render.xml import Element, Json, clean_text, element, to_html, to_xml
from sphinx_torchtrace.site.artifacts import language_of
from sphinx_torchtrace.site.plan import FramePlan, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.provenance import (
    MAP_KEYS,
    ProvenanceView,
    provenance_view,
    provenance_views,
)
from sphinx_torchtrace.trace.analyses.provenance import _lines as payload_lines

from .conftest import DATA, SHARED

HOSTILE = [
    "<script>alert(1)</script>",
    "]]><x/>",
    "\"' & &amp; <!-- -->",
    "a\u2028b\u2029c",
    "\ud800lone\udfff surrogates",
    "bell\x07 nul\x00 esc\x1b del\x7f c1\x85 \ufffe",
]
INPUTS = SHARED / "tlparse-inputs" / "inputs"
PROVENANCE_LOGS = [
    SHARED / "provenance",
    INPUTS / "inductor_provenance_aot_cuda_log.txt",
    INPUTS / "inductor_provenance_aot_debug_handle_log.txt",
    INPUTS / "inductor_provenance_jit_log.txt",
    INPUTS / "inductor_provenance_jit_debug_handle_log.txt",
    DATA / "captured" / "aoti",
    DATA / "captured" / "single_op_provenance",
]


# -- the writer -----------------------------------------------------------------------------


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_text_stays_text_in_xml(hostile: str) -> None:
    root = element("svg", {"aria-label": hostile}, element("title", None, hostile), hostile)
    out = to_xml(root)
    parsed = ET.fromstring(out)  # raises on anything not well-formed
    assert parsed.get("aria-label") == clean_text(hostile)
    assert parsed[0].text == clean_text(hostile)
    assert "<script" not in out and "<x/>" not in out and "<!--" not in out
    out.encode("utf-8")  # lone surrogates would raise here


def test_characters_xml_cannot_hold_are_shown_as_escapes_and_the_rest_kept() -> None:
    assert (
        clean_text("bell\x07 nul\x00 esc\x1b del\x7f c1\x85")
        == "bell\\x07 nul\\x00 esc\\x1b del\\x7f c1\\x85"
    )
    assert clean_text("\ud800lone\udfff \ufffe\uffff") == "\\ud800lone\\udfff \\ufffe\\uffff"
    kept = "tab\t line\n cr\r \u2028 \U0001f600 é"
    assert clean_text(kept) == kept


def test_attribute_whitespace_survives_a_parser() -> None:
    out = to_xml(element("text", {"data-x": "a\tb\nc\rd"}))
    assert ET.fromstring(out).get("data-x") == "a\tb\nc\rd"


@pytest.mark.parametrize("name", ["", "1a", "a b", "a>", 'a"', "on:", "x=y", "a/b"])
def test_names_outside_the_strict_pattern_are_refused(name: str) -> None:
    with pytest.raises(ValueError):
        Element(name)
    with pytest.raises(ValueError):
        element("g", {name: "v"})
    changed = element("g")
    changed.attrs[name] = "v"  # fields stay changeable: the writer checks again
    with pytest.raises(ValueError):
        to_xml(changed)


def test_html_closes_every_element_and_keeps_void_ones_void() -> None:
    """Void elements self-closed: HTML reads ``<br/>`` as ``<br>``, and XML (an EPUB's
    XHTML) needs it closed."""
    out = to_html(element("div", {"class": "a", "hidden": None}, element("span"), element("br")))
    assert out == '<div class="a"><span></span><br/></div>'
    ET.fromstring(out)
    assert to_xml(element("g", None, element("rect", {"x": 1}))) == '<g><rect x="1"/></g>'
    with pytest.raises(ValueError):
        to_html(element("br", None, "text"))


def test_json_cannot_close_its_script_and_text_cannot_enter_one() -> None:
    data = {"k": ["</script><script>alert(1)</script>", "<!--", "&", "\u2028"]}
    out = to_html(element("script", {"type": "application/json"}, Json(data)))
    assert out.count("</script>") == 1 and "<!--" not in out
    body = out[out.index(">") + 1 : out.rindex("<")]
    assert json.loads(body) == data
    with pytest.raises(ValueError):
        to_html(element("script", None, "alert(1)"))
    with pytest.raises(ValueError):
        to_html(element("div", None, Json(data)))


# -- the provenance viewer --------------------------------------------------------------


def _view(frame: FramePlan) -> ProvenanceView | None:
    """The view the directive shows (``choose_view``): the last mapping that links lines."""
    view = provenance_view(frame.compile)
    if view is None or not view.empty:
        return view
    linked = [v for v in provenance_views(frame.compile) if not v.empty]
    return linked[-1] if linked else view


def _attributes(frame: FramePlan, view: ProvenanceView) -> dict[str, Any]:
    """A ``provenance_block`` node's attributes, as ``build_block`` makes them."""
    artifacts = {"pre": view.pre_grad, "post": view.post_grad, "code": view.code}
    titles = {"pre": "Pre-grad graph", "post": "Post-grad graph", "code": "Generated code"}
    node_lines = {"pre": view.pre_node_lines, "post": view.post_node_lines, "code": {}}
    panes: list[dict[str, Any]] = []
    for key, artifact in artifacts.items():
        graph = frame.graph_for(artifact) if artifact is not None else None
        panes.append(
            {
                "pane": key,
                "title": titles[key],
                "artifact": artifact.name if artifact is not None else "",
                "lines": payload_lines(artifact.text()) if artifact is not None else None,
                "docname": graph.docname if graph is not None else None,
                "language": language_of(artifact) if artifact is not None else "text",
                "nodes": {
                    line: name for name, line in node_lines[key].items() if name.isidentifier()
                },
            }
        )
    kernel_docs = {k.kernel.name: k.docname for k in frame.kernels}
    kernel_links: dict[int, list[list[str | None]]] = {}
    for key, lines in view.kernel_lines.items():
        name = key.rpartition(":")[0] if key.rpartition(":")[2].isdigit() else key
        for line in lines:
            entries = kernel_links.setdefault(line, [])
            if [name, kernel_docs.get(name)] not in entries:
                entries.append([name, kernel_docs.get(name)])
    code_lines = panes[2]["lines"] or []
    marker = "::run_impl(" if view.language == "cpp" else "def call("
    initial = next((n for n, line in enumerate(code_lines, 1) if marker in line), None)
    return {
        "frame": frame.name,
        "language": view.language,
        "panes": panes,
        "line_maps": {k: {int(a): list(b) for a, b in view.line_maps[k].items()} for k in MAP_KEYS},
        "kernel_links": kernel_links,
        "initial_line": initial,
    }


def _provenance_nodes() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for log in PROVENANCE_LOGS:
        plan = plan_trace("p", load_trace(log), "tt")
        for frame in plan.frames:
            view = _view(frame)
            if view is not None:
                found.append((f"{log.name} {frame.name}", _attributes(frame, view)))
    return found


NODES = _provenance_nodes()


def _uri(docname: str) -> str | None:
    return None if docname.endswith("-1") else f"../{docname}.html"


def _new(node: dict[str, Any], uri: Callable[[str], str | None] = _uri) -> str:
    panes: list[ProvenancePane] = node["panes"]
    return provenance_html(
        frame=node["frame"],
        language=node["language"],
        panes=panes,
        line_maps=node["line_maps"],
        kernel_links=node["kernel_links"],
        initial_line=node["initial_line"],
        uri=uri,
    )


def test_every_provenance_log_has_a_view() -> None:
    assert len(NODES) >= len(PROVENANCE_LOGS)


class _Viewer(HTMLParser):
    """What a reader of the viewer sees: panes, their lines' text, links and the maps."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[dict[str, str | None]] = []
        self.lines: dict[str, list[str]] = {}
        self.links: list[dict[str, str | None]] = []
        self.scripts: list[str] = []
        self.root: dict[str, str | None] = {}
        self.pane = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs, tag=tag)
        self.stack.append(found)
        if found.get("class") == "torchtrace-provenance":
            self.root = found
        if found.get("class") == "torchtrace-pane":
            self.pane = found["data-pane"] or ""
            self.lines[self.pane] = []
        if (found.get("class") or "").startswith("torchtrace-line"):
            self.lines[self.pane].append("")
        if tag == "a":
            self.links.append(found)
        if tag == "script":
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if any((e.get("class") or "").startswith("torchtrace-line") for e in self.stack):
            self.lines[self.pane][-1] += data
        if self.stack and self.stack[-1]["tag"] == "script":
            self.scripts[-1] += data


def test_viewer_shows_every_line_as_text_and_links_kernels() -> None:
    node = next(n for name, n in NODES if "jit_log" in name)
    node = dict(node, frame=HOSTILE[0])
    node["panes"] = [{**p, "lines": [*(p["lines"] or []), *HOSTILE]} for p in node["panes"]]
    viewer = _Viewer()
    viewer.feed(_new(node))
    assert viewer.root["data-frame"] == HOSTILE[0]
    for pane in node["panes"]:
        assert viewer.lines[pane["pane"]] == [clean_text(line) for line in pane["lines"]]
    (maps,) = viewer.scripts
    assert json.loads(maps)["preToPost"] == {
        str(k): v for k, v in node["line_maps"]["preToPost"].items()
    }
    kernels = [a for a in viewer.links if a["class"] == "torchtrace-kernel-link"]
    assert kernels and all((a["href"] or "").startswith("../") for a in kernels)
    assert {a["title"] for a in kernels} <= {
        f"Kernel page of {name}" for links in node["kernel_links"].values() for name, _ in links
    }
