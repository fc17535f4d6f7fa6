"""A tiny element writer for the SVG and HTML the extension emits.

Trace logs are untrusted, so markup is never assembled from strings: code builds
:class:`Element` trees and :func:`to_xml` / :func:`to_html` serialize them.  Tag
and attribute names are the program's own and must match a strict pattern; every
text child and attribute value is escaped, and characters XML cannot hold
(control characters, lone surrogates, U+FFFE and U+FFFF) are shown as visible escapes
(``\\x07``, as :func:`~..site.characters.printable` shows them), so whatever a log's
string holds it stays text and the output stays well-formed, as XML (SVG, EPUB's XHTML)
and as HTML: void elements are written self-closed (``<br/>``).

The one non-text child is :class:`Json`: data for a ``<script type="application/json">``,
serialized by this module so nothing in it can close the script element.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Union

from ..site.characters import UNPRINTABLE, visible_escape

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9-]*\Z")
_ATTRIBUTE = re.compile(r"[A-Za-z][A-Za-z0-9-]*(?::[A-Za-z][A-Za-z0-9-]*)?\Z")

#: Not in XML 1.0's Char production (C0 controls but TAB, LF, CR; surrogates; U+FFFE/F),
#: plus DEL and the C1 controls, which HTML calls parse errors.
_UNSAFE = re.compile(f"[{UNPRINTABLE}]")
_TEXT_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;"}
)
# An attribute's whitespace is normalized by XML parsers unless written as a reference.
_ATTRIBUTE_ESCAPES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&#x27;",
        "\t": "&#9;",
        "\n": "&#10;",
        "\r": "&#13;",
    }
)

#: HTML elements written without an end tag (and so without children).
_VOID = frozenset({"br", "hr", "img", "wbr"})
#: HTML elements whose content is not parsed for markup: only :class:`Json` may go in a script.
_RAW_TEXT = frozenset({"script", "style"})


@dataclass(frozen=True)
class Json:
    """JSON data as the content of a ``<script type="application/json">`` element."""

    value: object

    def serialize(self) -> str:
        """Compact JSON in which ``<``, ``>`` and ``&`` are ``\\u`` escapes: the script
        element cannot be closed, nor a comment opened, whatever the strings hold."""
        text = json.dumps(self.value, separators=(",", ":"))
        return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


Node = Union["Element", str, Json]


@dataclass
class Element:
    """An element: a fixed tag, attributes (None leaves one out) and children."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)

    def __post_init__(self) -> None:
        _check_names(self)

    def append(self, *children: Node) -> Element:
        """Adds children; returns the element, so building can be chained."""
        self.children.extend(children)
        return self

    def set(self, name: str, value: str | int | None) -> Element:
        _check_attribute(name)
        if value is not None:
            self.attrs[name] = str(value)
        return self


def element(
    tag: str, attrs: Mapping[str, str | int | None] | None = None, *children: Node
) -> Element:
    """``element("a", {"href": url}, "text")``: attributes whose value is None are left out."""
    made = Element(tag)
    for name, value in (attrs or {}).items():
        made.set(name, value)
    return made.append(*children)


def clean_text(text: str) -> str:
    """``text`` with each character XML cannot hold as a visible escape (see the module
    docstring); CR, LF and TAB kept."""
    return _UNSAFE.sub(visible_escape, text)


def escape_text(text: str) -> str:
    """Text as element content (the same entities as :func:`html.escape`)."""
    return clean_text(text).translate(_TEXT_ESCAPES)


def escape_attribute(value: str) -> str:
    """Text as a double-quoted attribute value; whitespace characters as references."""
    return clean_text(value).translate(_ATTRIBUTE_ESCAPES)


def to_xml(root: Element, pretty: bool = False) -> str:
    """XML (for SVG): empty elements self-closed.

    ``pretty`` starts each child of an element that holds only elements on a line of its
    own, which changes nothing a renderer shows.
    """
    out: list[str] = []
    _write(root, out, html=False, pretty=pretty)
    return "".join(out)


def to_html(root: Element) -> str:
    """HTML: every element but a void one closed by an end tag, even when empty."""
    out: list[str] = []
    _write(root, out, html=True, pretty=False)
    return "".join(out)


def _check_names(node: Element) -> None:
    if not _NAME.match(node.tag):
        raise ValueError(f"not an element name this writer accepts: {node.tag!r}")
    for name in node.attrs:
        _check_attribute(name)


def _check_attribute(name: str) -> None:
    if not _ATTRIBUTE.match(name):
        raise ValueError(f"not an attribute name this writer accepts: {name!r}")


def _write(node: Element, out: list[str], html: bool, pretty: bool) -> None:
    _check_names(node)  # again: the tag and attributes are plain fields, changeable since
    out.append(f"<{node.tag}")
    for name, value in node.attrs.items():
        out.append(f' {name}="{escape_attribute(value)}"')
    if html and node.tag in _VOID:
        if node.children:
            raise ValueError(f"<{node.tag}> cannot hold children in HTML")
        out.append("/>")  # HTML reads it as <br>; XML (EPUB) needs it closed
        return
    if not node.children and not html:
        out.append("/>")
        return
    out.append(">")
    _check_raw_text(node)
    newline = "\n" if pretty and all(isinstance(c, Element) for c in node.children) else ""
    for child in node.children:
        out.append(newline)
        if isinstance(child, Element):
            _write(child, out, html, pretty)
        elif isinstance(child, Json):
            out.append(child.serialize())
        else:
            out.append(escape_text(child))
    out.append(f"{newline}</{node.tag}>")


def _check_raw_text(node: Element) -> None:
    """A script or style element's content is not parsed for entities in HTML, so escaped
    text would come out wrong: only :class:`Json`, which needs no escaping, goes there."""
    raw = node.tag in _RAW_TEXT
    for child in node.children:
        if isinstance(child, Json) != raw or (raw and node.tag != "script"):
            where = f"<{node.tag}>"
            raise ValueError(f"{type(child).__name__} content is not allowed in {where}")
