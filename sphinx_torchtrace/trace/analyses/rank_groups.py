"""Ranks grouped by what they logged: cache lookups, the distributed schedule's
artifacts, the collectives each graph issues, the input shapes of each graph.  Each later
group says, as facts (``site/rank_group_words.py`` words them), how it differs from the first.

Graph texts are read up to a bound, with patterns whose repetitions are bounded.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..model import Compile, RankTrace
from ..reader import json_list
from .naming import function_name, function_place


@dataclass(frozen=True)
class CacheLookups:
    """A cache group's lookups: per cache in first-seen order, the lookups of each result
    (results by name); () where its ranks looked nothing up."""

    per_cache: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]


@dataclass(frozen=True)
class GraphsLogged:
    """A schedule group's payloads of one artifact: how many its ranks logged (0: none)."""

    graphs: int


@dataclass(frozen=True)
class Collectives:
    """The first collectives group's graph: its collectives in order (() where none)."""

    ops: tuple[str, ...]


@dataclass(frozen=True)
class CollectiveDiffers:
    """A later collectives group: the first collective that differs from the first group's."""

    index: int  # of that collective, from 0
    mine: str | None  # this group's collective there; None past its last
    theirs: str | None  # the first group's; None past its last
    first_rank: int  # the first group's first rank, whose collectives ``theirs`` are
    count: int  # collectives this group's graph issues in all


@dataclass(frozen=True)
class ReferenceShapes:
    """The shapes group the others are compared with: the first rank's and those alike."""


@dataclass(frozen=True)
class InputsDiffer:
    """One compile id whose graph inputs differ from the first group's."""

    label: str  # "[1/0]"
    #: Each input that differs: (this group's, ``L_x_ f32[6, 16]``; the first group's
    #: dtype and shape in its place, ``f32[8, 16]``), in order.
    inputs: tuple[tuple[str, str], ...]
    #: (this group's inputs, the first group's) where their numbers differ, else None.
    counts: tuple[int, int] | None = None


@dataclass(frozen=True)
class ShapesDiffer:
    """A later shapes group: the compile ids whose inputs differ from the first group's."""

    first_rank: int  # the first group's first rank, whose shapes are compared with
    compile_ids: tuple[InputsDiffer, ...]


#: What a group of ranks has in common, as facts (the pages say each in words:
#: ``site/rank_group_words.py``), one kind per check that groups ranks.
RankGroupFacts = (
    CacheLookups | GraphsLogged | Collectives | CollectiveDiffers | ReferenceShapes | ShapesDiffer
)


@dataclass
class RankGroup:
    ranks: list[int]
    facts: RankGroupFacts  # what the group's ranks logged, or how it differs from the first
    #: The compile ids in which this group differs from the first group (its frames are
    #: linked, on the group's first rank); [] for the first group or where none is known.
    labels: list[str] = field(default_factory=list)


def _collectives(payload: Any) -> Any:
    return payload  # the ordered list of collective ops of a graph


def _tensor_meta(payload: Any) -> Any:
    """The shapes, dtypes and strides of each op's outputs, in order; runtimes are
    estimates, left out (tlparse compares the same)."""
    ops = payload.get("ops") if isinstance(payload, dict) else None
    if not isinstance(ops, list):
        return payload
    return [
        [
            {k: v for k, v in out.items() if k in ("shape", "dtype", "stride")}
            for out in json_list(op.get("outputs"))
            if isinstance(out, dict)
        ]
        for op in ops
        if isinstance(op, dict)
    ]


def _execution_order(payload: Any) -> Any:
    order = payload.get("graph_execution_order") if isinstance(payload, dict) else None
    return order if order is not None else payload


#: What inductor logs of the distributed schedule, compared across ranks (as tlparse's
#: landing page does): each compiled graph's collectives in order, its tensors' metadata,
#: the order graphs ran in.  Name -> the part of the payload compared.
SCHEDULE_ARTIFACTS: dict[str, Callable[[Any], Any]] = {
    "inductor_collective_schedule": _collectives,
    "inductor_runtime_and_tensor_meta": _tensor_meta,
    "graph_execution": _execution_order,
}


def artifact_groups(
    numbers: list[int], ranks: list[RankTrace], name: str, part: Callable[[Any], Any]
) -> list[RankGroup]:
    """Ranks grouped by the sequence of one artifact's payloads (its compared part), in
    log order; [] when no rank logged it or all agree.  Each group names the compile ids
    whose payload differs from the first group's."""
    signatures: dict[str, list[int]] = {}
    per_label: dict[str, dict[str, str]] = {}
    logged = False
    for n, rank in zip(numbers, ranks, strict=True):
        items: list[str] = []
        labels: dict[str, str] = {}
        for c in rank.compiles:
            for artifact in c.artifacts_named(name):
                logged = True
                try:
                    payload = json.loads(artifact.text())
                except (ValueError, RecursionError):
                    payload = artifact.text()
                item = json.dumps(part(payload), sort_keys=True, default=str)
                items.append(item)
                labels[c.label] = labels.get(c.label, "") + item
        signature = "\n".join(items)
        signatures.setdefault(signature, []).append(n)
        per_label.setdefault(signature, labels)
    if not logged or len(signatures) < 2:
        return []
    first = per_label[next(iter(signatures))]
    return [
        RankGroup(
            group,
            GraphsLogged(len(s.splitlines()) if s else 0),
            [label for label, item in per_label[s].items() if first.get(label) != item],
        )
        for s, group in signatures.items()
    ]


#: A functional collective in a graph's text, its value annotated with its shape:
#: ``all_reduce: "f32[8, 4][4, 1]cpu" = torch.ops._c10d_functional.all_reduce_.default(add,
#: 'sum', '0')``.  Bounded repetitions: linear on any line.
_COLLECTIVE = re.compile(
    r'^\s{0,200}\w{1,200}: "([a-z]{1,12}\d{0,3}\[[^\]"\n]{0,500}\])[^"\n]{0,500}" = '
    r"torch\.ops\.(?:_c10d_functional|c10d_functional)\.(\w{1,100})(?:\.default)?"
    r"\(([^)\n]{0,2000})\)",
    re.MULTILINE,
)
_LITERAL_ARG = re.compile(r"'[^'\n]{0,100}'|(?<![\w.])\d{1,12}(?![\w.])")
#: The graphs a compile's collectives are read from: what Inductor runs, else Dynamo's.
COLLECTIVE_GRAPHS = ("inductor_post_grad_graph", "dynamo_output_graph")


def graph_collectives(compile_: Compile) -> tuple[str, ...]:
    """The collectives a compile's graph issues, in order: op, shape and literal arguments
    (``all_reduce_ f32[8, 4] 'sum' '0'``); waits left out; () for a graph without any."""
    for name in COLLECTIVE_GRAPHS:
        for artifact in compile_.artifacts_named(name):
            if artifact.size > MAX_GRAPH_CHARS:
                return ()
            return tuple(
                " ".join([op, shape, *_LITERAL_ARG.findall(args)])
                for shape, op, args in _COLLECTIVE.findall(artifact.text())
                if not op.startswith("wait_tensor")
            )
    return ()


#: A graph's text read for its collectives at most (bigger ones are not compared).
MAX_GRAPH_CHARS = 8_000_000


def collective_groups(numbers: list[int], ranks: list[RankTrace]) -> dict[str, list[RankGroup]]:
    """Collectives parity: each compiled function (its n-th compile on each rank: a graph
    break elsewhere shifts compile ids, not functions) with collectives on some rank, the
    ranks grouped by the collectives its graph issues; each later group says the first one
    that differs from the first group's.  Keyed by the first rank's compile id."""
    by_function: dict[tuple[str, int], dict[tuple[str, ...], list[tuple[int, str]]]] = {}
    for n, rank in zip(numbers, ranks, strict=True):
        seen: Counter[str] = Counter()
        for c in rank.compiles:
            if c.id.is_unknown or c.status == "empty":
                continue
            function = f"{function_name(c)} {function_place(c)}"
            key = (function, seen[function])
            seen[function] += 1
            by_function.setdefault(key, {}).setdefault(graph_collectives(c), []).append(
                (n, c.label)
            )
    out: dict[str, list[RankGroup]] = {}
    for groups in by_function.values():
        if len(groups) < 2 or not any(groups):
            continue
        (first, members), *others = groups.items()
        label = members[0][1]
        described = [RankGroup(_ranks_of(members), Collectives(first), [])]
        for found, group in others:
            at = next(
                (i for i, (a, b) in enumerate(zip(first, found, strict=False)) if a != b),
                min(len(first), len(found)),
            )
            differs = CollectiveDiffers(
                at,
                found[at] if at < len(found) else None,
                first[at] if at < len(first) else None,
                members[0][0],
                len(found),
            )
            described.append(RankGroup(_ranks_of(group), differs, [group[0][1]]))
        out[label] = described
    return out


def _ranks_of(members: list[tuple[int, str]]) -> list[int]:
    return list(dict.fromkeys(n for n, _ in members))


#: A Dynamo graph input's annotation: ``L_x_: "f32[8, 64][64, 1]cpu"`` -> dtype and shape.
_GRAPH_INPUT = re.compile(r'(\w{1,200}): "([a-z]{1,12}\d{0,3}\[[^\]"]{0,500}\])')
#: Characters of a graph read for its signature (the ``forward`` line comes first).
_SIGNATURE_CHARS = 20_000


def graph_inputs(compile_: Compile) -> tuple[str, ...]:
    """The dtypes and shapes of a compile's Dynamo graph inputs (``f32[8, 64]`` each, in
    order), from the ``forward`` line of its ``dynamo_output_graph``; () without one."""
    for artifact in compile_.artifacts_named("dynamo_output_graph"):
        head = artifact.text()[:_SIGNATURE_CHARS]
        start = head.find("def forward(")
        if start < 0:
            continue
        line = head[start : head.find("\n", start) if "\n" in head[start:] else None]
        return tuple(f"{name} {shape}" for name, shape in _GRAPH_INPUT.findall(line))
    return ()


def shape_groups(numbers: list[int], ranks: list[RankTrace]) -> list[RankGroup]:
    """Ranks grouped by the input shapes of the compile ids they share with the first
    rank (ids only some ranks have are "diverging compile ids" already); each group says
    which inputs differ from the first group's, and what the first group had."""
    # keyed by compile id and function: another function under the same id is not compared
    signatures: dict[tuple[tuple[tuple[str, str], tuple[str, ...]], ...], list[int]] = {}
    for n, rank in zip(numbers, ranks, strict=True):
        signature = tuple(
            ((c.label, function_name(c) or ""), inputs)
            for c in rank.compiles
            if (inputs := graph_inputs(c))
        )
        signatures.setdefault(signature, []).append(n)
    first_group = next(iter(signatures.values()), [])
    first = dict(next(iter(signatures), ()))
    alike: list[int] = []
    groups: list[RankGroup] = []
    for signature, group in signatures.items():
        own = dict(signature)
        differ = []
        for key in own:
            theirs = first.get(key)
            if theirs is None or theirs == own[key]:
                continue
            changed = tuple(
                (mine, other.split(" ", 1)[-1])  # graph_inputs(): "name shape"
                for mine, other in zip(own[key], theirs, strict=False)
                if mine != other
            )
            counts = (len(own[key]), len(theirs)) if len(own[key]) != len(theirs) else None
            differ.append(InputsDiffer(key[0], changed, counts))
        if not differ:  # the same shapes wherever it compiled what the first rank did
            alike.extend(n for n in group if n not in alike)
            continue
        facts = ShapesDiffer(first_group[0], tuple(differ))
        groups.append(RankGroup(group, facts, [d.label for d in differ]))
    if not groups:
        return []
    return [RankGroup(sorted(alike), ReferenceShapes()), *groups]


def cache_lookups(pattern: tuple[tuple[str, str, str], ...]) -> CacheLookups:
    """A rank's lookups (compile id, cache, result), counted per cache and result."""
    per_cache: dict[str, Counter[str]] = {}
    for _, cache, res in pattern:
        per_cache.setdefault(cache, Counter())[res] += 1
    return CacheLookups(tuple((cache, tuple(sorted(c.items()))) for cache, c in per_cache.items()))
