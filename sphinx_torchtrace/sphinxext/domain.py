"""The ``torchtrace`` domain: frames, graphs, kernels and distinct graph breaks as
cross-referenceable objects.

Modelled on ``sphinx.domains.rst``: one flat dict of plain tuples, idempotent
merges for ``-j``, and every object in ``objects.inv`` for intersphinx.  The
frame role renders a compile id as a badge colored by its status: ``[x/y]`` is the
compile id over all its attempts (tlparse's status, declared on its first page, see
``TracePlan.frame_objects``), ``[x/y_z]`` attempt ``z`` alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from docutils import nodes
from docutils.nodes import Element, Node
from sphinx import addnodes
from sphinx.builders import Builder
from sphinx.domains import Domain, ObjType
from sphinx.environment import BuildEnvironment
from sphinx.roles import XRefRole
from sphinx.util.nodes import make_refnode
from sphinx.util.typing import RoleFunction

from ..site.characters import one_line
from .warnings import AMBIGUOUS, DUPLICATE, warn

OBJECT_TYPES = ("frame", "graph", "kernel", "gb")

# (objtype, name) -> (docname, node_id, status): a frame's status, a graph break's title
ObjectEntry = tuple[str, str, str]


def short_frame_name(name: str) -> str:
    """``[0/1]`` for ``train/[0/1]``, ``rank1/[0/1]`` for ``train/rank1/[0/1]``: no label.

    Compile ids hold slashes themselves, so the id starts at the last ``/[``.
    """
    head, sep, tail = name.rpartition("/[")
    if not sep:
        return name
    short = "[" + tail
    if "/" in head:
        rank = head.rsplit("/", 1)[1]
        if re.fullmatch(r"rank(?:m?\d+|-none)(?:-\d+)?", rank):
            short = f"{rank}/{short}"
    return short


def trace_of_frame(name: str) -> str:
    """The trace label of a frame object's name (``train`` for ``train/rank1/[0/1]``)."""
    head = name.rpartition("/[")[0]
    folder, _, last = head.rpartition("/")
    return folder if folder and re.fullmatch(r"rank(?:m?\d+|-none)(?:-\d+)?", last) else head


#: Where a resolved tree keeps the traces each of its pages links frames of.
_PAGE_TRACES = "_torchtrace_page_traces"


class FrameRole(XRefRole):
    """``:torchtrace:frame:`[0/1]``` and friends: a link whose badge shows the status."""

    def result_nodes(
        self, document: nodes.document, env: BuildEnvironment, node: Element, is_ref: bool
    ) -> tuple[list[Node], list[nodes.system_message]]:
        node["classes"].append("torchtrace-badge")
        return [node], []


class TorchTraceDomain(Domain):
    name = "torchtrace"
    label = "PyTorch trace"
    object_types: ClassVar[dict[str, ObjType]] = {t: ObjType(t, t) for t in OBJECT_TYPES}
    roles: ClassVar[dict[str, RoleFunction | XRefRole]] = {
        "frame": FrameRole(warn_dangling=True, innernodeclass=nodes.inline),
        "graph": XRefRole(warn_dangling=True, innernodeclass=nodes.inline),
        "kernel": XRefRole(warn_dangling=True, innernodeclass=nodes.inline),
        "gb": XRefRole(warn_dangling=True, innernodeclass=nodes.inline),
    }
    initial_data: ClassVar[dict[str, Any]] = {"objects": {}}
    data_version = 1

    @property
    def objects(self) -> dict[tuple[str, str], ObjectEntry]:
        return self.data.setdefault("objects", {})  # type: ignore[no-any-return]

    def note_object(
        self, objtype: str, name: str, node_id: str, status: str, location: Any = None
    ) -> None:
        key = (objtype, name)
        if key in self.objects and self.objects[key][0] != self.env.docname:
            other = self.objects[key][0]
            warn(DUPLICATE, f"duplicate torchtrace {objtype} {name!r}, also in {other}", location)
        # a title (a graph break's type) is shown in links' titles and the break index
        self.objects[key] = (self.env.docname, node_id, one_line(status))

    def clear_doc(self, docname: str) -> None:
        for key, entry in list(self.objects.items()):
            if entry[0] == docname:
                del self.objects[key]

    def merge_domaindata(self, docnames: Iterable[str], otherdata: dict[str, Any]) -> None:
        wanted = set(docnames)
        for key, entry in otherdata["objects"].items():
            if entry[0] in wanted:
                self.objects[key] = entry

    def find(self, objtype: str, target: str) -> tuple[str, ObjectEntry] | None:
        """An object by full name, or by a unique shorter tail (``[0/1]``, ``train/[0/1]``)."""
        target = target.strip()
        exact = self.objects.get((objtype, target))
        if exact is not None:
            return target, exact
        hits = self.candidates(objtype, target)
        if len(hits) == 1:
            return hits[0]
        return None

    def candidates(self, objtype: str, target: str) -> list[tuple[str, ObjectEntry]]:
        """Every object whose name ends in ``/<target>``, by name."""
        tail = "/" + target.strip()
        return sorted(
            (n, e) for (t, n), e in self.objects.items() if t == objtype and n.endswith(tail)
        )

    def resolve_xref(
        self,
        env: BuildEnvironment,
        fromdocname: str,
        builder: Builder,
        typ: str,
        target: str,
        node: addnodes.pending_xref,
        contnode: Element,
    ) -> nodes.reference | None:
        found = self.find(typ, target)
        if found is None:
            hits = self.candidates(typ, target)
            if len(hits) < 2:
                return None
            # like the Python domain: link the first, say which others there were
            warn(
                AMBIGUOUS,
                f"more than one torchtrace {typ} matches {target!r}: "
                f"{', '.join(n for n, _ in hits)}; write more of the name",
                node,
            )
            found = hits[0]
        name, (docname, node_id, status) = found
        if typ == "frame" and status:
            contnode["classes"].extend(["torchtrace-badge", f"torchtrace-status-{status}"])
            if not node.get("refexplicit"):
                # the trace's label too where the page links frames of several traces: a
                # bare [0/1] names none of them in text, man or PDF (no hover title there)
                several = len(self._page_traces(node)) > 1
                shown = name if several else short_frame_name(name)
                contnode.children[:] = [nodes.Text(shown)]
        # The status in the title too: color alone must not carry it (WCAG 1.4.1).
        title = f"{name} ({status})" if typ == "frame" and status else name
        if typ == "gb" and status:
            title = f"{name}: {status}"
        return make_refnode(builder, fromdocname, docname, node_id, contnode, title)

    def _page_traces(self, node: addnodes.pending_xref) -> set[str]:
        """The traces whose frames the page holding ``node`` links to (by the role's
        ``refdoc``: a book assembles pages into one tree).  Counted once per tree and
        page, before any link is resolved (each resolved one leaves the tree)."""
        root: Node = node
        while root.parent is not None:
            root = root.parent
        counted: dict[str, set[str]] | None = getattr(root, _PAGE_TRACES, None)
        if counted is None:
            counted = {}
            for xref in root.findall(addnodes.pending_xref):
                if xref.get("refdomain") == self.name and xref.get("reftype") == "frame":
                    found = self.find("frame", xref.get("reftarget", ""))
                    if found is not None:
                        page = counted.setdefault(xref.get("refdoc", ""), set())
                        page.add(trace_of_frame(found[0]))
            setattr(root, _PAGE_TRACES, counted)
        return counted.get(node.get("refdoc", ""), set())

    def resolve_any_xref(
        self,
        env: BuildEnvironment,
        fromdocname: str,
        builder: Builder,
        target: str,
        node: addnodes.pending_xref,
        contnode: Element,
    ) -> list[tuple[str, nodes.reference]]:
        results = []
        for objtype in OBJECT_TYPES:
            ref = self.resolve_xref(
                env, fromdocname, builder, objtype, target, node, contnode.deepcopy()
            )
            if ref is not None:
                results.append((f"torchtrace:{objtype}", ref))
        return results

    def get_objects(self) -> Iterator[tuple[str, str, str, str, str, int]]:
        for (objtype, name), (docname, node_id, _status) in sorted(self.objects.items()):
            yield name, name, objtype, docname, node_id, 1
