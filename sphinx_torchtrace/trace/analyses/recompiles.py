"""Why a function was compiled again: per function, each recompile and each refusal
(past the recompile limit, or under ``error_on_recompile``) with the guards that failed,
as the log records them (:func:`.compare.logged_reasons`); where torch logged no reason,
none is made up.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..model import Compile, RankTrace
from .compare import graph_text, is_recompile, is_refused, logged_reasons, made_version
from .guards import CONTEXT_KINDS, GuardFailure, guard_failure
from .naming import FunctionKey, function_keys, function_place, function_source, places_by_name


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


def recompile_of(rank: RankTrace, compile_: Compile) -> Recompile:
    """A compile with the guard failures the log records for it (:func:`.compare.logged_reasons`),
    and whether it remade the graph of the version whose guard failed from the caches."""
    found = Recompile(
        compile_, [guard_failure(rank, r, compile_) for r in logged_reasons(compile_)]
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
    counts: Counter[FunctionKey] = Counter()
    frames: dict[FunctionKey, list[str]] = {}  # its frame ids as "[0/*]", in log order
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
    by_frame: dict[FunctionKey, RecompiledFunction] = {}
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
    firsts: Counter[FunctionKey] = Counter()  # the runs: each first version is one
    for c in rank.compiles:
        if not c.id.is_unknown and c.id.frame_compile_id == 0 and not c.id.attempt:
            firsts[keys[id(c)]] += 1
    for key, entry in by_frame.items():
        entry.runs = max(1, firsts[key])
    functions = list(by_frame.values())
    names = Counter(fn.function for fn in functions)
    for fn in functions:
        name = fn.function or fn.frame_label
        shared = len(places_by_name(rank).get(fn.function or "", ())) > 1  # any compile's
        twice = names[fn.function] > 1 or fn.function is None or shared
        fn.shown = f"{name} ({fn.place})" if twice and fn.place else name
    return functions
