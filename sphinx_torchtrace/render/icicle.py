"""The compile-time tree as an icicle: one band per level (file, function, compile, phase),
each box as wide as its seconds, so a reader sees at once which of their functions, and
which phase of it, took the time.

Drawn from :class:`~sphinx_torchtrace.trace.analyses.compile_time.Node` as an element tree
(:mod:`.xml`): trace text is always escaped text.  Boxes narrower than a pixel are not
drawn (their seconds are in their parent's box and in the table), so the picture has a
bounded number of elements however many compiles the log holds.
"""

from __future__ import annotations

from ..trace.analyses.compile_time import PHASE_WORDS, PHASES, Node
from .xml import Element, element, to_xml

#: One fill per phase, the charts' palette first (0.15-0.21 luminance: 3:1 on white and dark).
PHASE_COLORS: dict[str, str] = {
    "dynamo": "#4e79a7",
    "backend": "#c7620a",
    "inductor": "#2e8540",
    "code_gen": "#9c5fb5",
    "cache": "#0e7c86",
    "compile": "#d03f6f",
    "autotune": "#8a6a00",
    "unattributed": "#6b7280",  # the charts' colour of "other"
}
_LEVEL_FILL = "#6b7280"

_WIDTH = 760
_BAND = 26
_TOP = 30
_FONT = 12
_CHAR = 7.0
_MIN_BOX = 1.0  # pixels


def icicle_svg(root: Node, title: str = "Compile time by source and phase") -> str:
    """The icicle of ``root``'s descendants (the root itself is the whole width)."""
    depth = _depth(root)
    legend, legend_height = _legend(root)
    top = _TOP + legend_height - 16
    height = top + _BAND * max(1, depth) + 8
    total = root.seconds if root.seconds > 0 else 1.0
    scale = _WIDTH / total
    desc = f"{_seconds(root.seconds)} of compile time" + "".join(
        f"; {_label(c)}: {_seconds(c.seconds)}" for c in root.children[:20]
    )
    svg = element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "class": "torchtrace-chart torchtrace-icicle",
            "role": "img",
            "width": _WIDTH,
            "height": height,
            "viewBox": f"0 0 {_WIDTH} {height}",
            "aria-label": title,
            "style": "max-width:100%;height:auto;font-family:inherit",
            "font-size": _FONT,
            "fill": "currentColor",
        },
        element("title", None, title),
        element("desc", None, desc),
    )
    svg.append(legend)
    # iterative: a deep or wide tree must not hit the recursion limit
    stack: list[tuple[Node, int, float, tuple[str, ...]]] = [
        (child, 0, x, ()) for child, x in reversed(_placed(root, 0.0, scale))
    ]
    while stack:
        node, level, x, path = stack.pop()
        width = node.seconds * scale
        if width < _MIN_BOX:
            continue
        names = (*path, _label(node))
        svg.append(_box(node, x, top + level * _BAND, width, names))
        stack.extend(
            (child, level + 1, cx, names) for child, cx in reversed(_placed(node, x, scale))
        )
    return to_xml(svg, pretty=True)


def _label(node: Node) -> str:
    """A file by its last part only: the page's path rewrites never reach into an SVG, so
    the picture names no folder of the machine the log was written on."""
    if node.kind != "file":
        return node.label
    return node.label.replace("\\", "/").rsplit("/", 1)[-1]


def _seconds(value: float) -> str:
    """As the tables say it (``1.234 s``), so a tooltip and a cell read alike."""
    return f"{value:.3f} s"


def _placed(node: Node, x: float, scale: float) -> list[tuple[Node, float]]:
    out = []
    for child in node.children:
        out.append((child, x))
        x += child.seconds * scale
    return out


def _depth(root: Node) -> int:
    deepest = 0
    stack = [(root, 0)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((c, level + 1) for c in node.children)
    return deepest


def _box(node: Node, x: float, y: float, width: float, names: tuple[str, ...]) -> Element:
    fill = PHASE_COLORS.get(node.phase or "", _LEVEL_FILL)
    where = "; ".join(f"{s.what}, line {s.line}" for s in node.sources[:4])
    tip = " › ".join(names) + f": {_seconds(node.seconds)}" + (f" ({where})" if where else "")
    group = element(
        "g",
        {"class": f"box {node.kind}"},
        element("title", None, tip),
        element(
            "rect",
            {
                "x": f"{x:.1f}",
                "y": f"{y:.0f}",
                "width": f"{max(width - 1, 0.5):.1f}",
                "height": _BAND - 2,
                "fill": fill,
                "fill-opacity": "1" if node.phase else "0.35",
            },
        ),
    )
    label = names[-1]
    fits = int((width - 8) / _CHAR)
    if fits >= 4:
        shown = label if len(label) <= fits else label[: fits - 1] + "…"
        attrs = {"x": f"{x + 4:.1f}", "y": f"{y + 16:.0f}"}
        if node.phase:
            attrs["fill"] = "#ffffff"
        group.append(element("text", attrs, shown))
    return group


def _legend(root: Node) -> tuple[Element, int]:
    """The phases drawn, in pipeline order, wrapped to the width; and its height."""
    used = {leaf.phase for leaf in root.leaves() if leaf.phase}
    group = element("g", {"class": "legend"})
    x, y = 0.0, 16
    for key, _ in PHASES:
        if key not in used:
            continue
        words = PHASE_WORDS[key]
        advance = 16 + len(words) * _CHAR + 14
        if x and x + advance > _WIDTH:
            x, y = 0.0, y + 18
        box: dict[str, str | int | None] = {
            "x": f"{x:.0f}",
            "y": y - 10,
            "width": 12,
            "height": 12,
            "fill": PHASE_COLORS[key],
        }
        group.append(
            element("rect", box),
            element("text", {"x": f"{x + 16:.0f}", "y": y}, words),
        )
        x += advance
    return group, y
