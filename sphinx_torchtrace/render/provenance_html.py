"""The provenance viewer's HTML: three panes of numbered lines, linked, and their line maps.

The DOM is the contract described in :mod:`sphinx_torchtrace.sphinxext.provenance` (the
browser tests and the viewer's script rely on it).  It is built as an element tree
(:mod:`.xml`), so a trace's line, node name or artifact name is always escaped text and
the line maps go in as JSON the script element cannot be closed by.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict

from ..trace.analyses.provenance import MAP_KEYS
from .xml import Element, Json, Node, element, to_html

#: A link from a code line to a kernel page: ``[kernel name, docname or None]``.
KernelLink = Sequence[str | None]
LineMaps = Mapping[str, Mapping[int, Sequence[int]]]
Uri = Callable[[str], str | None]

_HELP: tuple[Node, ...] = (
    "Bold lines are linked: point at one, or click it to keep the selection, to highlight "
    "what it became or came from in the other panes (a kernel's underlined name is a link "
    "to its page). In a focused pane, ",
    element("kbd", None, "↓"),
    "/",
    element("kbd", None, "↑"),
    " (or ",
    element("kbd", None, "j"),
    "/",
    element("kbd", None, "k"),
    ") step through linked lines and ",
    element("kbd", None, "Esc"),
    " clears.",
)


class ProvenancePane(TypedDict, total=False):
    """One pane as the provenance node holds it (see ``build_block``)."""

    pane: str  # "pre", "post" or "code"
    title: str
    artifact: str  # the artifact's name, "" when not logged
    lines: list[str] | None  # None: not logged for this compile
    docname: str | None  # the artifact's page
    language: str
    nodes: Mapping[int, str]  # graph panes: line -> the node defined there


def provenance_html(
    *,
    frame: str,
    language: str,
    panes: Sequence[ProvenancePane],
    line_maps: LineMaps,
    kernel_links: Mapping[int, Sequence[KernelLink]],
    initial_line: int | None,
    uri: Uri,
) -> str:
    """The viewer of one compile's provenance, as HTML ending in a newline.

    ``uri(docname)`` gives a link to a page of this build, or None where none can be made
    (singlehtml, a page not built); ``kernel_links`` maps a code line to the kernels it
    calls; ``initial_line`` is where the code pane opens.
    """
    language = "cpp" if language == "cpp" else "python"
    root = element(
        "div",
        {"class": "torchtrace-provenance", "data-language": language, "data-frame": frame},
        element("p", {"class": "torchtrace-provenance-help"}, *_HELP),
        # Shown by the script, which alone can use it: the three panes side by side over
        # the whole window, wide enough for whole lines in any theme's narrow column.
        element(
            "button",
            {
                "type": "button",
                "class": "torchtrace-provenance-expand",
                "aria-pressed": "false",
                "hidden": "hidden",
            },
            "Expand to the whole window",
        ),
    )
    if not any(line_maps.values()):
        root.append(
            element(
                "p",
                {"class": "torchtrace-provenance-empty"},
                "The node mappings of this compile link no lines of these texts.",
            )
        )
    mapped = _mapped_lines(line_maps, language)
    columns = element("div", {"class": "torchtrace-provenance-panes"})
    for pane in panes:
        key = str(pane.get("pane"))
        initial = initial_line if key == "code" else None
        columns.append(_pane(pane, mapped.get(key, set()), kernel_links, initial, uri))
    maps = {key: {str(k): v for k, v in line_maps.get(key, {}).items()} for key in MAP_KEYS}
    root.append(
        columns,
        element("div", {"class": "torchtrace-live", "role": "status", "aria-live": "polite"}),
        element(
            "script",
            {"type": "application/json", "class": "torchtrace-provenance-maps"},
            Json(maps),
        ),
    )
    return to_html(root) + "\n"


def _mapped_lines(line_maps: LineMaps, language: str) -> dict[str, set[int]]:
    """Each pane's lines that link somewhere: shown bold."""
    python = language == "python"
    code_to_post = line_maps.get("pyCodeToPost" if python else "cppCodeToPost", {})
    post_to_code = line_maps.get("postToPyCode" if python else "postToCppCode", {})
    return {
        "pre": set(line_maps.get("preToPost", {})),
        "post": set(line_maps.get("postToPre", {})) | set(post_to_code),
        "code": set(code_to_post),
    }


def _pane(
    pane: ProvenancePane,
    mapped: set[int],
    kernel_links: Mapping[int, Sequence[KernelLink]],
    initial_line: int | None,
    uri: Uri,
) -> Element:
    key = str(pane.get("pane"))
    title = str(pane.get("title", key))
    artifact = str(pane.get("artifact") or "")
    docname = pane.get("docname")
    label = f"{title} ({artifact})" if artifact else title
    attrs = {"class": "torchtrace-pane", "data-pane": key, "role": "region", "aria-label": label}
    box = element("div", {**attrs, "tabindex": 0}, _header(title, artifact, docname, uri))
    lines = pane.get("lines")
    if lines is None:
        return box.append(
            element("p", {"class": "torchtrace-pane-missing"}, "Not logged for this compile.")
        )
    initial = str(int(initial_line)) if isinstance(initial_line, int) else None
    body = element("pre", {"class": "torchtrace-pane-body", "data-initial-line": initial})
    nodes = pane.get("nodes") or {}
    for number, line in enumerate(lines, 1):
        node_name = nodes.get(number)
        if key == "code" and number in kernel_links:
            content = _linked(str(line), kernel_links[number], uri)
        elif isinstance(node_name, str) and isinstance(docname, str):
            content = _linked(str(line), [[node_name, docname]], uri, node_links=True)
        else:
            content = [str(line)]
        classes = "torchtrace-line torchtrace-mapped" if number in mapped else "torchtrace-line"
        text = element("span", {"class": "torchtrace-text"}, *content)
        body.append(element("span", {"class": classes, "data-line": number}, text))
    return box.append(body)


def _header(title: str, artifact: str, docname: str | None, uri: Uri) -> Element:
    """The pane's title (a link to its artifact's page, when there is one) and artifact."""
    href = uri(docname) if isinstance(docname, str) else None
    heading = (
        element("a", {"class": "torchtrace-pane-title", "href": href}, title)
        if href is not None
        else element("span", {"class": "torchtrace-pane-title"}, title)
    )
    header = element("div", {"class": "torchtrace-pane-header"}, heading)
    if artifact:
        header.append(" ", element("code", {"class": "torchtrace-pane-artifact"}, artifact))
    return header


def _linked(
    line: str, targets: Sequence[KernelLink], uri: Uri, node_links: bool = False
) -> list[Node]:
    """A line with each kernel (or, for ``node_links``, its graph node) name linked."""
    hrefs: dict[str, str] = {}
    for entry in targets:
        name, docname = (list(entry) + [None, None])[:2]
        if isinstance(name, str) and name and isinstance(docname, str):
            href = uri(docname)
            if href is not None:
                hrefs[name] = href
    if not hrefs:
        return [line]
    css_class = "torchtrace-node-link" if node_links else "torchtrace-kernel-link"
    title = "Graph page of" if node_links else "Kernel page of"
    # Node links stay out of the Tab order: each pane's title already links its graph
    # page, and Tab should move between panes, not through hundreds of nodes.
    focus = "-1" if node_links else None
    pattern = re.compile(
        "|".join(re.escape(n) + r"(?!\w)" for n in sorted(hrefs, key=len, reverse=True))
    )
    out: list[Node] = []
    last = 0
    for match in pattern.finditer(line):
        out.append(line[last : match.start()])
        name = match.group(0)
        attrs = {"class": css_class, "href": hrefs[name], "tabindex": focus}
        out.append(element("a", {**attrs, "title": f"{title} {name}"}, name))
        last = match.end()
        if node_links:
            break  # a node's name is linked where it is defined, once
    out.append(line[last:])
    return out
