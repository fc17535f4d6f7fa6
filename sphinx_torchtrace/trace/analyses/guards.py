"""What a failed guard checked: the kind of check (a key the pages say in words,
``site/guard_words.py``), read from fixed patterns of torch's guard code and, where the
text alone cannot tell, from the records of the version whose guard failed.

Guard text is data: it is matched against fixed patterns, and a failed guard's line is read
up to :data:`GUARD_SCAN_CHARS` for its comment and its kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from ..model import Compile, RankTrace
from .compare import entry_compile

#: What a failed guard checks: a key the pages say in words (``site/guard_words.py``).
GuardKind = Literal[
    "guard_raised",
    "shape",
    "dtype",
    "dimensions",
    "strides",
    "device",
    "requires_grad",
    "dispatch_keys",
    "grad_mode",
    "default_dtype",
    "autocast",
    "deterministic",
    "matmul_precision",
    "num_threads",
    "torch_function",
    "global_state",
    "object",
    "type",
    "closure",
    "dict_keys",
    "size_range",
    "length",
    "dict_version",
    "global",
    "module_attribute",
    "attribute",
    "item",
    "value",
    "declared_range",
    "device_keys",
    "other",
]

#: The global state torch checks: the settings it names, and the kind of each.
_GLOBAL_STATE: tuple[tuple[str, GuardKind], ...] = (
    ("grad_mode", "grad_mode"),
    ("default_dtype", "default_dtype"),
    (r"autocast\S*", "autocast"),
    ("deterministic_algorithms(?:_warn_only)?", "deterministic"),
    ("allow_tf32|allow_fp16_reduce|allow_bf16_reduce", "matmul_precision"),
    ("num_threads", "num_threads"),
    ("torch_function(?:_all_disabled)?", "torch_function"),
)

#: What a failed guard checks, from fixed patterns of torch's guard code (the first that
#: matches): a key, never trace text.  The pages say each in words (``site/guard_words.py``).
#: Where the guard compares a value, the kind is read from its source, the expression
#: compared: ``G['x']`` a global, ``self.x`` (``L['self'].x``) a module attribute,
#: ``__closure__`` / ``cell_contents`` a closure cell, ``len(...)`` a length,
#: ``dict.keys(...)`` a dict's keys; a bare name is an argument or local.
GUARD_KINDS: list[tuple[re.Pattern[str], GuardKind]] = [
    # torch could not evaluate the guard: reading its source raised (the guard manager's
    # own words); no check failed
    (re.compile(r"^\s*(?:getattr failed on source|KeyError on|IndexError on)\b"), "guard_raised"),
    (re.compile(r"size mismatch"), "shape"),
    (re.compile(r"dtype mismatch"), "dtype"),
    (re.compile(r"rank mismatch"), "dimensions"),
    (re.compile(r"stride mismatch"), "strides"),
    (re.compile(r"device mismatch"), "device"),
    (re.compile(r"requires_grad mismatch"), "requires_grad"),
    (re.compile(r"dispatch key set mismatch"), "dispatch_keys"),
    # the global state torch checks: the setting it names, where it names one it knows
    *(
        (re.compile(rf"GLOBAL_STATE changed:\s*(?:{names})\s*$"), kind)
        for names, kind in _GLOBAL_STATE
    ),
    (re.compile(r"GLOBAL_STATE|grad_mode|global state", re.I), "global_state"),
    (re.compile(r"___check_obj_id|ID_MATCH|id\("), "object"),
    (re.compile(r"___check_type_id|TYPE_MATCH|type\("), "type"),
    (re.compile(r"__closure__|cell_contents"), "closure"),
    (re.compile(r"dict\.keys\(|___dict_keys|\.keys\(\)"), "dict_keys"),
    # a size or stride compared with bounds: a range, not one value
    (
        re.compile(
            r"\.(?:size|stride)\(\)\[\d+\]\s*(?:<=?|>=?)|(?:<=?|>=?)\s*\S*\.(?:size|stride)\(\)\["
        ),
        "size_range",
    ),
    (re.compile(r"\.size\(\)\[\d+\]\s*[!=]="), "shape"),
    (re.compile(r"\blen\("), "length"),
    (re.compile(r"dict_version|DICT_VERSION|dict_tag"), "dict_version"),
    (re.compile(r"^\s*(?:not\s+)?G\["), "global"),
    (re.compile(r"^\s*(?:not\s+)?(?:L\[['\"]self['\"]\]|self)\.\w"), "module_attribute"),
    (
        re.compile(r"^\s*(?:not\s+)?(?:L\[['\"]\w+['\"]\]|\w+)(?:\.\w+)+\s*(?:[!=]=|<|>|\bis\b)"),
        "attribute",
    ),
    # an element of a list, tuple or dict the frame reads: ``xs[0] == 2``, ``d['k'] == 2``
    (
        re.compile(
            r"^\s*(?:not\s+)?(?:L\[['\"]\w+['\"]\]|\w+)(?:\[[^\]]+\])+\s*(?:[!=]=|<|>|\bis\b)"
        ),
        "item",
    ),
    (re.compile(r"==|!=|<=|>=|<|>"), "value"),
]

#: Kinds decided with the version's own records, not its guard's text alone: a size range
#: the user declared (``mark_dynamic(..., min=, max=)``: the symbol was created with it), a
#: ``len(...)`` of a dict (its guards hold a ``DictGuardManager`` for the source).
REFINED_KINDS: tuple[GuardKind, ...] = ("declared_range", "device_keys")
#: Every kind a failed guard can be given.
GUARD_KIND_NAMES: tuple[GuardKind, ...] = get_args(GuardKind)


def guard_kind(guard: str, version: Compile | None = None) -> GuardKind:
    """The kind of check a failed guard is (:data:`GUARD_KINDS`), ``other`` when none;
    with the version whose guard it is, a size range that version's symbol was created with
    is the range the user declared, and ``len(...)`` of a dict source is its keys."""
    kind: GuardKind = next((k for pattern, k in GUARD_KINDS if pattern.search(guard)), "other")
    if kind == "dispatch_keys" and _other_backend(guard):
        return "device_keys"
    if version is None:
        return kind
    if kind == "size_range" and _declared_range(guard, version):
        return "declared_range"
    if kind == "length" and _dict_length(guard, version):
        return "dict_keys"
    return kind


#: The backends a dispatch key names (``CPU``, ``AutogradCPU``, ``SparseCUDA`` ...): a tensor
#: on another device has keys of another backend.  Autocast keys are a mode, not a device.
_BACKENDS = (
    "CPU|CUDA|HIP|XLA|MPS|IPU|XPU|HPU|VE|Lazy|MTIA|MAIA|Meta|PrivateUse1|PrivateUse2|PrivateUse3"
)
_BACKEND_KEY = re.compile(rf"^(?:Autograd|Sparse|SparseCsr|Quantized|NestedTensor)?({_BACKENDS})$")
_KEY_SETS = re.compile(r"expected DispatchKeySet\(([^)]*)\),\s*actual DispatchKeySet\(([^)]*)\)")


def _backends(keys: str) -> set[str]:
    return {m.group(1) for k in keys.split(",") if (m := _BACKEND_KEY.match(k.strip()))}


def _other_backend(guard: str) -> bool:
    """Whether a dispatch key mismatch is a tensor on another device: the two key sets the
    guard quotes name different backends (``CPU`` expected, ``Meta`` actual); torch checks
    dispatch keys before the device, so a move between backends is logged so."""
    found = _KEY_SETS.search(guard)
    if found is None:
        return False
    expected, actual = _backends(found.group(1)), _backends(found.group(2))
    return bool(expected) and bool(actual) and expected != actual


_SIZE_SOURCE = re.compile(r"((?:L\[['\"]\w+['\"]\]|\w+)(?:\.\w+)*\.size\(\)\[\d+\])")
_BOUND = re.compile(r"(-?\d+)\s*<=?\s*\S+?\.size\(\)\[\d+\](?:\s*<=?\s*(-?\d+))?")
_LEN_OF = re.compile(r"\blen\(\s*(?:L\[['\"](\w+)['\"]\]|(\w+))\s*\)")


def _local_source(text: str) -> str:
    """``x.size()[0]`` as torch names the source in a version's records, ``L['x'].size()[0]``
    (recompile reasons strip ``L[...]``)."""
    return re.sub(r"^(\w+)", lambda m: f"L['{m.group(1)}']", text) if text[:2] != "L[" else text


def _declared_range(guard: str, version: Compile) -> bool:
    """Whether the size range a guard checks is the one the version created its symbol
    with, other than torch's own ``[2, int_oo]``: a range the program declared."""
    found = _SIZE_SOURCE.search(guard)
    bound = _BOUND.search(guard)
    if found is None or bound is None:
        return False
    source = _local_source(found.group(1))
    low, high = bound.group(1), bound.group(2)
    for event in version.shape_events:
        if event.event != "create_symbol" or event.data.get("source") != source:
            continue
        vr = str(event.data.get("vr") or "")
        if vr == "[2, int_oo]":
            return False
        return vr == f"[{low}, {high if high is not None else 'int_oo'}]"
    return False


def _dict_length(guard: str, version: Compile) -> bool:
    """Whether ``len(d)`` checks a dict: the version's guards keep one for ``L['d']``."""
    found = _LEN_OF.search(guard)
    if found is None:
        return False
    name = found.group(1) or found.group(2)
    wanted = f"DictGuardManager: source=L['{name}']"
    for artifact in version.artifacts_named("dynamo_cpp_guards_str"):
        if wanted in artifact.text()[:GUARD_TEXT_CHARS]:
            return True
    return False


#: Characters of a version's guards read to tell a dict's length from a list's.
GUARD_TEXT_CHARS = 2_000_000


_PREVIOUS = re.compile(r"^\s*(\d+)/(\d+)\s*:\s*")
#: Where torch's ``   # source line`` comment starts.  The look-behind lets a match begin
#: only at the start of a run of blanks: ``\s{2,}#\s`` alone tried every blank of a run,
#: each scanning to its end (quadratic on a line of spaces).
GUARD_COMMENT = re.compile(r"(?<!\s)\s{2,}#\s")


@dataclass(frozen=True)
class GuardFailure:
    """Why one cached version did not fit: its compile, the failed guard, what it checks."""

    previous_label: str | None  # "[0/1]"
    previous: Compile | None
    guard: str  # first line of the failed guard, torch's own comment dropped
    kind: GuardKind  # what it checks


#: Kinds of failed check that say the calling context differed (grad mode, autocast ...),
#: not the inputs: a version compiled in another context fails on them whatever the inputs.
CONTEXT_KINDS: frozenset[GuardKind] = frozenset(
    {
        "global_state",
        "dispatch_keys",
        "grad_mode",
        "default_dtype",
        "autocast",
        "deterministic",
        "matmul_precision",
        "num_threads",
        "torch_function",
    }
)


def guard_failure(rank: RankTrace, reason: str, compile_: Compile) -> GuardFailure:
    text = reason.strip().splitlines()[0] if reason.strip() else ""
    label = previous = None
    match = _PREVIOUS.match(text)
    if match:
        previous = entry_compile(rank, compile_, f"{match.group(1)}/{match.group(2)}")
        label = previous.label if previous is not None else (f"[{match.group(1)}/{match.group(2)}]")
        text = text[match.end() :]
    # drop "   # source line"; a guard is one line of code: its head is read for the
    # comment and the explanation (a megabyte "guard" costs no more than a real one)
    head, *comment = GUARD_COMMENT.split(text[:GUARD_SCAN_CHARS], maxsplit=1)
    guard = head.strip() if comment else text.strip()
    return GuardFailure(
        label, previous, guard or text, guard_kind((guard or text)[:GUARD_SCAN_CHARS], previous)
    )


#: Characters of a failed guard's line searched for its comment and its explanation.
GUARD_SCAN_CHARS = 10_000
