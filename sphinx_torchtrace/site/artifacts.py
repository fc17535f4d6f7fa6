"""Facts about artifacts that every page agrees on: pipeline order, language, file suffix,
and how a metrics record is printed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..trace import Artifact

#: The order of the PyTorch 2 pipeline, for listing artifacts as a reader follows them.
PIPELINE = [
    "dynamo_start",
    "dynamo_output_graph",
    "optimize_ddp_split_graph",
    "optimize_ddp_split_child",
    "compiled_autograd_graph",
    "aot_joint_graph",
    "aot_forward_graph",
    "aot_backward_graph",
    "aot_inference_graph",
    "before_pre_grad_graph",
    "inductor_pre_grad_graph",
    "after_pre_grad_graph",
    "before_joint_graph",
    "after_joint_graph",
    "before_post_grad_graph",
    "inductor_post_grad_graph",
    "after_post_grad_graph",
    "fx_graph_runnable",
    "inductor_output_code",
    "inductor_aot_wrapper_code",
    "inductor_aot_kernel_code",
    "dynamo_guards",
    "dynamo_cpp_guards_str",
]

#: Guard dumps: one page each, like graphs; a recompile's differ from the previous ones in
#: a few sizes.
GUARD_ARTIFACTS = ("dynamo_cpp_guards_str", "dynamo_guards")

#: Artifacts bigger than this (bytes) are not shown on their frame page (a download instead):
#: a page must stay readable and fast.
INLINE_LIMIT = 32768

_LANGUAGE = {
    "inductor_output_code": "python",
    "fx_graph_runnable": "python",
    "inductor_aot_wrapper_code": "cpp",
    "inductor_aot_kernel_code": "cpp",
}


def pipeline_position(artifact: Artifact) -> int:
    try:
        return PIPELINE.index(artifact.name)
    except ValueError:
        try:
            return PIPELINE.index(artifact.event)
        except ValueError:
            return len(PIPELINE)


def language_of(artifact: Artifact) -> str:
    if artifact.name in _LANGUAGE:
        return _LANGUAGE[artifact.name]
    if artifact.encoding == "json":
        return "json"
    if artifact.is_graph:
        return "torchtrace-fx"  # fast, FX-aware; Pygments' Python lexer is 7x slower here
    return "text"


def download_suffix(artifact: Artifact) -> str:
    if artifact.name == "fx_graph_runnable" or artifact.name == "inductor_output_code":
        return ".py"
    if language_of(artifact) == "cpp":
        return ".cpp"
    if artifact.encoding == "json":
        return ".json"
    return ".txt"


def group_nodes(
    targets_of: dict[str, list[str]], lines: dict[str, int], nodes: list[str] | None = None
) -> list[tuple[list[str], list[tuple[str, int | None]]]]:
    """Graph nodes grouped by what they map to, in graph order: ``[(targets, [(node, line)])]``.

    Provenance tables list many nodes that share their kernels (a fused kernel
    computes a dozen nodes); one row per group reads better and is a fraction
    of the table cells a big trace's build has to process.
    """
    far = 1 << 60

    def where(node: str) -> tuple[int, str]:
        return (lines.get(node, far), node)

    groups: dict[tuple[str, ...], list[str]] = {}
    for node in sorted(targets_of if nodes is None else nodes, key=where):
        groups.setdefault(tuple(targets_of.get(node, [])), []).append(node)
    return [
        (list(key), [(node, lines.get(node)) for node in members])
        for key, members in groups.items()
    ]


def size_text(size: int) -> str:
    """A size as a reader takes it in: ``512 B``, ``3.4 KiB``, ``2.0 MiB``."""
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):.1f} KiB"
    return f"{size} B"


#: Fields of a metrics record that quote user code: left out of the record with ``:no-source:``.
SOURCE_KEYS = frozenset({"stack_trace", "exception_stack_trace", "recompile_reason"})

#: A metrics record whose JSON is longer than this is a download; its frame page shows it
#: abridged: each value longer than :data:`RECORD_VALUE_LIMIT` (Inductor's whole config,
#: the provenance mappings) is cut to its start.  Those values are the same in most
#: records, and made the frame pages of a big trace a third of its HTML.
RECORD_INLINE_LIMIT = 8_000
RECORD_VALUE_LIMIT = 1_000
RECORD_VALUE_SHOWN = 200


def shown_record(data: Mapping[str, Any], no_source: bool) -> dict[str, Any]:
    """A record's fields as published (``:no-source:`` drops those quoting user code)."""
    hidden = SOURCE_KEYS if no_source else frozenset()
    return {k: v for k, v in data.items() if k not in hidden}


def json_text(value: object) -> str:
    """A record as indented JSON; a note where it is nested too deep to print."""
    try:
        return json.dumps(value, indent=1, sort_keys=True, default=str)
    except (RecursionError, ValueError):
        return "(this record is nested too deeply to show)"


def record_is_long(data: Mapping[str, Any]) -> bool:
    """Whether a record is offered as a download (and shown abridged)."""
    try:
        return len(json.dumps(data, default=str)) > RECORD_INLINE_LIMIT
    except (RecursionError, ValueError):
        return False


def abridged_record(data: Mapping[str, Any]) -> dict[str, Any]:
    """The record with each long value cut to its start and the size of the whole."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        try:
            text = value if isinstance(value, str) else json.dumps(value, default=str)
        except (RecursionError, ValueError):
            text = "(nested too deeply to print)"
        out[key] = (
            value
            if len(text) <= RECORD_VALUE_LIMIT
            # the whole record is a download on the web, the log's line in print: said
            # above the record, in the words of each
            else (
                f"{text[:RECORD_VALUE_SHOWN]}... ({len(text):,} characters in all: in the "
                "whole record)"
            )
        )
    return out
