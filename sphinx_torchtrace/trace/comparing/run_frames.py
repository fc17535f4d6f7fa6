"""The frames of one run, reduced to what a comparison of runs looks at.

Compile ids and line numbers shift whenever a program is edited or a graph break comes or
goes, so nothing is matched by them.  A *frame* (every compile of one code object, ``[x/*]``)
is known by what it is (:class:`RunFunction`): its file (after the caller's path rewriting),
its function name (a resume function's ``_at_<line>`` dropped) and which occurrence of that
function in the run it is.  A graph break is known by its reason (numbers that are lines or
addresses removed) and user location (:class:`BreakSite`).  A module of its own because
the comparison of two runs (:mod:`.matching`) and the trend of many (:mod:`.trend`) read
the same facts.

Every string here comes from a log and stays plain data; all work is bounded.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ..analyses.caches import cache_totals
from ..analyses.compare import DIFF_ARTIFACT, is_recompile, recompile_reason_entries
from ..analyses.failures import reason_headline
from ..analyses.graph_breaks import BreakEvent, break_events
from ..analyses.guards import GUARD_COMMENT
from ..analyses.phases import compile_seconds
from ..compile_status import combined_status
from ..kernels import KernelKind
from ..model import Compile, RankTrace
from ..runtime import RuntimeProfile, region_key
from ..secrets import mask_secrets
from ..volatile import message_key

#: Bounds: text looked at per reason (a traceback's for its user frame), guard lines per frame.
MAX_REASON_CHARS = 2000
MAX_TRACEBACK_CHARS = 50_000
MAX_GUARD_LINES = 5000


_RESUME_SUFFIX = re.compile(r"^(torch_dynamo_resume_in_.{1,500}?)_at_\d{1,12}$")


# line numbers and addresses change with every edit or run: `file.py:12`, `line 12`,
# `_at_12`, `0x7f..`, object ids of 8+ digits, inside names too (an optimizer's globals are
# `__optimizer_140234_140567_c8`).  Each alternative is a literal then digits.
_NUMBERS = re.compile(
    r"(\.py\"?, line |\.py:|\bline |_at_)\d{1,12}|0x[0-9a-fA-F]{1,32}|(?<!\d)\d{8,40}(?!\d)"
)


_LOCATION_LINE = re.compile(r":\d{1,12}$")


_TRACEBACK_FRAME = re.compile(r'File "([^"\n]{1,1000})", line \d{1,12}, in ([\w<>.]{1,300})')


_GUARD_TREE = re.compile(r"^[|\s]{0,400}\+-\s?")


# FX's generated code is `<eval_with_key>.7`: the number counts modules made in the process
_GENERATED_FILE = re.compile(r"^(<[\w ]{1,100}>)\.\d{1,12}$")


_GUARD_NOISE = ("TREE_GUARD_MANAGER:", "RootGuardManager")


_GRAPH_LOCATION = re.compile(r"(\.py):\d{1,12}( in )")


def _no_numbers(text: str) -> str:
    return _NUMBERS.sub(lambda m: m.group(1) + "N" if m.group(1) else "N", text)


def base_function(name: str) -> str:
    """``torch_dynamo_resume_in_step_at_14`` -> ``torch_dynamo_resume_in_step``; others as is."""
    match = _RESUME_SUFFIX.match(name)
    return match.group(1) if match else name


@dataclass(frozen=True, order=True)
class RunFunction:
    """A function of a run, as the comparison matches it across runs: file, function
    (resume suffix dropped), n-th such frame."""

    file: str
    function: str
    occurrence: int  # 1 for the first frame of this file and function in the run

    def __str__(self) -> str:
        where = self.file.rsplit("/", 1)[-1]
        nth = f" #{self.occurrence}" if self.occurrence > 1 else ""
        return f"{where}:{self.function}{nth}"


@dataclass(frozen=True, eq=False)
class BreakSite:
    """A distinct graph break or compile error: its registry id (``GB0025``) where torch
    logged one, else its reason without numbers; the user file and function."""

    reason: str
    file: str
    function: str
    registry_id: str | None = None
    #: The record it was read from, ``log:line`` (evidence; never compared).
    evidence: str | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        """What two runs' breaks are matched by: the id names the break even when torch
        words it anew."""
        return (self.registry_id or self._reason_key, self.file, self.function)

    @cached_property
    def _reason_key(self) -> str:
        """The reason as two runs' reasons are matched: what differs between any two
        processes (a pid, a port, an address, a temporary folder) left out."""
        return message_key(self.reason)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BreakSite) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __lt__(self, other: BreakSite) -> bool:
        return self.key < other.key

    def __str__(self) -> str:
        where = f"{self.file.rsplit('/', 1)[-1]}:{self.function}"
        if self.registry_id:
            return f"{self.registry_id} at {where} ({self.reason})"
        return f"{self.reason} ({where})"


@dataclass
class FrameFacts:
    """One frame of one run, reduced to what is compared (and its labels, for showing)."""

    key: RunFunction
    label: str  # "[0/*]", or "[!1/0/*]" for compiled autograd
    compiles: list[Compile]
    first_line: int | None  # shown, never compared
    log: str  # the log's path as shown: with a compile's first line, the evidence
    status: str
    versions: int  # compile ids of the frame (1 = compiled once)
    #: Its recompiles, as every page counts them (:func:`.compare.is_recompile`).
    recompiles: int
    recompile_reasons: list[str]
    guards: list[str]
    graph: str | None  # the last Dynamo graph, line numbers removed
    graph_ops: int | None
    graph_nodes: int | None
    kernels: list[tuple[str, KernelKind]]  # (name, kind) of the generated kernels
    breaks: list[BreakSite]
    errors: list[BreakSite]
    seconds: float | None
    cache: dict[str, int]
    #: What ran (``run --runtime``): calls and own microseconds of its compile ids' code.
    runtime: tuple[int, float] | None = None
    #: Graph breaks as the glance counts them (each event once; ``breaks`` is their places).
    graph_breaks: int = 0

    def evidence(self, last: bool = False) -> str:
        """``log:line`` of the frame's first compile (or its last: a recompile's record)."""
        c = self.compiles[-1 if last else 0]
        return f"{self.log}:{c.first_line}"


def frames_of(
    rank: RankTrace,
    rewrite: Callable[[str], str] | None = None,
    mask: Callable[[str], str] = mask_secrets,
) -> list[FrameFacts]:
    """The frames of a rank in log order, each with its :class:`RunFunction`; what looks
    secret in their reasons, guards and graphs masked by ``mask`` (:mod:`.secrets`)."""
    groups: list[tuple[int | None, int, list[Compile]]] = []
    current: dict[tuple[int | None, int], list[Compile]] = {}
    for c in rank.compiles:
        frame_id = c.id.frame_id
        if c.id.is_unknown or frame_id is None:
            continue
        function_key = (c.id.compiled_autograd_id, frame_id)
        group = current.get(function_key)
        # `[x/0]` again (after torch._dynamo.reset()) is another code object: a new frame
        if group is None or (_is_first(c) and any(_is_first(g) for g in group)):
            group = current[function_key] = []
            groups.append((function_key[0], frame_id, group))
        group.append(c)
    seen: Counter[tuple[str, str]] = Counter()
    out: list[FrameFacts] = []
    for ca, frame_id, compiles in groups:
        file, function, line = _identity(compiles)
        file = _GENERATED_FILE.sub(r"\1", file)
        file = rewrite(file) if rewrite else file
        if ca is not None:
            function = f"compiled_autograd:{function}"
        seen[(file, function)] += 1
        key = RunFunction(file, function, seen[(file, function)])
        label = f"[{'' if ca is None else f'!{ca}/'}{frame_id}/*]"
        if compiles[0].occurrence > 1:
            label += f" #{compiles[0].occurrence}"
        out.append(_masked(_facts(key, label, compiles, line, rewrite, rank), mask))
    return out


def _mask_lines(lines: list[str], mask: Callable[[str], str]) -> list[str]:
    """Lines masked as one text (thousands of guard lines, one pass; masking keeps lines)."""
    out = mask("\n".join(lines)).split("\n") if lines else []
    return out if len(out) == len(lines) else [mask(line) for line in lines]


def _masked(facts: FrameFacts, mask: Callable[[str], str]) -> FrameFacts:
    """The frame's texts from the log as published: what looks secret masked (a guard on
    an environment variable's value, a token passed as an argument)."""
    facts.recompile_reasons = _mask_lines(facts.recompile_reasons, mask)
    facts.guards = _mask_lines(facts.guards, mask)
    facts.graph = mask(facts.graph) if facts.graph is not None else None
    facts.breaks = [replace(b, reason=mask(b.reason)) for b in facts.breaks]
    facts.errors = [replace(e, reason=mask(e.reason)) for e in facts.errors]
    return facts


def _is_first(compile_: Compile) -> bool:
    return compile_.id.frame_compile_id == 0 and compile_.id.attempt == 0


def _identity(compiles: list[Compile]) -> tuple[str, str, int | None]:
    """The frame's file, function and first line: from its metrics where torch logged them,
    else from the innermost stack frame of a compile."""
    for c in compiles:
        for m in c.compilation_metrics:
            name, filename = m.data.get("co_name"), m.data.get("co_filename")
            if isinstance(name, str) and isinstance(filename, str):
                line = m.data.get("co_firstlineno")
                return filename[:1000], base_function(name[:300]), line if _is_int(line) else None
    for c in compiles:
        if c.stack:
            last = c.stack[-1]
            return last.filename[:1000], base_function(last.name[:300]), last.line
    return "", "(unknown)", None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _facts(
    key: RunFunction,
    label: str,
    compiles: list[Compile],
    line: int | None,
    rewrite: Callable[[str], str] | None,
    rank: RankTrace,
) -> FrameFacts:
    """What is compared of one frame: its status, compiles, reasons, guards, last graph,
    kernels, graph breaks and errors, times and cache lookups."""
    log = rank.path
    metrics = [m for c in compiles for m in (*c.metrics, *c.metrics_apart)]
    events = break_events(compiles)
    breaks, errors = _break_sites(events, key, rewrite, log)
    data = _last_metrics(compiles)
    seconds = [s for c in compiles if (s := compile_seconds(c)) is not None]
    return FrameFacts(
        key=key,
        label=label,
        compiles=compiles,
        first_line=line,
        log=log,
        status=str(combined_status(metrics)),
        versions=len({c.id.frame_compile_id for c in compiles}),
        recompiles=sum(is_recompile(rank, c) for c in compiles),
        recompile_reasons=_recompile_reasons(compiles),
        guards=_guards(compiles),
        graph=_last_graph(compiles),
        graph_ops=_count(data.get("graph_op_count")),
        graph_nodes=_count(data.get("graph_node_count")),
        kernels=_kernels(compiles),
        breaks=breaks,
        errors=errors,
        seconds=sum(seconds) if seconds else None,
        graph_breaks=sum(e.category == "graph_break" for e in events),
        cache=cache_totals(compiles),
    )


def _break_sites(
    events: list[BreakEvent],
    key: RunFunction,
    rewrite: Callable[[str], str] | None,
    log: str,
) -> tuple[list[BreakSite], list[BreakSite]]:
    """The frame's distinct graph breaks and compile errors, each with its record; a
    restart is neither and is not compared."""
    breaks: list[BreakSite] = []
    errors: list[BreakSite] = []
    for event in events:
        if event.category == "restart":
            continue
        f = event.failure
        parts = event.message.parts
        site = _site(
            f.reason,
            f.user_location,
            event.compile,
            key,
            rewrite,
            parts[0].registry_id if parts else None,
            f"{log}:{f.line}",
        )
        target = errors if event.category == "error" else breaks
        if site not in target:
            target.append(site)
    return breaks, errors


def _recompile_reasons(compiles: list[Compile]) -> list[str]:
    """Each distinct first line of the frame's recompile reasons, numbers and comments removed."""
    reasons: list[str] = []
    for c in compiles:
        for _, guard in recompile_reason_entries(c):
            text = _no_numbers(GUARD_COMMENT.split(guard[:MAX_REASON_CHARS], maxsplit=1)[0])
            text = text.strip().splitlines()[0] if text.strip() else ""
            if text and text not in reasons:
                reasons.append(text)
    return reasons


def _last_graph(compiles: list[Compile]) -> str | None:
    """The frame's last Dynamo graph, its line numbers removed (None where none was logged)."""
    with_graph = [c for c in compiles if c.artifacts_named(DIFF_ARTIFACT)]
    if not with_graph:
        return None
    artifact = with_graph[-1].artifacts_named(DIFF_ARTIFACT)[-1]
    return _GRAPH_LOCATION.sub(r"\1:N\2", artifact.text()) if artifact.payload else None


def _kernels(compiles: list[Compile]) -> list[tuple[str, KernelKind]]:
    """(name, kind) of each kernel the frame's compiles generated (extern calls aside)."""
    return [
        (k.name, k.kind)
        for c in compiles
        for a in c.artifacts
        for k in a.kernels
        if k.kind != "extern"
    ]


def _site(
    reason: Any,
    user_location: str | None,
    compile_: Compile,
    key: RunFunction,
    rewrite: Callable[[str], str] | None,
    registry_id: str | None = None,
    evidence: str | None = None,
) -> BreakSite:
    """One graph break or error: its headline, numbers removed, and where in the user's
    code (the frame's file and function where torch logged no user location)."""
    text = reason[:MAX_REASON_CHARS] if isinstance(reason, str) else ""
    headline = _no_numbers(reason_headline(text))[:500]
    file, function = key.file, key.function
    if user_location:
        raw_file = _LOCATION_LINE.sub("", user_location[:1000])
        file = rewrite(raw_file) if rewrite else raw_file
        # the innermost frame of the user's file in torch's "User code traceback"
        full = reason[:MAX_TRACEBACK_CHARS] if isinstance(reason, str) else ""
        user_frames = [fn for f, fn in _TRACEBACK_FRAME.findall(full) if f == raw_file]
        if user_frames:
            function = base_function(user_frames[-1])
    return BreakSite(headline, file, function, registry_id, evidence)


def _last_metrics(compiles: list[Compile]) -> dict[str, Any]:
    """The last compilation metrics of the frame (its last version's figures)."""
    for c in reversed(compiles):
        for m in reversed(c.compilation_metrics):
            if isinstance(m.data, dict):
                return m.data
    return {}


def _count(value: Any) -> int | None:
    return value if _is_int(value) and 0 <= value < 10**12 else None


def _guards(compiles: list[Compile]) -> list[str]:
    """Guard lines of the frame's compiles: tree marks, comments, ids and lines removed."""
    out: list[str] = []
    seen: set[str] = set()
    for c in compiles:
        for a in c.artifacts_named("dynamo_cpp_guards_str"):
            for raw in a.text().splitlines()[:MAX_GUARD_LINES]:
                line = _GUARD_TREE.sub("", raw[:MAX_REASON_CHARS])
                line = GUARD_COMMENT.split(line, maxsplit=1)[0].strip()
                if not line or line in _GUARD_NOISE or line.startswith("Guard latency"):
                    continue
                line = _no_numbers(line)
                if line not in seen:
                    seen.add(line)
                    out.append(line)
    return out


def frame_runtime(compiles: Sequence[Compile], profile: RuntimeProfile) -> tuple[int, float]:
    """Calls and own microseconds of the compiled code of ``compiles`` (one frame's)."""
    keys = {
        region_key(c.id.frame_id, c.id.frame_compile_id, c.id.compiled_autograd_id)
        for c in compiles
        if c.id.frame_id is not None and c.id.frame_compile_id is not None
    }
    regions = [profile.regions[k] for k in keys if k in profile.regions]
    return sum(r.calls for r in regions), sum(r.own_us for r in regions)
