"""Which function a compile compiled, and what pages call it and its compile id.

One definition of a compile's function (:func:`function_source`, :func:`function_keys`): its
metrics' ``co_name``, else its other attempts', the versions its recompile reasons name, the
compiles it follows, else its stack.  Odd data (missing keys, wrong types) names nothing
rather than raising: a docs build must never fail on a log.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from ..kept import Kept
from ..model import Compile, RankTrace, Trace
from .compare import entry_compile, previous_compile, recompile_reason_entries


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


def metrics_data(compile_: Compile) -> dict[str, Any]:
    m = compile_.compilation_metrics
    return m[0].data if m and isinstance(m[0].data, dict) else {}


def function_name(compile_: Compile) -> str | None:
    """The compiled function: ``co_name`` of the metrics, else the last frame of its stack."""
    name = metrics_data(compile_).get("co_name")
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
    found = next((c for c in candidates if metrics_data(c).get("co_name")), None)
    if found is not None:
        return found
    for entry, _ in recompile_reason_entries(compile_):
        named = entry_compile(rank, compile_, entry) if entry else None
        if named is not None and metrics_data(named).get("co_name"):
            return named
    before = previous_compile(rank, compile_)
    for _ in range(_PREDECESSORS):
        if before is None:
            break
        if metrics_data(before).get("co_name"):
            return before
        before = previous_compile(rank, before)
    return None


def function_label(rank: RankTrace, compile_: Compile) -> str | None:
    """The function as a title names it: with ``file.py:12`` where the name alone does not
    tell it apart (``<lambda>`` and other nameless code objects, and a name two functions
    of the rank share: two ``inner`` closures, two ``forward`` methods)."""
    name, place = compiled_function(rank, compile_)
    if name and place and (name.startswith("<") or len(places_by_name(rank).get(name, ())) > 1):
        return f"{name} {place.replace(chr(92), '/').rsplit('/', 1)[-1]}"
    return name


def places_by_name(rank: RankTrace) -> dict[str, set[str | None]]:
    """Where the functions of each name are defined, over the rank (computed once)."""
    return _PLACES(rank)


def _places_by_name(rank: RankTrace) -> dict[str, set[str | None]]:
    places: dict[str, set[str | None]] = {}
    for c in rank.compiles:
        if not c.id.is_unknown and (name := function_name(c)):
            places.setdefault(name, set()).add(function_place(c))
    return places


#: Each rank's function places by name, for the few ranks a build titles at once.
_PLACES: Kept[RankTrace, dict[str, set[str | None]]] = Kept(_places_by_name)


def function_place(compile_: Compile) -> str | None:
    """``file.py:12``: where the compiled function starts (metrics, else its stack), so two
    functions of one name in two files are told apart."""
    data = metrics_data(compile_)
    filename, line = data.get("co_filename"), data.get("co_firstlineno")
    if filename:
        return f"{filename}:{line}" if line is not None else str(filename)
    if compile_.stack:
        frame = compile_.stack[-1]
        return f"{frame.filename}:{frame.line}"
    return None


#: One function's compiles: (compiled autograd id, name, place, frame id where no record
#: names the function).  Not the frame id: ``torch._dynamo.reset()`` numbers frames again,
#: so one function may compile as ``[0/*]`` and later ``[1/*]``, and ``[0/*]`` of the next
#: run may be another function.
FunctionKey = tuple[int | None, str | None, str | None, int | None]


def function_keys(rank: RankTrace) -> dict[int, FunctionKey]:
    """The one definition of which function each compile (by ``id()``) belongs to: the
    function its records name (:func:`compiled_function`: its metrics, its attempts', the
    versions its recompile reasons name, the compiles it follows), by name and place; a
    compile none names is its frame id's latest named one's."""
    keys: dict[int, FunctionKey] = {}
    latest: dict[tuple[int | None, int | None], FunctionKey] = {}
    for c in rank.compiles:
        if c.id.is_unknown:
            continue
        frame = (c.id.compiled_autograd_id, c.id.frame_id)
        name, place = compiled_function(rank, c)
        if name is not None:
            key: FunctionKey = (frame[0], name, place, None)
        else:
            key = latest.get(frame, (frame[0], None, None, frame[1]))
        latest[frame] = key
        keys[id(c)] = key
    return keys


def functions_of(rank: RankTrace, known: list[Compile]) -> set[FunctionKey]:
    """The functions compiled, each once (:func:`function_keys`)."""
    keys = function_keys(rank)
    return {keys[id(c)] for c in known if id(c) in keys}


def compile_ids_of(rank: RankTrace) -> dict[str, list[Compile]]:
    """A rank's compile ids (``[0/0]``, ``[0/0] #2``), each with its attempts in log order."""
    found: dict[str, list[Compile]] = {}
    for c in rank.compiles:
        if not c.id.is_unknown:
            label = str(c.id.frame) + (f" #{c.occurrence}" if c.occurrence > 1 else "")
            found.setdefault(label, []).append(c)
    return found
