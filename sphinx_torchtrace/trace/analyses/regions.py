"""Compile regions: nested compile regions (``torch.compiler.nested_compile_region``, the
``invoke_subgraph`` operator) and the subgraphs regional Inductor compiles on their own.

Three things the log records, each read as logged:

* a graph's ``invoke_subgraph(subgraph_1, 'subgraph_0', ...)`` calls (the builder counts
  them per identifier, :attr:`.Artifact.region_calls`): Dynamo traced a region once and
  called it again with the same identifier, so ``subgraph_0`` called four times in
  ``dynamo_output_graph`` is one region reused three times; AOT autograd's graphs call the
  partitioned ``fw_subgraph_0`` / ``bw_subgraph_0_1`` the same way;
* the output code's subgraph functions (``def partitioned_fw_subgraph_0_1(args)``) and
  the places that call them (:attr:`.Kernel.launch_reach`): a kernel inside a repeated
  subgraph is reached once per call;
* the envelope's ``subgraph_name`` (:attr:`.Artifact.subgraph`): the records logged while
  regional Inductor compiled one subgraph (``__marked_inductor_submod0``,
  ``repeated_subgraph0``), grouped under it;
* ``invoke_subgraph_backward_duplicate`` (JSON, torch 2.13+): one region's calls got
  backward tangents of other metadata, so torch traced one more backward graph for that
  forward identifier (``bw_subgraph_1_1`` beside ``bw_subgraph_1_0``): a region Dynamo
  reused is then partitioned once per variant, which the reuse count alone hides.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..compile_id import CompileId
from ..kernels import Kernel
from ..model import Artifact, Compile

#: The graph whose region calls are the user's own (Dynamo's): its reuse is the model's.
DYNAMO_GRAPH = "dynamo_output_graph"
#: torch's record of one more backward graph traced for a region's forward identifier.
BACKWARD_VARIANT = "invoke_subgraph_backward_duplicate"
#: Fields of that record read here; any other is shown as logged.
VARIANT_FIELDS = ("forward_identifier", "backward_identifier", "num_variants_for_identifier")
#: Regions nested deeper than this are not followed (their calls per run not worked out).
MAX_NESTING = 16
_CLASS = re.compile(r"^\s*class (\w{1,200})\(torch\.nn\.Module\):")
_CALL = re.compile(r"\binvoke_subgraph\(\s*[A-Za-z_]\w{0,200}\s*,\s*'([^'\n]{1,200})'")


@dataclass(slots=True)
class RegionUse:
    """One graph's calls of one region identifier."""

    graph: Artifact
    identifier: str
    calls: int  # the places of the graph's text that call it
    #: Calls per run of the graph, for Dynamo's: a call inside another region's body counts
    #: once per call of that region (``subgraph_0`` called 3 times in ``subgraph_1``'s body,
    #: ``subgraph_1`` twice: 6); None where not worked out (other graphs).
    per_run: int | None = None
    #: The region whose body holds every call of this one, with that region's calls per run.
    inside: tuple[str, int] | None = None

    @property
    def runs(self) -> int:
        """Calls per run of the graph (the places calling it where nothing nests)."""
        return self.per_run if self.per_run is not None else self.calls

    @property
    def reused(self) -> int:
        """Calls past the first: the times the traced region was used again."""
        return max(self.runs - 1, 0)


@dataclass(slots=True)
class CodeSubgraph:
    """A subgraph function of an output code, the places reaching it and its kernels."""

    code: Artifact
    function: str
    calls: int
    kernels: list[Kernel] = field(default_factory=list)


@dataclass(slots=True)
class SubgraphGroup:
    """The records logged under one ``subgraph_name``, in log order."""

    name: str
    artifacts: list[Artifact] = field(default_factory=list)

    @property
    def kernels(self) -> list[tuple[Artifact, Kernel]]:
        return [(a, k) for a in self.artifacts for k in a.kernels]


@dataclass(slots=True)
class BackwardVariant:
    """One ``invoke_subgraph_backward_duplicate`` record: torch traced another backward
    graph for a forward identifier."""

    artifact: Artifact
    forward: str | None  # the region's identifier (``subgraph_1``)
    backward: str | None  # the new backward's (``bw_subgraph_1_1``)
    variants: int | None  # backward graphs for that identifier now
    #: Every other field as logged (the new variant's tangents, torch's explanation, ...).
    other_fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Regions:
    """What a compile logged of compile regions."""

    uses: list[RegionUse]
    functions: list[CodeSubgraph]
    groups: list[SubgraphGroup]
    variants: list[BackwardVariant] = field(default_factory=list)

    @property
    def reused(self) -> list[RegionUse]:
        """The regions the user's graph (Dynamo's) calls more than once per run."""
        return [u for u in self.uses if u.graph.name == DYNAMO_GRAPH and u.runs > 1]

    def variants_of(self, identifier: str) -> list[BackwardVariant]:
        """The backward variants torch logged for a region identifier, in log order."""
        return [v for v in self.variants if v.forward == identifier]

    def backward_count(self, identifier: str) -> int | None:
        """How many backward graphs torch traced for the identifier, by its last record
        (the count it logged, else one more than the records); None when none is logged."""
        found = self.variants_of(identifier)
        if not found:
            return None
        counts = [v.variants for v in found if v.variants is not None]
        return max(counts) if counts else len(found) + 1


def compile_regions(c: Compile) -> Regions | None:
    """The compile's regions; None when it logged none."""
    uses: list[RegionUse] = []
    seen: set[str] = set()
    for a in c.artifacts:
        if a.region_calls and a.name not in seen:  # a graph logged again (pre-grad) adds none
            seen.add(a.name)
            nesting = _nesting(a.text()) if a.name == DYNAMO_GRAPH else {}
            for name, n in a.region_calls.items():
                per_run, inside = nesting.get(name, (None, None))
                uses.append(RegionUse(a, name, n, per_run, inside))
    functions: list[CodeSubgraph] = []
    for a in c.artifacts:
        found: dict[str, CodeSubgraph] = {}
        for k in a.kernels:
            for function, reach in zip(k.launch_functions, k.launch_reach, strict=False):
                if not function:
                    continue
                sub = found.setdefault(function, CodeSubgraph(a, function, reach))
                if not any(other is k for other in sub.kernels):
                    sub.kernels.append(k)
        functions.extend(found.values())
    groups: dict[str, SubgraphGroup] = {}
    for a in c.artifacts:
        if a.subgraph is not None:
            groups.setdefault(a.subgraph, SubgraphGroup(a.subgraph)).artifacts.append(a)
    variants = [v for a in c.artifacts_named(BACKWARD_VARIANT) if (v := _variant(a))]
    if not uses and not functions and not groups and not variants:
        return None
    return Regions(uses, functions, list(groups.values()), variants)


def _nesting(text: str) -> dict[str, tuple[int, tuple[str, int] | None]]:
    """Per region identifier of a Dynamo graph: its calls per run of the graph and the
    region whose body holds all its calls (with that region's calls per run), if one does.

    Dynamo prints a region's body as a class nested in the graph module's, named as the
    region (``class subgraph_1(torch.nn.Module):``); a call belongs to the innermost class
    above it with less indentation.  A region's body runs once per call of the region, so
    a call in it runs that many times; the graph module's own body runs once."""
    sites: dict[str, Counter[str]] = {}  # identifier -> enclosing class -> calls
    stack: list[tuple[int, str]] = []
    top = ""
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip(" "))
        head = _CLASS.match(line)
        if head:
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, head.group(1)))
            top = top or head.group(1)
            continue
        if "invoke_subgraph(" not in line:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        holder = stack[-1][1] if stack else top
        for identifier in _CALL.findall(line):
            sites.setdefault(identifier, Counter())[holder] += 1
    runs: dict[str, int] = {}

    def run_count(name: str, depth: int) -> int:
        if name == top or not name:
            return 1
        if name in runs:
            return runs[name]
        if depth > MAX_NESTING or name not in sites:
            return 0  # a class no call names (or a loop): its body's calls are not counted
        runs[name] = sum(n * run_count(h, depth + 1) for h, n in sites[name].items())
        return runs[name]

    found: dict[str, tuple[int, tuple[str, int] | None]] = {}
    for identifier, holders in sites.items():
        total = run_count(identifier, 0)
        holder = next(iter(holders)) if len(holders) == 1 else top
        inside = (holder, run_count(holder, 0)) if holder != top else None
        found[identifier] = (total, inside)
    return found


def _variant(artifact: Artifact) -> BackwardVariant | None:
    """A backward-variant record as logged; None when its payload is no JSON object (the
    artifact stays in the compile's table)."""
    data = artifact.json_object()
    if data is None:
        return None
    forward, backward = data.get("forward_identifier"), data.get("backward_identifier")
    count = data.get("num_variants_for_identifier")
    return BackwardVariant(
        artifact,
        forward[:200] if isinstance(forward, str) else None,
        backward[:200] if isinstance(backward, str) else None,
        count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None,
        {k: v for k, v in data.items() if k not in VARIANT_FIELDS},
    )


def tritonparse_name(compile_id: CompileId) -> str | None:
    """The name tritonparse gives a compile's kernels' file (``f0_fc1_a0_cai-``, its
    ``trace_processor._determine_output_fname`` less ``.ndjson``): frame id, frame compile
    id, attempt, compiled-autograd id or ``-``.  None for records of no frame."""
    if compile_id.frame_id is None or compile_id.frame_compile_id is None:
        return None
    cai = "-" if compile_id.compiled_autograd_id is None else compile_id.compiled_autograd_id
    return f"f{compile_id.frame_id}_fc{compile_id.frame_compile_id}_a{compile_id.attempt}_cai{cai}"
