"""Operators of a trace as names of PyTorch's Python API, for links into its docs.

A graph calls ``torch.ops.aten.mm.default``, ``torch._C._nn.linear`` or
``torch.relu``; a kernel lists ``aten.addmm``.  PyTorch documents ``torch.mm``,
``torch.nn.functional.linear``, ``torch.relu``: :func:`api_target` names the page
an operator most likely has.  Whether it exists is for the project's intersphinx
to say at build time (an :class:`~.blocks.ApiLink` with no such name is plain code).
"""

from __future__ import annotations

import re

from .blocks import ApiLink

#: A call in FX graph code: ``= torch.ops.aten.mm.default(`` or ``= torch.relu(``.
_CALL = re.compile(r"=\s*(torch\.[A-Za-z_][\w.]{0,200})\(")
#: Distinct operators a graph lists at most (a big graph calls a few dozen kinds).
MAX_OPERATORS = 60


def api_target(operator: str) -> str | None:
    """The API name documenting ``operator``, or None for one PyTorch has no page for."""
    name = operator.strip()
    aten = re.fullmatch(r"(?:torch\.ops\.)?aten\.([A-Za-z_]\w*)(?:\.\w+)?", name)
    if aten:
        base = aten.group(1).rstrip("_")  # in-place variants share the page
        return f"torch.{base}" if base and not base.startswith("_") else None
    nn = re.fullmatch(r"torch\._C\._nn\.([A-Za-z]\w*)", name)
    if nn:
        return f"torch.nn.functional.{nn.group(1)}"
    if re.fullmatch(r"torch(?:\.[A-Za-z]\w*)+", name) and ".ops." not in name:
        return name  # torch.relu, torch.nn.functional.gelu: public already
    return None


def graph_operators(text: str) -> list[str]:
    """The distinct operators an FX graph's code calls, in first-seen order (bounded)."""
    seen: dict[str, None] = {}
    for m in _CALL.finditer(text):
        seen.setdefault(m.group(1), None)
        if len(seen) >= MAX_OPERATORS:
            break
    return list(seen)


def api_link(operator: str) -> ApiLink | None:
    target = api_target(operator)
    return ApiLink(target, operator) if target else None
