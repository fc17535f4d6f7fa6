"""Objects of the ``torchtrace`` domain declared where a generated page shows them."""

from __future__ import annotations

from collections.abc import Callable

from docutils import nodes
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import make_id

from ..site import blocks as b
from .domain import TorchTraceDomain


def object_target(
    directive: SphinxDirective, block: b.ObjectTarget, rewrite: Callable[[str], str]
) -> nodes.target:
    """Declares a ``torchtrace`` object where it stands (an anchor, and ``objects.inv``),
    and the objects it stands for at the same anchor.  A status is trace text (a graph
    break's reason) that links show as their ``title`` and ``objects.inv`` publishes: it
    goes through the page's ``rewrite`` (secrets masked, paths rewritten) like any other."""
    document = directive.state.document
    node_id = make_id(directive.env, document, f"torchtrace-{block.objtype}", block.name)
    target = nodes.target("", "", ids=[node_id])
    document.note_explicit_target(target)
    domain = directive.env.get_domain("torchtrace")
    assert isinstance(domain, TorchTraceDomain)
    domain.note_object(block.objtype, block.name, node_id, rewrite(block.status), target)
    for objtype, name, status in block.also:
        domain.note_object(objtype, name, node_id, rewrite(status), target)
    return target
