"""Figures the overview page shows, computed from the model (no Sphinx, no markup).

Everything here is plain data for the overview's view (``site/pages/overview/``, a
module per section): grouping, counting and explaining are done once, here, where they
can be tested on real logs; the view only lays them out.
Every function accepts odd data (missing keys, ``None``, wrong types, infinite or
400-digit numbers, unhashable ids) without raising, because a docs build must never
fail on a log; a number no compile could have logged counts as not logged.
"""

from __future__ import annotations

import json
import re
import weakref
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from ..model import Compile, RankTrace, StackFrame, StackTrieNode, Trace
from ..reader import json_list, load_json
from .compare import (
    entry_compile,
    graph_text,
    hit_limit,
    is_compiled_again,
    is_recompile,
    is_refused,
    logged_reasons,
    made_version,
    previous_compile,
    recompile_reason_entries,
)
from .event_lines import event_lines, events_with_lines
from .graph_breaks import EventGroup, break_counts, break_events, event_groups, parse_message
from .status import status_over
from .timings import (
    MAX_SECONDS,
    EventReading,
    EventTime,
    phase_times_of,
    plausible,
    read_events,
)

#: Keys of the overview's sections, in page order (the directive's ``:sections:`` option).
SECTION_KEYS = (
    "header",
    "legend",
    "trie",
    "directory",
    "charts",
    "failures",
    "recompiles",
    "cache",
    "times",
    "runtime",  # only with a runtime profile beside the log (run --runtime)
    "chromium",
    "ranks",
    "export",
    "glance",  # shown first, whatever its place here: the figures, each linking to its section
)


def section_keys(option: str | None) -> list[str]:
    """The sections a ``:sections:`` option asks for (all of them when it is empty)."""
    wanted = [p.strip().lower() for p in (option or "").split(",") if p.strip()]
    if not wanted:
        return list(SECTION_KEYS)
    return [k for k in SECTION_KEYS if k in wanted]


# -- naming compiles on the page ----------------------------------------------------------


class _FrameLike(Protocol):
    @property
    def compile(self) -> Compile: ...

    @property
    def name(self) -> str: ...


class FrameNames:
    """Domain object name of each compile, by identity (``Compile`` is not hashable).

    The plan's ``frame_for`` is a linear search; a page naming every compile
    several times would make it quadratic on big traces.
    """

    def __init__(self, frames: Iterable[_FrameLike]) -> None:
        self._names = {id(f.compile): f.name for f in frames}

    def __call__(self, compile_: Compile | None) -> str | None:
        return None if compile_ is None else self._names.get(id(compile_))


def rank_number(trace: Trace, rank: RankTrace) -> int:
    """The rank's number, or its position when the log does not say."""
    if rank.rank is not None:
        return rank.rank
    return next((i for i, r in enumerate(trace.ranks) if r is rank), 0)


# -- header ---------------------------------------------------------------------------------


def _metrics_data(compile_: Compile) -> dict[str, Any]:
    m = compile_.compilation_metrics
    return m[0].data if m and isinstance(m[0].data, dict) else {}


def torch_version(rank: RankTrace) -> str | None:
    """PyTorch version from the log's version record, else from any compilation metrics."""
    info = rank.torch_version if isinstance(rank.torch_version, dict) else {}
    version = info.get("pytorch_version")
    if version:
        return str(version)
    for c in rank.compiles:
        value = _metrics_data(c).get("pytorch_version")
        if value:
            return str(value)
    return None


def torch_commit(rank: RankTrace) -> str | None:
    """The git commit PyTorch was built from, when the log's version record says."""
    info = rank.torch_version if isinstance(rank.torch_version, dict) else {}
    commit = info.get("commit") or info.get("git_version")
    return str(commit) if commit else None


@dataclass(frozen=True)
class CaptureSpan:
    """When a log was written: torch logs month, day and time, never the year, so the
    year of ``start`` and ``end`` (2024, a leap year) is a placeholder, never to be shown."""

    start: datetime | None
    end: datetime | None
    seconds: float | None  # the header says it in words (``overview/view.duration_text``)


def _parse_timestamp(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        # a leap year, so that "0229" parses; the year itself is never shown
        return datetime.strptime("2024" + value.strip(), "%Y%m%d %H:%M:%S.%f")
    except ValueError:
        try:
            return datetime.strptime("2024" + value.strip(), "%Y%m%d %H:%M:%S")
        except ValueError:
            return None


def capture_span(ranks: Sequence[RankTrace]) -> CaptureSpan | None:
    """First and last timestamps over the ranks, and the seconds between them."""
    starts = [t for t in (_parse_timestamp(r.first_timestamp) for r in ranks) if t]
    ends = [t for t in (_parse_timestamp(r.last_timestamp) for r in ranks) if t]
    if not starts and not ends:
        return None
    start = min(starts) if starts else None
    end = max(ends) if ends else None
    seconds: float | None = None
    if start and end:
        delta = (end - start).total_seconds()
        if delta < 0:  # the log crossed New Year: December to January
            delta += 366 * 86400
        seconds = delta
    return CaptureSpan(start, end, seconds)


#: Settings readers most often change on purpose, with PyTorch's usual default.
#: Defaults move between releases, so the page says "differs from the usual default".
NOTABLE_SETTINGS: dict[str, dict[str, Any]] = {
    "dynamo_config": {
        "recompile_limit": 8,
        "cache_size_limit": 8,
        "accumulated_recompile_limit": 256,
        "automatic_dynamic_shapes": True,
        "assume_static_by_default": True,
        "capture_scalar_outputs": False,
        "capture_dynamic_output_shape_ops": False,
        "suppress_errors": False,
        "specialize_int": False,
        "specialize_float": False,
        "inline_inbuilt_nn_modules": True,
        "optimize_ddp": True,
        "compiled_autograd": False,
        "error_on_recompile": False,
        "fail_on_recompile_limit_hit": False,
        "allow_rnn": False,  # a graph break's hint names it: a run that changed it says so
        "trace_autograd_ops": False,
        "verify_correctness": False,
    },
    "inductor_config": {
        "max_autotune": False,
        "max_autotune_gemm": False,
        "max_autotune_pointwise": False,
        "coordinate_descent_tuning": False,
        "freezing": False,
        "cpp_wrapper": False,
        "fx_graph_cache": True,
        "force_disable_caches": False,
        "triton.cudagraphs": False,
        "epilogue_fusion": True,
        "aggressive_fusion": False,
        "fallback_random": False,
        "debug": False,
        "trace.enabled": False,
        "trace.provenance_tracking_level": 0,
        "size_asserts": True,
        "layout_optimization": True,
    },
}


def _config_dict(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = load_json(value)
        except (ValueError, RecursionError):  # JSON nested thousands deep is no config
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _configs_of(data: dict[str, Any], parsed: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    found = {}
    for key in NOTABLE_SETTINGS:
        raw = data.get(key)
        if raw is None:
            continue
        cache_key = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True, default=str)
        if cache_key not in parsed:  # configs repeat verbatim: parse each text once
            parsed[cache_key] = _config_dict(raw)
        value = parsed[cache_key]
        if value is not None:
            found[key] = value
    return found


def compile_configs(trace: Trace) -> list[dict[str, dict[str, Any]]]:
    """The ``dynamo_config``/``inductor_config`` pairs in the order the run used them: one
    entry per change (a return to an earlier configuration is a change too)."""
    return [config for config, _ in config_runs(trace)]


def config_runs(trace: Trace) -> list[tuple[dict[str, dict[str, Any]], int]]:
    """Each configuration the compilation metrics logged, with the number of compiles in a
    row that logged it, in log order.

    Read on the first rank that logged one (ranks of a job run the same settings); a
    configuration only another rank logged is added after, as one more change.
    """
    parsed: dict[str, dict[str, Any] | None] = {}
    runs: list[tuple[dict[str, dict[str, Any]], int]] = []
    for rank in trace.ranks:
        own: list[tuple[dict[str, dict[str, Any]], int]] = []
        for c in rank.compiles:
            found = _configs_of(_metrics_data(c), parsed)
            if not found:
                continue
            if own and own[-1][0] == found:
                own[-1] = (found, own[-1][1] + 1)
            else:
                own.append((found, 1))
        if not runs:
            runs = own
            continue
        for config, count in own:
            if all(config != seen for seen, _ in runs):
                runs.append((config, count))
    return runs


def compile_config(trace: Trace) -> dict[str, dict[str, Any]]:
    """The configuration of the first compilation that logged one (``{}`` when none did)."""
    configs = compile_configs(trace)
    return configs[0] if configs else {}


@dataclass(frozen=True)
class Setting:
    """A key setting as logged: its values in run order, each with the number of compiles in
    a row that logged it (more than one value where it changed mid-run)."""

    config: str  # "dynamo" or "inductor"
    key: str
    values: list[str]  # JSON text of each value, a new one where it changed
    usual: str
    compiles: tuple[int, ...] = ()  # compiles in a row with each value, where counted

    @property
    def changes(self) -> int:
        return len(self.values) - 1


def notable_settings(
    configs: Sequence[dict[str, dict[str, Any]]], counts: Sequence[int] = ()
) -> list[Setting]:
    """Key settings that differ from PyTorch's usual default at some point: what the user set.

    ``counts`` are the compiles of each configuration (:func:`config_runs`); with them, each
    value says how many compiles in a row logged it.
    """
    out = []
    for section, defaults in NOTABLE_SETTINGS.items():
        for key, usual in defaults.items():
            values: list[Any] = []
            compiles: list[int] = []
            for i, config in enumerate(configs):
                mapping = config.get(section) or {}
                if key not in mapping:
                    continue
                n = counts[i] if i < len(counts) else 0
                if values and mapping[key] == values[-1]:
                    compiles[-1] += n
                else:
                    values.append(mapping[key])
                    compiles.append(n)
            if any(v != usual for v in values):
                out.append(
                    Setting(
                        section.removesuffix("_config"),
                        key,
                        [json.dumps(v, default=str) for v in values],
                        json.dumps(usual),
                        tuple(compiles) if counts else (),
                    )
                )
    return out


def config_json(config: dict[str, dict[str, Any]]) -> str:
    return json.dumps(config, indent=1, sort_keys=True, default=str)


# -- stack trie -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TrieLine:
    """One node of the stack trie, flattened in pre-order for a nested bullet list."""

    depth: int
    frame: StackFrame
    compiles: list[Compile]


def trie_lines(root: StackTrieNode) -> list[TrieLine]:
    lines: list[TrieLine] = []
    stack: list[tuple[int, StackTrieNode]] = [(0, c) for c in reversed(root.children)]
    while stack:  # iterative: a deep trie must not hit the recursion limit
        depth, node = stack.pop()
        if node.frame is not None:
            lines.append(TrieLine(depth, node.frame, list(node.compiles)))
        stack.extend((depth + 1, c) for c in reversed(node.children))
    return lines


# -- compile directory ----------------------------------------------------------------------


def function_name(compile_: Compile) -> str | None:
    """The compiled function: ``co_name`` of the metrics, else the last frame of its stack."""
    name = _metrics_data(compile_).get("co_name")
    if name:
        return str(name)
    if compile_.stack:
        return compile_.stack[-1].name or None
    return None


def compiled_function(rank: RankTrace, compile_: Compile) -> tuple[str | None, str | None]:
    """(name, ``file:line``) of the function a compile compiled, from the records that say:
    its metrics, else its other attempts', else the versions its recompile reasons name,
    else the compiles it follows (a compile torch refused, past the recompile limit or
    under ``error_on_recompile``, logs no code name), else its stack."""
    source = function_source(rank, compile_)
    if source is not None:
        return function_name(source), function_place(source)
    return function_name(compile_), function_place(compile_)


#: How far back a compile's predecessors are followed for its function's name: a run of
#: refusals names none, but each refusal's reasons name a version, which does.
_PREDECESSORS = 64


def function_source(rank: RankTrace, compile_: Compile) -> Compile | None:
    """The compile whose metrics name ``compile_``'s function: itself, another attempt, a
    version its recompile reasons name (a guard of it failed: the same function), or the
    nearest compile it follows (same frame id) that names one; None where none does (then
    its stack names it, if anything).  One definition of which function a compile is."""
    candidates = [compile_, *rank.attempts(compile_)]
    found = next((c for c in candidates if _metrics_data(c).get("co_name")), None)
    if found is not None:
        return found
    for entry, _ in recompile_reason_entries(compile_):
        named = entry_compile(rank, compile_, entry) if entry else None
        if named is not None and _metrics_data(named).get("co_name"):
            return named
    before = previous_compile(rank, compile_)
    for _ in range(_PREDECESSORS):
        if before is None:
            break
        if _metrics_data(before).get("co_name"):
            return before
        before = previous_compile(rank, before)
    return None


def function_label(rank: RankTrace, compile_: Compile) -> str | None:
    """The function as a title names it: with ``file.py:12`` where the name alone does not
    tell it apart (``<lambda>`` and other nameless code objects, and a name two functions
    of the rank share: two ``inner`` closures, two ``forward`` methods)."""
    name, place = compiled_function(rank, compile_)
    if name and place and (name.startswith("<") or len(_places_by_name(rank).get(name, ())) > 1):
        return f"{name} {place.replace(chr(92), '/').rsplit('/', 1)[-1]}"
    return name


#: How many ranks' analyses are remembered (places, divergences): a few names each.
_RANKS_KEPT = 8
#: Each rank's function places by name, for the few ranks a build titles at once.
_PLACES: OrderedDict[int, tuple[weakref.ref[RankTrace], dict[str, set[str | None]]]] = OrderedDict()


def _places_by_name(rank: RankTrace) -> dict[str, set[str | None]]:
    """Where the functions of each name are defined, over the rank (computed once)."""
    found = _PLACES.get(id(rank))
    if found is not None and found[0]() is rank:
        return found[1]
    places: dict[str, set[str | None]] = {}
    for c in rank.compiles:
        if not c.id.is_unknown and (name := function_name(c)):
            places.setdefault(name, set()).add(function_place(c))
    _PLACES[id(rank)] = (weakref.ref(rank), places)
    while len(_PLACES) > _RANKS_KEPT:
        _PLACES.popitem(last=False)
    return places


def function_place(compile_: Compile) -> str | None:
    """``file.py:12``: where the compiled function starts (metrics, else its stack), so two
    functions of one name in two files are told apart."""
    data = _metrics_data(compile_)
    filename, line = data.get("co_filename"), data.get("co_firstlineno")
    if filename:
        return f"{filename}:{line}" if line is not None else str(filename)
    if compile_.stack:
        frame = compile_.stack[-1]
        return f"{frame.filename}:{frame.line}"
    return None


def _seconds(value: Any) -> float | None:
    return plausible(value, MAX_SECONDS)


def compile_seconds(compile_: Compile) -> float | None:
    return _seconds(_metrics_data(compile_).get("entire_frame_compile_time_s"))


CACHE_RESULTS = ("hit", "miss", "bypass")


def cache_counts(compile_: Compile) -> dict[str, int]:
    """Lookups per result (``hit``/``miss``/``bypass``), results that occurred only."""
    counts = Counter(e.result for e in compile_.cache_events)
    return {r: counts[r] for r in CACHE_RESULTS if counts[r]}


def cache_text(compile_: Compile) -> str:
    counts = cache_counts(compile_)
    return ", ".join(f"{n} {r}" for r, n in counts.items())


# -- failures and restarts ------------------------------------------------------------------


def reason_headline(reason: str) -> str:
    """The line that names a failure, without the location torch puts first (see
    :func:`.graph_breaks.parse_message`)."""
    return parse_message(reason).headline


#: What each kind of event is called, for readers who do not work on PyTorch.
FAILURE_KINDS = {
    "error": "Compile error",
    "graph_break": "Graph break",
    "restart": "Restart (no graph break)",
}


def failure_groups(compiles: Iterable[Compile]) -> list[EventGroup]:
    """The rows of the failures table: each graph break and error once, errors first."""
    return event_groups(break_events([c for c in compiles if not c.id.is_unknown]))


# -- recompiles -----------------------------------------------------------------------------

#: What a failed guard checks, from fixed patterns of torch's guard code (the first that
#: matches): a key, never trace text.  The pages say each in words (``site/guard_words.py``).
#: Where the guard compares a value, the kind is read from its source, the expression
#: compared: ``G['x']`` a global, ``self.x`` (``L['self'].x``) a module attribute,
#: ``__closure__`` / ``cell_contents`` a closure cell, ``len(...)`` a length,
#: ``dict.keys(...)`` a dict's keys; a bare name is an argument or local.
GUARD_KINDS: list[tuple[re.Pattern[str], str]] = [
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
        for names, kind in (
            ("grad_mode", "grad_mode"),
            ("default_dtype", "default_dtype"),
            (r"autocast\S*", "autocast"),
            ("deterministic_algorithms(?:_warn_only)?", "deterministic"),
            ("allow_tf32|allow_fp16_reduce|allow_bf16_reduce", "matmul_precision"),
            ("num_threads", "num_threads"),
            ("torch_function(?:_all_disabled)?", "torch_function"),
        )
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
REFINED_KINDS = ("declared_range", "device_keys")
#: Every kind a failed guard can be given.
GUARD_KIND_NAMES = (*dict.fromkeys(kind for _, kind in GUARD_KINDS), *REFINED_KINDS, "other")


def guard_kind(guard: str, version: Compile | None = None) -> str:
    """The kind of check a failed guard is (:data:`GUARD_KINDS`), ``other`` when none;
    with the version whose guard it is, a size range that version's symbol was created with
    is the range the user declared, and ``len(...)`` of a dict source is its keys."""
    kind = next((kind for pattern, kind in GUARD_KINDS if pattern.search(guard)), "other")
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
        if event.kind != "create_symbol" or event.data.get("source") != source:
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
_GUARD_COMMENT = re.compile(r"(?<!\s)\s{2,}#\s")


@dataclass(frozen=True)
class GuardFailure:
    """Why one cached version did not fit: its compile, the failed guard, what it checks."""

    previous_label: str | None  # "[0/1]"
    previous: Compile | None
    guard: str  # first line of the failed guard, torch's own comment dropped
    kind: str  # what it checks: a key of GUARD_KINDS, or "other"


#: Kinds of failed check that say the calling context differed (grad mode, autocast ...),
#: not the inputs: a version compiled in another context fails on them whatever the inputs.
CONTEXT_KINDS = frozenset(
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


@dataclass
class Recompile:
    compile: Compile
    reasons: list[GuardFailure]
    #: Its Dynamo graph is the one of the version whose guard failed first, and every cache
    #: lookup it made hit: torch made the same code again, only the guards differ.
    same_graph_cached: bool = False

    @property
    def headline(self) -> GuardFailure | None:
        """The failed check to name first: the one against a version compiled in the same
        context (grad mode, autocast ...), whose failure says what changed in the inputs;
        torch lists the most recent version first, which may be of another context."""
        same_context = [r for r in self.reasons if r.kind not in CONTEXT_KINDS]
        found = same_context or self.reasons
        return found[0] if found else None


@dataclass
class RecompiledFunction:
    """A function compiled more than once, and why each later version was needed."""

    function: str | None
    frame_label: str  # "[0/*]"
    versions: int
    recompiles: list[Recompile] = field(default_factory=list)
    place: str | None = None  # "file.py:12", where the function starts
    #: Compiles torch refused (:func:`.compare.is_refused`), each with the guards that
    #: failed: past the recompile limit, or under ``error_on_recompile``; no version made.
    refused: list[Recompile] = field(default_factory=list)
    shown: str = ""  # its name as pages show it: with its place where two share a name
    #: Runs of its compile ids: the ids start again after ``torch._dynamo.reset()``, and
    #: ``versions`` adds up every run's.
    runs: int = 1


def _guard_failure(rank: RankTrace, reason: str, compile_: Compile) -> GuardFailure:
    text = reason.strip().splitlines()[0] if reason.strip() else ""
    label = previous = None
    match = _PREVIOUS.match(text)
    if match:
        previous = entry_compile(rank, compile_, f"{match.group(1)}/{match.group(2)}")
        label = previous.label if previous is not None else (f"[{match.group(1)}/{match.group(2)}]")
        text = text[match.end() :]
    # drop "   # source line"; a guard is one line of code: its head is read for the
    # comment and the explanation (a megabyte "guard" costs no more than a real one)
    head, *comment = _GUARD_COMMENT.split(text[:GUARD_SCAN_CHARS], maxsplit=1)
    guard = head.strip() if comment else text.strip()
    return GuardFailure(
        label, previous, guard or text, guard_kind((guard or text)[:GUARD_SCAN_CHARS], previous)
    )


#: Characters of a failed guard's line searched for its comment and its explanation.
GUARD_SCAN_CHARS = 10_000


#: One function's compiles: (compiled autograd id, name, place, frame id where no record
#: names the function).  Not the frame id: ``torch._dynamo.reset()`` numbers frames again,
#: so one function may compile as ``[0/*]`` and later ``[1/*]``, and ``[0/*]`` of the next
#: run may be another function.
_FunctionKey = tuple[int | None, str | None, str | None, int | None]


def function_keys(rank: RankTrace) -> dict[int, _FunctionKey]:
    """The one definition of which function each compile (by ``id()``) belongs to: the
    function its records name (:func:`compiled_function`: its metrics, its attempts', the
    versions its recompile reasons name, the compiles it follows), by name and place; a
    compile none names is its frame id's latest named one's."""
    keys: dict[int, _FunctionKey] = {}
    latest: dict[tuple[int | None, int | None], _FunctionKey] = {}
    for c in rank.compiles:
        if c.id.is_unknown:
            continue
        frame = (c.id.compiled_autograd_id, c.id.frame_id)
        name, place = compiled_function(rank, c)
        if name is not None:
            key: _FunctionKey = (frame[0], name, place, None)
        else:
            key = latest.get(frame, (frame[0], None, None, frame[1]))
        latest[frame] = key
        keys[id(c)] = key
    return keys


def _functions_of(rank: RankTrace, known: list[Compile]) -> set[_FunctionKey]:
    """The functions compiled, each once (:func:`function_keys`)."""
    keys = function_keys(rank)
    return {keys[id(c)] for c in known if id(c) in keys}


def recompile_of(rank: RankTrace, compile_: Compile) -> Recompile:
    """A compile with the guard failures the log records for it (:func:`.compare.logged_reasons`),
    and whether it remade the graph of the version whose guard failed from the caches."""
    found = Recompile(
        compile_, [_guard_failure(rank, r, compile_) for r in logged_reasons(compile_)]
    )
    first = found.headline
    before = first.previous if first is not None else None
    found.same_graph_cached = before is not None and same_graph_cached(compile_, before)
    return found


def same_graph_cached(compile_: Compile, before: Compile) -> bool:
    """Whether every cache lookup of ``compile_`` hit (at least one) and its Dynamo graph is
    ``before``'s, text for text: a recompile that made the same code again."""
    events = compile_.cache_events
    if not events or any(e.result != "hit" for e in events):
        return False
    mine, theirs = graph_text(compile_), graph_text(before)
    return mine is not None and mine == theirs


def recompiled_functions(rank: RankTrace) -> list[RecompiledFunction]:
    """Per function that recompiled or was refused a recompile, each recompile and each
    refusal with its guard failures."""
    keys = function_keys(rank)
    counts: Counter[_FunctionKey] = Counter()
    frames: dict[_FunctionKey, list[str]] = {}  # its frame ids as "[0/*]", in log order
    for c in rank.compiles:
        if c.id.is_unknown:
            continue
        key = keys[id(c)]
        if made_version(rank, c):  # a compile that produced guarded code
            counts[key] += 1
        ca = "" if c.id.compiled_autograd_id is None else f"!{c.id.compiled_autograd_id}/"
        label = f"[{ca}{c.id.frame_id}/*]"
        if label not in frames.setdefault(key, []):
            frames[key].append(label)
    by_frame: dict[_FunctionKey, RecompiledFunction] = {}
    for c in rank.compiles:
        recompiled = is_recompile(rank, c)
        if not recompiled and not (is_refused(c) and not c.id.attempt):
            continue
        key = keys[id(c)]
        entry = by_frame.get(key)
        if entry is None:
            source = function_source(rank, c) or c
            entry = by_frame[key] = RecompiledFunction(
                key[1], ", ".join(frames[key]), counts[key], place=function_place(source)
            )
        (entry.recompiles if recompiled else entry.refused).append(recompile_of(rank, c))
    firsts: Counter[_FunctionKey] = Counter()  # the runs: each first version is one
    for c in rank.compiles:
        if not c.id.is_unknown and c.id.frame_compile_id == 0 and not c.id.attempt:
            firsts[keys[id(c)]] += 1
    for key, entry in by_frame.items():
        entry.runs = max(1, firsts[key])
    functions = list(by_frame.values())
    names = Counter(fn.function for fn in functions)
    for fn in functions:
        name = fn.function or fn.frame_label
        shared = len(_places_by_name(rank).get(fn.function or "", ())) > 1  # any compile's
        twice = names[fn.function] > 1 or fn.function is None or shared
        fn.shown = f"{name} ({fn.place})" if twice and fn.place else name
    return functions


def recompile_limits(
    configs: Sequence[dict[str, dict[str, Any]]], accumulated: bool = False
) -> list[int]:
    """Distinct ``recompile_limit`` values (``cache_size_limit`` in older torch), in run
    order; with ``accumulated``, the ``accumulated_recompile_limit`` ones (the versions of
    all of a code object's frames)."""
    keys = (
        ("accumulated_recompile_limit", "accumulated_cache_size_limit")
        if accumulated
        else ("recompile_limit", "cache_size_limit")
    )
    limits: list[int] = []
    for config in configs:
        dynamo = config.get("dynamo_config") or {}
        for key in keys:
            value = dynamo.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                if value not in limits:
                    limits.append(value)
                break
    return limits


# -- cache ----------------------------------------------------------------------------------


@dataclass
class CacheRow:
    compile: Compile
    cells: dict[str, str]  # cache name -> "hit", "miss ×2", ...


def cache_table(compiles: Iterable[Compile]) -> tuple[list[str], list[CacheRow]]:
    """Columns (caches in first-seen order) and one row per compile that looked a cache up."""
    caches: list[str] = []
    rows = []
    for c in compiles:
        if not c.cache_events:
            continue
        per_cache: dict[str, Counter[str]] = {}
        for e in c.cache_events:
            if e.cache not in caches:
                caches.append(e.cache)
            per_cache.setdefault(e.cache, Counter())[e.result] += 1
        cells = {
            cache: ", ".join(f"{r} ×{n}" if n > 1 else r for r, n in counts.items())
            for cache, counts in per_cache.items()
        }
        rows.append(CacheRow(c, cells))
    return caches, rows


def cache_totals(compiles: Iterable[Compile]) -> dict[str, int]:
    counts = Counter(e.result for c in compiles for e in c.cache_events)
    return {r: counts[r] for r in CACHE_RESULTS if counts[r]}


# -- compile time ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TimePhase:
    """A compile-time figure torch logs: where it is (metrics kind and key), under a stable
    key.  The pages name it in words (``site/phase_words.py``), the diff JSON by its own
    published names (``comparing/diff.py``)."""

    key: str  # "entire_frame"
    kind: str  # "compilation_metrics" or "bwd_compilation_metrics"
    metric: str  # "entire_frame_compile_time_s"


#: The compile-time figures torch logs, in pipeline order.
TIME_PHASES = (
    TimePhase("entire_frame", "compilation_metrics", "entire_frame_compile_time_s"),
    TimePhase("dynamo_before_restart", "compilation_metrics", "dynamo_time_before_restart_s"),
    TimePhase("backend", "compilation_metrics", "backend_compile_time_s"),
    TimePhase("inductor", "compilation_metrics", "inductor_compile_time_s"),
    TimePhase("code_gen", "compilation_metrics", "code_gen_time_s"),
    TimePhase("backward_inductor", "bwd_compilation_metrics", "inductor_compile_time_s"),
    TimePhase("backward_code_gen", "bwd_compilation_metrics", "code_gen_time_s"),
)


@dataclass
class PhaseTotal:
    phase: str  # a key of TIME_PHASES
    seconds: float
    compiles: int  # compiles that logged this figure
    slowest: Compile | None
    slowest_seconds: float


def time_totals(compiles: Iterable[Compile]) -> list[PhaseTotal]:
    """Sum, count and slowest compile of each compile-time figure (phases never logged left out)."""
    compiles = list(compiles)
    out = []
    for phase in TIME_PHASES:
        total, n, slowest, slowest_s = 0.0, 0, None, -1.0
        for c in compiles:
            values = [
                v
                for m in c.metrics
                if m.kind == phase.kind and isinstance(m.data, dict)
                if (v := _seconds(m.data.get(phase.metric))) is not None
            ]
            if not values:
                continue
            value = sum(values)
            total += value
            n += 1
            if value > slowest_s:
                slowest, slowest_s = c, value
        if n and (total > 0 or phase.metric == "entire_frame_compile_time_s"):  # zeros: noise
            out.append(PhaseTotal(phase.key, total, n, slowest, slowest_s))
    return out


def chromium_phase_times(rank: RankTrace, limit: int = 12) -> list[EventTime]:
    """Where compile time went by torch's own timers: chromium ``B``/``E`` pairs and ``X`` events.

    Nested events of the same name are counted once (the outermost), so a
    recursive timer does not double its time.  Reading every event back from the log
    is most of the cost: :func:`chromium_events_json` counts them as it writes them.
    """
    known = phase_times_of(rank)
    if known is None:  # one reading of the events gives both: see timings.read_events
        read_events(rank)
        known = phase_times_of(rank) or []
    return known[:limit]


# -- chromium events ------------------------------------------------------------------------


def chromium_file(trace: Trace, rank: RankTrace) -> str:
    """Where the renderer writes a rank's events, relative to the overview page."""
    suffix = f"_rank{rank.rank}" if trace.is_multi_rank else ""
    return f"_raw/chromium_events{suffix}.json"


def chromium_events_json(rank: RankTrace) -> str:
    """All of a rank's chromium events as a JSON array, for Perfetto or chrome://tracing."""
    lines = []
    reading = EventReading(rank)  # the overview's chart and timers, from this one reading
    for event, line, data in events_with_lines(rank):
        reading.add(event, data)
        lines.append(line)
    reading.done()
    if not lines:
        return "[]\n"
    return "[\n" + ",\n".join(lines) + "\n]\n"  # one event a line


def chromium_events_all_ranks(trace: Trace) -> Iterator[str]:
    """Every rank's chromium events as one JSON array, piece by piece (a rank at a time: a
    thousand ranks' events are never in memory at once), each event's ``pid`` its rank and
    each rank named, so Perfetto shows the ranks one above the other (as tlparse's merged
    file does)."""
    yield "["
    first = True
    for rank in trace.ranks:
        number = rank_number(trace, rank)
        parts = [
            json.dumps(
                {
                    "name": "process_name",
                    "ph": "M",
                    "pid": number,
                    "args": {"name": f"rank {number}"},
                }
            )
        ]
        parts.extend(line for line, _ in event_lines(rank, pid=number))
        yield ("\n" if first else ",\n") + ",\n".join(parts)
        first = False
    yield "\n]\n"


# -- several ranks --------------------------------------------------------------------------


@dataclass
class MissingIds:
    """Compile ids that a set of ranks lacks while other ranks have them."""

    labels: list[str]
    missing_on: list[int]


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


@dataclass
class RuntimeSpread:
    """A compiled graph's estimated runtime (Inductor's estimate, summed over its ops) on
    the fastest and the slowest rank, as tlparse's graph runtime analysis gives it."""

    label: str
    fastest: int  # rank number
    fastest_ns: float
    slowest: int
    slowest_ns: float

    @property
    def delta_ns(self) -> float:
        return self.slowest_ns - self.fastest_ns


@dataclass
class StatusSplit:
    """One compile id with different statuses on different ranks (each rank's status over
    the id's attempts, as its page and the glance say it)."""

    label: str
    ranks_by_status: dict[str, list[int]]


@dataclass
class FunctionSplit:
    """One compile id naming different functions on different ranks: the ranks compiled
    different code under the same number, so its pages are not comparable."""

    label: str
    ranks_by_function: dict[str, list[int]]


@dataclass
class Divergence:
    missing_ids: list[MissingIds] = field(default_factory=list)
    cache_groups: list[RankGroup] = field(default_factory=list)  # empty when all agree
    status_splits: list[StatusSplit] = field(default_factory=list)
    function_splits: list[FunctionSplit] = field(default_factory=list)
    #: Ranks grouped by the input shapes their Dynamo graphs were compiled for; empty
    #: when all agree (ranks running graphs of different shapes often explain a hang).
    shape_groups: list[RankGroup] = field(default_factory=list)
    #: Ranks grouped by what inductor logged of each graph's distributed schedule
    #: (:data:`SCHEDULE_ARTIFACTS`), by artifact name; only names whose groups differ.
    schedule_groups: dict[str, list[RankGroup]] = field(default_factory=dict)
    #: Collectives parity: by compile id, ranks grouped by the collectives their graph
    #: issues, in order, with shapes and arguments; only compile ids whose groups differ.
    #: (Same kernel names in another order, or on other shapes, pass a schedule check.)
    collective_groups: dict[str, list[RankGroup]] = field(default_factory=dict)
    #: Each graph's estimated runtime on its fastest and slowest rank, where logged.
    runtimes: list[RuntimeSpread] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(
            self.missing_ids
            or self.cache_groups
            or self.status_splits
            or self.function_splits
            or self.shape_groups
            or self.schedule_groups
            or self.collective_groups
            or self.runtime_differs
        )

    @property
    def runtime_differs(self) -> bool:
        return any(s.delta_ns > 0 for s in self.runtimes)


def _known_labels(rank: RankTrace) -> list[str]:
    seen: list[str] = []
    for c in rank.compiles:
        if not c.id.is_unknown and c.label not in seen:
            seen.append(c.label)
    return seen


def divergence(trace: Trace) -> Divergence:
    """How the ranks of a job differ: compile ids, cache hit/miss patterns, statuses,
    graph shapes, collectives, schedules.

    Ranks of one job usually compile the same code the same way; a difference
    is a common cause of hangs (collectives in different graphs) and of uneven
    compile times (one rank missing the cache).  Reading a thousand ranks' graphs costs
    seconds, and the glance, the overview and the directive's note all ask: the answer
    for the traces asked last is kept (by identity, a weak reference telling a live
    trace from one whose ``id()`` was reused).
    """
    found = _DIVERGENCE.get(id(trace))
    if found is not None and found[0]() is trace:
        return found[1]
    result = _divergence(trace)
    _DIVERGENCE[id(trace)] = (weakref.ref(trace), result)
    while len(_DIVERGENCE) > _RANKS_KEPT:
        _DIVERGENCE.popitem(last=False)
    return result


_DIVERGENCE: OrderedDict[int, tuple[weakref.ref[Trace], Divergence]] = OrderedDict()


def _divergence(trace: Trace) -> Divergence:
    result = Divergence()
    if not trace.is_multi_rank:
        return result
    numbers = [rank_number(trace, r) for r in trace.ranks]
    labels = {n: _known_labels(r) for n, r in zip(numbers, trace.ranks, strict=True)}
    union: list[str] = []
    for n in numbers:
        union.extend(label for label in labels[n] if label not in union)
    by_missing: dict[tuple[int, ...], list[str]] = {}
    for label in union:
        missing = tuple(n for n in numbers if label not in labels[n])
        if missing:
            by_missing.setdefault(missing, []).append(label)
    result.missing_ids = [MissingIds(ids, list(m)) for m, ids in by_missing.items()]

    patterns: dict[tuple[tuple[str, str, str], ...], list[int]] = {}
    for n, rank in zip(numbers, trace.ranks, strict=True):
        pattern = tuple((c.label, e.cache, e.result) for c in rank.compiles for e in c.cache_events)
        patterns.setdefault(pattern, []).append(n)
    if len(patterns) > 1:
        result.cache_groups = [RankGroup(r, _cache_lookups(p)) for p, r in patterns.items()]

    statuses: dict[str, dict[str, list[int]]] = {}
    functions: dict[str, dict[str, list[int]]] = {}
    for n, rank in zip(numbers, trace.ranks, strict=True):
        for label, attempts in _compile_ids(rank).items():
            status = str(status_over(rank, attempts))
            statuses.setdefault(label, {}).setdefault(status, []).append(n)
            name = function_name(attempts[0])
            if name is not None:
                functions.setdefault(label, {}).setdefault(name, []).append(n)
    result.status_splits = [StatusSplit(label, s) for label, s in statuses.items() if len(s) > 1]
    result.function_splits = [
        FunctionSplit(label, f) for label, f in functions.items() if len(f) > 1
    ]
    result.shape_groups = _shape_groups(numbers, trace.ranks)
    for name, signature in SCHEDULE_ARTIFACTS.items():
        groups = _artifact_groups(numbers, trace.ranks, name, signature)
        if groups:
            result.schedule_groups[name] = groups
    result.collective_groups = _collective_groups(numbers, trace.ranks)
    result.runtimes = _runtime_spreads(numbers, trace.ranks)
    return result


def _compile_ids(rank: RankTrace) -> dict[str, list[Compile]]:
    """A rank's compile ids (``[0/0]``, ``[0/0] #2``), each with its attempts in log order."""
    found: dict[str, list[Compile]] = {}
    for c in rank.compiles:
        if not c.id.is_unknown:
            label = str(c.id.frame) + (f" #{c.occurrence}" if c.occurrence > 1 else "")
            found.setdefault(label, []).append(c)
    return found


#: What ranks can differ in, as keys (the pages say each in words), in the overview's order;
#: the schedule artifacts of :data:`SCHEDULE_ARTIFACTS` follow by their torch names.
DIVERGENCE_KINDS = (
    "compile_ids",
    "functions",
    "statuses",
    "cache_patterns",
    "graph_shapes",
    "collectives_parity",
    "runtime_estimates",
)


def diverging_kinds(d: Divergence) -> list[str]:
    """What the ranks differ in: keys of :data:`DIVERGENCE_KINDS`, then the names of the
    schedule artifacts whose sequences differ."""
    found = (
        d.missing_ids,
        d.function_splits,
        d.status_splits,
        d.cache_groups,
        d.shape_groups,
        d.collective_groups,
        d.runtime_differs,
    )
    return [kind for kind, f in zip(DIVERGENCE_KINDS, found, strict=True) if f] + list(
        d.schedule_groups
    )


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


def _artifact_groups(
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


def _collective_groups(numbers: list[int], ranks: list[RankTrace]) -> dict[str, list[RankGroup]]:
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


#: An op's estimated runtime past this (a day, in nanoseconds) is no estimate: left out.
MAX_RUNTIME_NS = 86_400e9


def _runtime_spreads(numbers: list[int], ranks: list[RankTrace]) -> list[RuntimeSpread]:
    """Each compile id's estimated runtime (``inductor_runtime_and_tensor_meta``, summed
    over its ops) on its fastest and slowest rank."""
    totals: dict[str, list[tuple[float, int]]] = {}
    for n, rank in zip(numbers, ranks, strict=True):
        for c in rank.compiles:
            estimate = None
            for artifact in c.artifacts_named("inductor_runtime_and_tensor_meta"):
                ops = (artifact.json_object() or {}).get("ops") if artifact.size else None
                if isinstance(ops, list):  # nanoseconds a number can hold: never a float()
                    estimate = (estimate or 0.0) + sum(  # of a 400-digit integer, never NaN
                        ns
                        for op in ops
                        if isinstance(op, dict)
                        and (ns := plausible(op.get("estimated_runtime_ns"), MAX_RUNTIME_NS))
                        is not None
                    )
            if estimate is not None:
                totals.setdefault(c.label, []).append((estimate, n))
    spreads = []
    for label, values in totals.items():
        if len(values) < 2:
            continue
        low, high = min(values), max(values)
        spreads.append(RuntimeSpread(label, low[1], low[0], high[1], high[0]))
    return spreads


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


def _shape_groups(numbers: list[int], ranks: list[RankTrace]) -> list[RankGroup]:
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


def _cache_lookups(pattern: tuple[tuple[str, str, str], ...]) -> CacheLookups:
    """A rank's lookups (compile id, cache, result), counted per cache and result."""
    per_cache: dict[str, Counter[str]] = {}
    for _, cache, res in pattern:
        per_cache.setdefault(cache, Counter())[res] += 1
    return CacheLookups(tuple((cache, tuple(sorted(c.items()))) for cache, c in per_cache.items()))


@dataclass
class RankRow:
    """A rank's figures, counted as the glance counts them (compile ids, each with its
    status over its attempts), so that the ranks' rows add up to the glance's."""

    number: int
    rank: RankTrace
    compile_ids: int
    attempts: int
    statuses: dict[str, int]  # status -> compile ids
    seconds: float | None  # None when no compilation logged its time
    chromium_events: int


def rank_rows(trace: Trace) -> list[RankRow]:
    rows = []
    for rank in trace.ranks:
        known = [c for c in rank.compiles if not c.id.is_unknown]
        ids = _compile_ids(rank)
        times = [s for c in known if (s := compile_seconds(c)) is not None]
        total = sum(times) if times else None
        statuses = Counter(str(status_over(rank, group)) for group in ids.values())
        rows.append(
            RankRow(
                rank_number(trace, rank),
                rank,
                len(ids),
                len(known),
                dict(statuses),
                total,
                len(rank.chromium_events),
            )
        )
    return rows


# -- torch.export ---------------------------------------------------------------------------


#: The kinds of draft-export issue, in tlparse's order; the pages say each in words.
EXPORT_ISSUE_KINDS = (
    "guard_evaluated",
    "data_dependent",
    "missing_fake_kernel",
    "mismatched_fake_kernel",
)


@dataclass(frozen=True)
class ExportIssue:
    """One row of the draft-export report, as tlparse lists them."""

    kind: str  # one of EXPORT_ISSUE_KINDS
    reason: str  # the expression or operator
    detail: str | None  # what the log adds: a data-dependent error's assumed result, a
    # fake kernel's reason; None where it logged none
    location: str | None  # innermost user frame, with the source line it quotes
    place: str | None = None  # the same frame without its source line (``:no-source:``)


def _frame_text(rank: RankTrace, raw: Any) -> tuple[str | None, str | None]:
    """The last frame of a logged stack (``[{filename, line, name, loc}]``), readable:
    with its source line, and without it."""
    if not isinstance(raw, list):
        return None, None
    for item in reversed(raw):
        if not isinstance(item, dict):
            continue
        filename = item.get("filename")
        if isinstance(filename, int) and not isinstance(filename, bool):
            filename = rank.strings.get(filename, f"<string {filename}>")
        if not isinstance(filename, str):
            filename = str(item.get("uninterned_filename", "<unknown>"))
        place = f"{filename}:{item.get('line', '?')} in {item.get('name', '?')}"
        loc = item.get("loc")
        return (f"{place}: {loc}" if isinstance(loc, str) and loc.strip() else place), place
    return None, None


def export_issues(rank: RankTrace) -> list[ExportIssue]:
    """The draft-export report's issues in tlparse's order, each by its kind (a key of
    :data:`EXPORT_ISSUE_KINDS`) with what the log says of it."""
    report = rank.export
    issues = []
    for e in report.guards_added:
        if e.data.get("prefix") == "eval":
            issues.append(
                ExportIssue(
                    "guard_evaluated",
                    str(e.data.get("expr", "")),
                    None,
                    *_frame_text(rank, e.data.get("user_stack")),
                )
            )
    for e in report.data_dependent_errors:
        result = e.data.get("result")
        issues.append(
            ExportIssue(
                "data_dependent",
                str(e.data.get("expr", "")),
                str(result) if result is not None else None,
                *_frame_text(rank, e.data.get("user_stack")),
            )
        )
    for kind, events in (
        ("missing_fake_kernel", report.missing_fake_kernels),
        ("mismatched_fake_kernel", report.mismatched_fake_kernels),
    ):
        for e in events:
            reason = e.data.get("reason")
            issues.append(
                ExportIssue(kind, str(e.data.get("op", "")), str(reason) if reason else None, None)
            )
    return issues


@dataclass(frozen=True)
class UnbackedSymbol:
    symbol: str
    value_range: str | None
    location: str | None  # as :class:`ExportIssue`'s
    place: str | None = None


def unbacked_symbols(rank: RankTrace) -> list[UnbackedSymbol]:
    return [
        UnbackedSymbol(
            str(e.data.get("symbol", "?")),
            str(e.data["vr"]) if e.data.get("vr") is not None else None,
            *_frame_text(rank, e.data.get("user_stack")),
        )
        for e in rank.export.unbacked_symbols
    ]


def exported_programs(rank: RankTrace) -> list[str]:
    """Texts of the exported programs (``site.source`` leaves out the code they quote)."""
    return [e.payload.text() for e in rank.export.exported_programs if e.payload is not None]


# -- triage: the answer first -----------------------------------------------------------------


@dataclass
class Triage:
    """The numbers a reader wants before anything else, for the overview's first screen and
    the ``summary`` command: what compiled, how often, what broke, what it cost.

    Graph breaks and errors are the events of :func:`.graph_breaks.break_events`, each
    once however many records torch wrote for it; the failures table shows the same list.
    """

    ranks: int
    frames: int  # functions compiled: by frame id and name, per rank, summed (a reset reuses ids)
    frames_per_rank: tuple[int, int]  # (fewest, most) of them on one rank
    compile_ids: int  # distinct compile ids (repeats after a reset counted apart)
    attempts: int  # compilations logged, restarted attempts included
    statuses: dict[str, int]  # status -> compile ids, over the ids' attempts' worst
    graph_breaks: int  # graph breaks that did not stop the frame (one event each)
    graph_break_reasons: int  # distinct places among them: rows of the failures table
    errors: int  # compile errors, a graph break that made torch skip the frame included
    distinct_errors: int  # rows of the failures table (kind, place, what followed)
    recompiled: list[RecompiledFunction]  # per function that recompiled (all ranks)
    #: The same, each function once however many ranks recompiled it.
    recompiled_by_function: list[FunctionRecompiles]
    cache: dict[str, int]  # hit / miss / bypass lookups
    compile_seconds: float | None  # whole-frame compile time summed; None when never logged
    divergence: Divergence | None  # for several ranks
    #: ``ok`` compile ids that logged a graph break torch resumed from without a restart
    #: (a data-dependent jump): ok by their metrics, split by a break all the same.
    ok_with_breaks: int = 0
    #: Compiles of a function after a version that failed, with no reason logged: compiled
    #: again, not recompiled (:func:`.compare.is_compiled_again`).
    compiled_again: int = 0
    #: Compiles torch refused past the recompile limit (no new version, not recompiles),
    #: whether the call ran on or raised ``FailOnRecompileLimitHit``.
    limit_hits: list[Compile] = field(default_factory=list)
    #: Compiles refused under ``error_on_recompile`` (``RecompileError`` raised instead).
    error_on_recompile: list[Compile] = field(default_factory=list)
    graph_break_kinds: int = 0  # distinct kinds of graph break (:class:`BreakCounts`)
    error_kinds: int = 0  # distinct kinds of compile error
    #: (distinct places named in the user's code, events with no place logged)
    graph_break_places: tuple[int, int] = (0, 0)
    restarts: int = 0  # restarts of the analysis that were no graph break
    error_places: tuple[int, int] = (0, 0)
    #: (rank number, its compile seconds) of the rank that spent the most: what held the
    #: job up, where a sum over the ranks is not a time anyone waited; None for one rank.
    slowest: tuple[int, float] | None = None

    @property
    def recompiles(self) -> int:
        return sum(len(fn.recompiles) for fn in self.recompiled)


@dataclass
class FunctionRecompiles:
    """One function's recompiles over the ranks that recompiled it: on a job's ranks, the
    same function recompiles on each, and is one function to a reader, not one per rank."""

    shown: str  # as :attr:`RecompiledFunction.shown`
    per_rank: list[int]  # recompiles on each rank that recompiled it


def triage(trace_or_rank: Trace | RankTrace) -> Triage:
    """The first-screen figures of a whole trace (all ranks) or of one rank."""
    ranks = trace_or_rank.ranks if isinstance(trace_or_rank, Trace) else [trace_or_rank]
    compile_ids = attempts = ok_with_breaks = compiled_again = 0
    limit_hits: list[Compile] = []
    error_on_recompile: list[Compile] = []
    per_rank: list[int] = []
    groups: list[EventGroup] = []
    statuses: Counter[str] = Counter()
    recompiled: list[RecompiledFunction] = []
    by_function: dict[tuple[str, int], FunctionRecompiles] = {}
    total, timed = 0.0, False
    spent: list[tuple[float, int]] = []  # (compile seconds, -position) of each timed rank
    for position, rank in enumerate(ranks):
        known = [c for c in rank.compiles if not c.id.is_unknown]
        attempts += len(known)
        per_rank.append(len(_functions_of(rank, known)))
        ids = _compile_ids(rank)  # as the ranks table and the checks count them
        compile_ids += len(ids)
        for group in ids.values():
            status = str(status_over(rank, group))
            statuses[status] += 1
            if status == "ok" and any(f.kind == "graph_break" for c in group for f in c.failures):
                ok_with_breaks += 1
        groups += failure_groups(known)
        own = [fn for fn in recompiled_functions(rank) if fn.recompiles]
        compiled_again += sum(is_compiled_again(rank, c) for c in known)
        refused = [c for c in known if not c.id.attempt and is_refused(c)]
        limit_hits += [c for c in refused if hit_limit(c)]
        error_on_recompile += [c for c in refused if not hit_limit(c)]
        recompiled.extend(own)
        nth: Counter[str] = Counter()  # two functions one rank shows alike stay two
        for fn in own:
            nth[fn.shown] += 1
            key = (fn.shown, nth[fn.shown])
            by_function.setdefault(key, FunctionRecompiles(fn.shown, [])).per_rank.append(
                len(fn.recompiles)
            )
        times = [s for c in known if (s := compile_seconds(c)) is not None]
        for seconds in times:
            total, timed = total + seconds, True
        if times:
            spent.append((sum(times), -position))
    counts = break_counts(groups)  # a break on several ranks is one distinct break
    all_compiles = [c for r in ranks for c in r.compiles]
    several = isinstance(trace_or_rank, Trace) and trace_or_rank.is_multi_rank
    multi = trace_or_rank if several and isinstance(trace_or_rank, Trace) else None
    slowest = None
    if multi is not None and spent:
        seconds, position = max(spent)  # the first such rank, where several spent as much
        slowest = (rank_number(multi, multi.ranks[-position]), seconds)
    return Triage(
        ranks=len(ranks),
        frames=sum(per_rank),
        frames_per_rank=(min(per_rank, default=0), max(per_rank, default=0)),
        compile_ids=compile_ids,
        attempts=attempts,
        statuses=dict(statuses),
        graph_breaks=counts.graph_breaks,
        graph_break_reasons=counts.distinct_breaks,
        errors=counts.errors,
        distinct_errors=counts.distinct_errors,
        ok_with_breaks=ok_with_breaks,
        compiled_again=compiled_again,
        limit_hits=limit_hits,
        error_on_recompile=error_on_recompile,
        graph_break_kinds=counts.break_kinds,
        error_kinds=counts.error_kinds,
        graph_break_places=(counts.break_places, counts.break_unplaced),
        restarts=counts.restarts,
        error_places=(counts.error_places, counts.error_unplaced),
        recompiled=recompiled,
        recompiled_by_function=list(by_function.values()),
        cache=cache_totals(all_compiles),
        compile_seconds=total if timed else None,
        divergence=divergence(multi) if multi is not None else None,
        slowest=slowest,
    )
