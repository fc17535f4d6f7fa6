"""What changed between two runs of one program: the comparison behind ``torchtrace-diff``.

Compile ids and line numbers shift whenever a program is edited or a graph break comes or
goes, so nothing is matched by them.  A *frame* (every compile of one code object, ``[x/*]``)
is known by what it is: its file (after the caller's path rewriting), its function name
(a resume function's ``_at_<line>`` dropped) and which occurrence of that function in the
run it is.  Graph breaks are matched by reason (numbers that are lines or addresses
removed) and user location (file and function).  Ranks are paired by rank number.

Pure functions of the model, no Sphinx: :func:`diff_traces` builds a :class:`TraceDiff`,
:func:`regressions` judges it against thresholds, :meth:`TraceDiff.to_json` serialises it.
Every string here comes from a log and stays plain data; all work is bounded.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from ..analyses.caches import cache_totals
from ..analyses.compare import DIFF_ARTIFACT, is_recompile, recompile_reason_entries
from ..analyses.compile_time import PHASE_WORDS
from ..analyses.failures import reason_headline
from ..analyses.graph_breaks import break_events
from ..analyses.guards import GUARD_COMMENT
from ..analyses.naming import rank_number
from ..analyses.phases import TIME_PHASES, compile_seconds, time_totals
from ..analyses.rank_digest import number_ranges
from ..compile_status import combined_status
from ..digests import class_key
from ..kernels import KernelKind
from ..model import Compile, RankTrace, Trace
from ..runtime import RuntimeProfile, rank_profiles, region_key
from ..secrets import mask_secrets
from .comparability import RunFacts, differences, run_facts
from .function_times import FunctionTimes, function_times
from .vllm_change import VllmChange, vllm_change

#: What got worse; each is the warning subtype ``regression_<kind>``.
RegressionKind = Literal["error", "graph_break", "recompile", "compile_time", "kernels", "runtime"]
#: Regression kinds, in report order.
REGRESSION_KINDS: tuple[RegressionKind, ...] = get_args(RegressionKind)
#: Kinds set by a ratio of times (the new run's over the baseline's), not on or off.
RATIO_KINDS: tuple[RegressionKind, ...] = ("compile_time", "runtime")
#: What counts as a regression unless configured: timings are off (they are noisy).
DEFAULT_REGRESSIONS: dict[str, bool | float | None] = {
    "error": True,
    "graph_break": True,
    "recompile": True,
    "compile_time": None,
    "kernels": False,
    "runtime": None,
}
#: The threshold a ratio kind gets when named without one (``--fail-on compile_time``).
DEFAULT_COMPILE_TIME_RATIO = 1.25

#: Bounds: text looked at per reason / guard line, guard lines per frame, graph lines diffed.
MAX_REASON_CHARS = 2000
MAX_TRACEBACK_CHARS = 50_000
MAX_GUARD_LINES = 5000
MAX_GRAPH_LINES = 4000
MAX_DIFF_LINES = 400
MAX_LISTED = 200  # kernel names per frame in JSON
MAX_CANDIDATES = 20  # other frames an ambiguous pairing names

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


# -- what one run holds ---------------------------------------------------------------------


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
        return (self.registry_id or self.reason, self.file, self.function)

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
    log = rank.path
    metrics = [m for c in compiles for m in c.metrics]
    breaks: list[BreakSite] = []
    errors: list[BreakSite] = []
    events = break_events(compiles)
    for event in events:
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
        if event.category == "restart":  # no graph break, no error: not compared
            continue
        target = errors if event.category == "error" else breaks
        if site not in target:
            target.append(site)
    reasons: list[str] = []
    for c in compiles:
        for _, guard in recompile_reason_entries(c):
            text = _no_numbers(GUARD_COMMENT.split(guard[:MAX_REASON_CHARS], maxsplit=1)[0])
            text = text.strip().splitlines()[0] if text.strip() else ""
            if text and text not in reasons:
                reasons.append(text)
    with_graph = [c for c in compiles if c.artifacts_named(DIFF_ARTIFACT)]
    last_graph = with_graph[-1] if with_graph else None
    graph = None
    if last_graph is not None:
        artifact = last_graph.artifacts_named(DIFF_ARTIFACT)[-1]
        graph = _GRAPH_LOCATION.sub(r"\1:N\2", artifact.text()) if artifact.payload else None
    data = _last_metrics(compiles)
    kernels: list[tuple[str, KernelKind]] = [
        (k.name, k.kind)
        for c in compiles
        for a in c.artifacts
        for k in a.kernels
        if k.kind != "extern"
    ]
    seconds = [s for c in compiles if (s := compile_seconds(c)) is not None]
    versions = len({c.id.frame_compile_id for c in compiles})
    return FrameFacts(
        key=key,
        label=label,
        compiles=compiles,
        first_line=line,
        log=log,
        status=str(combined_status(metrics)),
        versions=versions,
        recompiles=sum(is_recompile(rank, c) for c in compiles),
        recompile_reasons=reasons,
        guards=_guards(compiles),
        graph=graph,
        graph_ops=_count(data.get("graph_op_count")),
        graph_nodes=_count(data.get("graph_node_count")),
        kernels=kernels,
        breaks=breaks,
        errors=errors,
        seconds=sum(seconds) if seconds else None,
        graph_breaks=sum(e.category == "graph_break" for e in events),
        cache=cache_totals(compiles),
    )


def _site(
    reason: Any,
    user_location: str | None,
    compile_: Compile,
    key: RunFunction,
    rewrite: Callable[[str], str] | None,
    registry_id: str | None = None,
    evidence: str | None = None,
) -> BreakSite:
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


# -- the comparison -------------------------------------------------------------------------


@dataclass
class Change:
    """A figure in both runs (None where a run has none)."""

    baseline: Any
    new: Any

    @property
    def changed(self) -> bool:
        return bool(self.baseline != self.new)


@dataclass
class FrameDiff:
    """One frame of either run, and what changed in it; ``baseline`` or ``new`` None if absent."""

    key: RunFunction
    baseline: FrameFacts | None
    new: FrameFacts | None
    status: Change
    versions: Change
    recompile_reasons_new: list[str]
    guards_added: list[str]
    guards_removed: list[str]
    graph_ops: Change
    graph_nodes: Change
    graph_diff: str  # unified diff of the Dynamo graphs ("" when the same or not in both)
    kernel_count: Change
    kernels_added: list[str]
    kernels_removed: list[str]
    kernel_kinds: Change  # {kind: count}
    seconds: Change  # noisy
    cache: Change
    #: How sure the pairing is: ``matched`` (one frame of this file and function on each
    #: side), ``ambiguous`` (several: paired by their order, ``candidates`` the others),
    #: ``new`` or ``gone``.
    match: str = "matched"
    candidates: list[str] = field(default_factory=list)
    #: (calls, own µs) on each side where a runtime profile was kept (noisy, not a change).
    runtime: Change = field(default_factory=lambda: Change(None, None))

    @property
    def runtime_ratio(self) -> float | None:
        """The new run's time per call over the baseline's, where both ran it: not a
        finite number where the times cannot be compared (a baseline of no time, a time
        past any number; :func:`uncompared` names it)."""
        old, new = self.runtime.baseline, self.runtime.new
        if not old or not new or not old[0] or not new[0] or old[1] == new[1] == 0:
            return None  # not run on a side, or no time of its own on either
        return _ratio(new[1] / new[0], old[1] / old[0])

    @property
    def is_new(self) -> bool:
        return self.baseline is None

    @property
    def is_gone(self) -> bool:
        return self.new is None

    @property
    def cache_only(self) -> bool:
        """In both runs, and only its cache lookups differ (a warm cache: not about the code)."""
        return (
            self.cache.changed
            and not self.is_new
            and not self.is_gone
            and not any(
                c.changed
                for c in (
                    self.status,
                    self.versions,
                    self.graph_ops,
                    self.graph_nodes,
                    self.kernel_count,
                    self.kernel_kinds,
                )
            )
            and not (
                self.recompile_reasons_new
                or self.guards_added
                or self.guards_removed
                or self.graph_diff
                or self.kernels_added
                or self.kernels_removed
            )
        )

    @property
    def changed(self) -> bool:
        """Anything but compile time differs (time is noise unless a threshold says otherwise)."""
        return (
            self.is_new
            or self.is_gone
            or any(
                c.changed
                for c in (
                    self.status,
                    self.versions,
                    self.graph_ops,
                    self.graph_nodes,
                    self.kernel_count,
                    self.kernel_kinds,
                    self.cache,
                )
            )
            or bool(self.recompile_reasons_new or self.guards_added or self.guards_removed)
            or bool(self.graph_diff or self.kernels_added or self.kernels_removed)
        )


@dataclass
class PhaseChange:
    """Seconds of one compile-time phase, summed over a rank's compiles (noisy)."""

    phase: str  # a key of TIME_PHASES; the JSON says it by :data:`JSON_PHASE_NAMES`
    baseline: float | None
    new: float | None

    @property
    def ratio(self) -> float | None:
        """New over baseline seconds where both runs have them, 0 s in both aside: not a
        finite number where they cannot be compared (:func:`uncompared` names it)."""
        if self.baseline is None or self.new is None or self.baseline == self.new == 0:
            return None
        return _ratio(self.new, self.baseline)


def _ratio(new: float, old: float) -> float:
    """``new / old``; NaN or infinite where it is no number (0 or a NaN in the baseline,
    a time past any float): never a ratio a gate could read as small."""
    try:
        return float(new) / float(old)
    except ZeroDivisionError:
        return math.inf if new > 0 else math.nan
    except (OverflowError, TypeError, ValueError):
        return math.nan


@dataclass
class RankDiff:
    """The frames of one rank number in both runs."""

    rank: int
    frames: list[FrameDiff]
    breaks_new: list[BreakSite]
    breaks_fixed: list[BreakSite]
    errors_new: list[BreakSite]
    errors_fixed: list[BreakSite]
    times: list[PhaseChange]
    cache: Change  # {hit/miss/bypass: lookups}
    #: Each function's compile seconds by phase in both runs, the most changed first.
    function_times: list[FunctionTimes] = field(default_factory=list)
    #: vLLM's own figures in each run, where either logged vLLM's records.
    vllm: VllmChange | None = None
    #: The other ranks this comparison stands for: in each run they logged what this rank
    #: did (a class of alike ranks, rank numbers, metrics and times aside).
    alike: list[int] = field(default_factory=list)

    @property
    def frames_new(self) -> list[FrameDiff]:
        return [f for f in self.frames if f.is_new]

    @property
    def frames_gone(self) -> list[FrameDiff]:
        return [f for f in self.frames if f.is_gone]

    @property
    def changed_frames(self) -> list[FrameDiff]:
        return [f for f in self.frames if f.changed]

    @property
    def total_seconds(self) -> PhaseChange | None:
        return next((t for t in self.times if t.phase == TIME_PHASES[0].key), None)

    @property
    def changed(self) -> bool:
        return bool(
            self.changed_frames
            or self.breaks_new
            or self.breaks_fixed
            or self.errors_new
            or self.errors_fixed
            or self.cache.changed
        )


@dataclass
class TraceDiff:
    """Two runs compared: per paired rank a :class:`RankDiff`, and the ranks of one run only.

    ``setup`` says what differs in how the runs were made (:mod:`.comparability`);
    ``nothing_compared`` why no frame could be compared (no rank or no frame in common),
    ``unread`` what of the inputs the comparison did not read: a CI job must not pass on
    either.  A rank only the new run has is compared with nothing (``new_only``): all it
    logged is new.
    """

    ranks: list[RankDiff]
    ranks_only_baseline: list[int] = field(default_factory=list)
    ranks_only_new: list[int] = field(default_factory=list)
    #: Each rank only the new run has (unless ``--ranks`` left it out), compared with an
    #: empty log: its errors and graph breaks are new ones.
    new_only: list[RankDiff] = field(default_factory=list)
    #: What the comparison did not read, in the tool's words: ranks of the baseline the new
    #: run lacks, logs of a folder left out, records that did not parse.
    unread: list[str] = field(default_factory=list)
    baseline_facts: RunFacts | None = None
    new_facts: RunFacts | None = None
    setup: list[str] = field(default_factory=list)
    nothing_compared: str | None = None

    @property
    def frames_matched(self) -> int:
        return sum(1 for r in self.ranks for f in r.frames if f.baseline and f.new)

    @property
    def unchanged(self) -> bool:
        """Nothing but compile time differs: the page and the command say so in one line."""
        return not (
            self.ranks_only_baseline
            or self.ranks_only_new
            or self.unread
            or any(r.changed for r in self.ranks)
        )

    def report_lines(self) -> list[str]:
        """The report of what changed, as plain lines (what ``sphinx-torchtrace diff`` prints)."""
        return report_lines(self)

    def to_json(self) -> dict[str, Any]:
        """The comparison as JSON-able data (lists, dicts, strings, numbers, None)."""
        return diff_json(self)


def diff_traces(
    baseline: Trace,
    new: Trace,
    *,
    rewrite: Callable[[str], str] | None = None,
    pairs: Sequence[tuple[int, int]] | None = None,
    renames: Mapping[str, str] | None = None,
    mask: Callable[[str], str] = mask_secrets,
) -> TraceDiff:
    """Compare two runs.  ``rewrite`` maps each run's file names (path rewriting) before
    matching, so runs from two checkouts or machines still match; ``pairs`` says which
    baseline rank is compared with which new one (by default: equal numbers); ``renames``
    maps baseline function names to new ones (a function renamed between the runs);
    ``mask`` masks what looks secret in the texts compared (:func:`frames_of`)."""
    old_ranks = {rank_number(baseline, r): r for r in baseline.ranks}
    new_ranks = {rank_number(new, r): r for r in new.ranks}
    chosen = pairs is not None  # ranks left out of chosen pairs are the user's choice
    if pairs is None:
        pairs = [(n, n) for n in sorted(set(old_ranks) & set(new_ranks))]
    pairs = [(a, b) for a, b in pairs if a in old_ranks and b in new_ranks]
    old_facts, new_facts = run_facts(baseline), run_facts(new)
    compared: list[RankDiff] = []
    for (a, b), others in _by_classes(pairs, old_ranks, new_ranks).items():
        ranks_diff = diff_ranks(
            old_ranks[a], new_ranks[b], rank=b, rewrite=rewrite, renames=renames, mask=mask
        )
        ranks_diff.alike = others
        _attach_runtime(ranks_diff, baseline, old_ranks[a], new, new_ranks[b])
        compared.append(ranks_diff)
    result = TraceDiff(
        ranks=compared,
        ranks_only_baseline=sorted(set(old_ranks) - {a for a, _ in pairs}),
        ranks_only_new=sorted(set(new_ranks) - {b for _, b in pairs}),
        baseline_facts=old_facts,
        new_facts=new_facts,
        setup=differences(old_facts, new_facts),
    )
    result.nothing_compared = _nothing_compared(result, old_ranks, new_ranks)
    if not chosen and result.ranks:
        result.new_only = [
            diff_ranks(
                RankTrace(path="", rank=b, size=0), new_ranks[b], rank=b, rewrite=rewrite, mask=mask
            )
            for b in result.ranks_only_new
        ]
        result.unread += [
            f"rank {a} of the baseline is not in the new run (no log of it was found)"
            for a in result.ranks_only_baseline
        ]
    result.unread += unread(baseline, "baseline") + unread(new, "new run")
    return result


def _attach_runtime(
    diff: RankDiff, baseline: Trace, old: RankTrace, new: Trace, now: RankTrace
) -> None:
    """Each frame's calls and own time on each side that kept a runtime profile."""
    old_profile = rank_profiles(baseline.runtime, baseline.ranks, old)[0]
    new_profile = rank_profiles(new.runtime, new.ranks, now)[0]
    if old_profile is None and new_profile is None:
        return
    for f in diff.frames:
        for facts, profile in ((f.baseline, old_profile), (f.new, new_profile)):
            if facts is not None and profile is not None:
                facts.runtime = frame_runtime(facts.compiles, profile)
        f.runtime = Change(
            f.baseline.runtime if f.baseline else None, f.new.runtime if f.new else None
        )


def frame_runtime(compiles: Sequence[Compile], profile: RuntimeProfile) -> tuple[int, float]:
    """Calls and own microseconds of the compiled code of ``compiles`` (one frame's)."""
    keys = {
        region_key(c.id.frame_id, c.id.frame_compile_id, c.id.compiled_autograd_id)
        for c in compiles
        if c.id.frame_id is not None and c.id.frame_compile_id is not None
    }
    regions = [profile.regions[k] for k in keys if k in profile.regions]
    return sum(r.calls for r in regions), sum(r.own_us for r in regions)


def _per_call_text(change: Change) -> str:
    def one(side: tuple[int, float] | None) -> str:
        if not side or not side[0]:
            return "not run"
        return f"{side[1] / side[0] / 1000:.3f} ms"

    return f"{one(change.baseline)} -> {one(change.new)}"


#: Diagnostics of records (or bytes) a log holds that the reader could not use: a
#: comparison that did not read them cannot vouch for them.
UNREAD_SUBTYPES = ("json", "truncated", "payload", "nesting", "limit", "prefix", "read")


def unread(trace: Trace, side: str) -> list[str]:
    """What of ``trace`` was not read, in the tool's words (file names as data, escaped
    where printed): logs of its folder left out, entries skipped, records that did not
    parse (counted, the first located)."""
    out: list[str] = []
    if trace.not_shown:
        names = ", ".join(trace.not_shown[:3]) + (" …" if len(trace.not_shown) > 3 else "")
        out.append(
            f"{side}: {len(trace.not_shown)} other log(s) of its folder not read "
            f"({names}); name the log to compare it"
        )
    for d in trace.diagnostics:
        if d.subtype in ("mixed_runs", "skipped"):
            out.append(f"{side}: {d.path}: {d.message}")
    bad = [d for r in trace.ranks for d in r.diagnostics if d.subtype in UNREAD_SUBTYPES]
    if bad:
        first = bad[0]
        out.append(
            f"{side}: {len(bad)} record(s) or line(s) not read "
            f"(first: {first.path}:{first.line}, {first.message})"
        )
    return out


def _by_classes(
    pairs: Sequence[tuple[int, int]],
    old_ranks: Mapping[int, RankTrace],
    new_ranks: Mapping[int, RankTrace],
) -> dict[tuple[int, int], list[int]]:
    """The pairs to compare, each with the new rank numbers of the other pairs it stands
    for: pairs whose ranks are of one class in the baseline and of one class in the new
    run compare alike, so a thousand-rank job is compared once per pair of classes."""
    if len(pairs) < 2:
        return {pair: [] for pair in pairs}
    old_keys = {a: class_key(old_ranks[a]) for a in {a for a, _ in pairs}}
    new_keys = {b: class_key(new_ranks[b]) for b in {b for _, b in pairs}}
    firsts: dict[tuple[bytes, bytes], tuple[int, int]] = {}
    out: dict[tuple[int, int], list[int]] = {}
    for a, b in pairs:
        first = firsts.setdefault((old_keys[a], new_keys[b]), (a, b))
        if first == (a, b):
            out[first] = []
        else:
            out[first].append(b)
    return out


def _nothing_compared(
    diff: TraceDiff, old_ranks: Mapping[int, RankTrace], new_ranks: Mapping[int, RankTrace]
) -> str | None:
    """Why the comparison compared nothing, or None: no rank in common, or frames on both
    sides and not one of them matched (two different programs)."""
    if not diff.ranks:
        return (
            f"the runs share no rank (baseline ranks {_numbers(old_ranks)}, new ranks "
            f"{_numbers(new_ranks)}): pair them with --ranks BASELINE:NEW"
        )
    both = any(f.baseline for r in diff.ranks for f in r.frames) and any(
        f.new for r in diff.ranks for f in r.frames
    )
    if both and diff.frames_matched == 0:
        return (
            "no frame of the baseline matches one of the new run (same file and "
            "function): two different programs? (--map renames functions)"
        )
    return None


def _numbers(ranks: Mapping[int, RankTrace]) -> str:
    return ", ".join(map(str, sorted(ranks))) or "none"


def diff_ranks(
    baseline: RankTrace,
    new: RankTrace,
    *,
    rank: int = 0,
    rewrite: Callable[[str], str] | None = None,
    renames: Mapping[str, str] | None = None,
    mask: Callable[[str], str] = mask_secrets,
) -> RankDiff:
    """Compare the frames of two logs of one rank (see :func:`diff_traces`)."""
    old_list = _renamed(frames_of(baseline, rewrite, mask), renames or {})
    new_list = frames_of(new, rewrite, mask)
    old_frames = {f.key: f for f in old_list}
    new_frames = {f.key: f for f in new_list}
    keys = list(new_frames) + [k for k in old_frames if k not in new_frames]
    frames = [_frame_diff(k, old_frames.get(k), new_frames.get(k)) for k in keys]
    _judge_matches(frames, old_list, new_list)
    old_breaks = _distinct(f.breaks for f in old_frames.values())
    new_breaks = _distinct(f.breaks for f in new_frames.values())
    old_errors = _distinct(f.errors for f in old_frames.values())
    new_errors = _distinct(f.errors for f in new_frames.values())
    old_times = {t.phase: t.seconds for t in time_totals(baseline.compiles)}
    new_times = {t.phase: t.seconds for t in time_totals(new.compiles)}
    times = [
        PhaseChange(phase.key, old_times.get(phase.key), new_times.get(phase.key))
        for phase in TIME_PHASES
        if phase.key in old_times or phase.key in new_times
    ]
    return RankDiff(
        rank=rank,
        frames=frames,
        breaks_new=[b for b in new_breaks if b not in old_breaks],
        breaks_fixed=[b for b in old_breaks if b not in new_breaks],
        errors_new=[e for e in new_errors if e not in old_errors],
        errors_fixed=[e for e in old_errors if e not in new_errors],
        times=times,
        cache=Change(cache_totals(baseline.compiles), cache_totals(new.compiles)),
        function_times=function_times(baseline, new),
        vllm=vllm_change(baseline, new),
    )


def _renamed(frames: list[FrameFacts], renames: Mapping[str, str]) -> list[FrameFacts]:
    """Baseline frames with their functions renamed as the user's map says (occurrences
    counted again under the new names)."""
    if not renames:
        return frames
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for f in frames:
        function = renames.get(f.key.function, f.key.function)
        seen[(f.key.file, function)] += 1
        out.append(replace(f, key=RunFunction(f.key.file, function, seen[(f.key.file, function)])))
    return out


def _judge_matches(frames: list[FrameDiff], old: list[FrameFacts], new: list[FrameFacts]) -> None:
    """Say how sure each pairing is: several frames of one file and function on a side are
    paired by their order, which an edit can upset (``ambiguous``, with the others)."""
    labels: dict[tuple[str, str], tuple[list[str], list[str]]] = {}
    for side, facts in ((0, old), (1, new)):
        for one in facts:
            labels.setdefault((one.key.file, one.key.function), ([], []))[side].append(one.label)
    for f in frames:
        if f.baseline is None:
            f.match = "new"
        elif f.new is None:
            f.match = "gone"
        else:
            old_labels, new_labels = labels[(f.key.file, f.key.function)]
            if len(old_labels) > 1 or len(new_labels) > 1:
                f.match = "ambiguous"
                f.candidates = [x for x in new_labels if x != f.new.label][:MAX_CANDIDATES]


def _distinct(lists: Any) -> list[BreakSite]:
    out: list[BreakSite] = []
    seen: set[BreakSite] = set()
    for sites in lists:
        for s in sites:
            if s not in seen:
                seen.add(s)
                out.append(s)
    return out


def _frame_diff(key: RunFunction, old: FrameFacts | None, new: FrameFacts | None) -> FrameDiff:
    def pick(get: Callable[[FrameFacts], Any]) -> Change:
        return Change(get(old) if old else None, get(new) if new else None)

    both = old is not None and new is not None
    old_guards = set(old.guards) if old else set()
    new_guards = set(new.guards) if new else set()
    old_kernels = Counter(n for n, _ in old.kernels) if old else Counter()
    new_kernels = Counter(n for n, _ in new.kernels) if new else Counter()
    return FrameDiff(
        key=key,
        baseline=old,
        new=new,
        status=pick(lambda f: f.status),
        versions=pick(lambda f: f.versions),
        recompile_reasons_new=[
            r
            for r in (new.recompile_reasons if new else [])
            if r not in (old.recompile_reasons if old else [])
        ],
        guards_added=[g for g in new.guards if g not in old_guards] if old and new else [],
        guards_removed=[g for g in old.guards if g not in new_guards] if old and new else [],
        graph_ops=pick(lambda f: f.graph_ops),
        graph_nodes=pick(lambda f: f.graph_nodes),
        graph_diff=_graph_diff(old, new) if old and new else "",
        kernel_count=pick(lambda f: len(f.kernels)),
        kernels_added=sorted((new_kernels - old_kernels).elements()) if both else [],
        kernels_removed=sorted((old_kernels - new_kernels).elements()) if both else [],
        kernel_kinds=pick(lambda f: dict(Counter(k for _, k in f.kernels))),
        seconds=pick(lambda f: f.seconds),
        cache=pick(lambda f: f.cache),
    )


def _graph_diff(old: FrameFacts, new: FrameFacts) -> str:
    """Unified diff of the two Dynamo graphs (line numbers removed); bounded in size."""
    if old.graph is None or new.graph is None or old.graph == new.graph:
        return ""
    a = [ln.rstrip() for ln in old.graph.splitlines()]
    b = [ln.rstrip() for ln in new.graph.splitlines()]
    if a == b:
        return ""
    if len(a) > MAX_GRAPH_LINES or len(b) > MAX_GRAPH_LINES:
        return f"(graphs of {len(a)} and {len(b)} lines differ; too long to diff)"
    lines = list(
        difflib.unified_diff(a, b, f"baseline {old.label}", f"new {new.label}", n=2, lineterm="")
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more lines)"]
    return "\n".join(lines)


# -- regressions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Regression:
    """One thing that got worse: kind (warning subtype ``regression_<kind>``), where, what."""

    kind: RegressionKind
    rank: int
    frame: str | None  # str(RunFunction), None for a whole-run regression
    message: str
    #: The records it rests on, ``log:line``: ``{"baseline": ..., "new": ...}``.
    evidence: tuple[tuple[str, str], ...] = ()

    @property
    def subtype(self) -> str:
        return f"regression_{self.kind}"


def validate_regressions(value: object) -> dict[str, bool | float | None]:
    """The regression settings a config dict (``torchtrace_regressions``) means, defaults filled.

    Raises ValueError with a sentence naming the bad key or value.
    """
    if not isinstance(value, Mapping):
        raise ValueError(f"must be a dict with keys among {', '.join(REGRESSION_KINDS)}")
    out = dict(DEFAULT_REGRESSIONS)
    for key, setting in value.items():
        if key not in REGRESSION_KINDS:
            raise ValueError(
                f"unknown regression kind {key!r}; known: {', '.join(REGRESSION_KINDS)}"
            )
        if key in RATIO_KINDS:
            if setting is None or setting is False:
                out[key] = None
            elif setting is True:
                out[key] = DEFAULT_COMPILE_TIME_RATIO
            elif isinstance(setting, (int, float)) and math.isfinite(setting) and setting >= 1:
                out[key] = float(setting)
            else:
                raise ValueError(
                    f"{key} takes None or a ratio >= 1 (1.25 = 25% slower), not {setting!r}"
                )
        elif isinstance(setting, bool):
            out[key] = setting
        else:
            raise ValueError(f"{key} takes True or False, not {setting!r}")
    return out


def parse_fail_on(text: str) -> dict[str, bool | float | None]:
    """``"error,graph_break,compile_time:1.25"`` -> settings with only those kinds on.

    A bare ``compile_time`` means a ratio of :data:`DEFAULT_COMPILE_TIME_RATIO`.  Raises
    ValueError for an unknown kind or a bad ratio.
    """
    chosen: dict[str, object] = dict.fromkeys(REGRESSION_KINDS, False)
    for ratio in RATIO_KINDS:
        chosen[ratio] = None
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        kind, sep, threshold = part.partition(":")
        kind = kind.strip()
        if kind not in REGRESSION_KINDS:
            raise ValueError(
                f"unknown regression kind {kind!r}; known: {', '.join(REGRESSION_KINDS)}"
            )
        if sep and kind not in RATIO_KINDS:
            raise ValueError(f"{kind} takes no threshold")
        if kind in RATIO_KINDS:
            try:
                chosen[kind] = float(threshold) if sep else DEFAULT_COMPILE_TIME_RATIO
            except ValueError:
                raise ValueError(f"{kind}:{threshold} is not a number") from None
        else:
            chosen[kind] = True
    return validate_regressions(chosen)


def regressions(
    diff: TraceDiff, thresholds: Mapping[str, bool | float | None] | None = None
) -> list[Regression]:
    """What got worse, for the kinds ``thresholds`` turns on.

    ``thresholds`` is a (partial) settings dict as :func:`validate_regressions` takes it;
    None or missing keys mean :data:`DEFAULT_REGRESSIONS`.
    """
    settings = validate_regressions(thresholds if thresholds is not None else {})
    out: list[Regression] = []
    if diff.nothing_compared:  # two programs: nothing of one is a regression of the other
        return out
    for r in [*diff.ranks, *diff.new_only]:
        only = (
            f" (rank {r.rank} is only in the new run)" if any(r is n for n in diff.new_only) else ""
        )
        out += _event_regressions(r, settings, only)
        out += _frame_regressions(r, settings)
        out += _runtime_regressions(r, settings["runtime"])
        out += _compile_time_regressions(r, settings["compile_time"])
    order = {k: i for i, k in enumerate(REGRESSION_KINDS)}
    return sorted(out, key=lambda g: (order[g.kind], g.rank))


def _event_regressions(
    r: RankDiff, settings: Mapping[str, bool | float | None], only: str
) -> list[Regression]:
    """The rank's new compile errors and new graph breaks, where those kinds are on."""
    out: list[Regression] = []
    if settings["error"]:
        out += [
            Regression("error", r.rank, None, f"new compile error: {e}{only}", _new(e.evidence))
            for e in r.errors_new
        ]
    if settings["graph_break"]:
        out += [
            Regression("graph_break", r.rank, None, f"new graph break: {b}{only}", _new(b.evidence))
            for b in r.breaks_new
        ]
    return out


def _frame_regressions(
    r: RankDiff, settings: Mapping[str, bool | float | None]
) -> list[Regression]:
    """Frame by frame: compiled more often (or for a new reason), more kernels."""
    out: list[Regression] = []
    for f in r.frames:
        if settings["recompile"] and f.new is not None:
            before = f.baseline.versions if f.baseline else 1
            if f.new.versions > before or (f.baseline and f.recompile_reasons_new):
                why = "; ".join(f.recompile_reasons_new[:2]) or "more versions"
                if len(f.recompile_reasons_new) > 2:
                    why += f" (+{len(f.recompile_reasons_new) - 2} more)"
                was = f"was {before}" if f.baseline else "a new frame"
                out.append(
                    Regression(
                        "recompile",
                        r.rank,
                        str(f.key),
                        f"{f.key}: compiled {f.new.versions} times ({was}): {why}",
                        _frame_evidence(f, last=True),
                    )
                )
        if settings["kernels"] and f.baseline and f.new:
            old, new = len(f.baseline.kernels), len(f.new.kernels)
            if new > old:
                out.append(
                    Regression(
                        "kernels",
                        r.rank,
                        str(f.key),
                        f"{f.key}: {new} kernels (was {old})",
                        _frame_evidence(f),
                    )
                )
    return out


def _runtime_regressions(r: RankDiff, runtime_limit: bool | float | None) -> list[Regression]:
    """Frames whose time per call grew past the ratio (none where the ratio is off)."""
    out: list[Regression] = []
    if isinstance(runtime_limit, float):
        for f in r.frames:
            ratio = f.runtime_ratio
            if ratio is not None and math.isfinite(ratio) and ratio > runtime_limit:
                out.append(
                    Regression(
                        "runtime",
                        r.rank,
                        str(f.key),
                        f"{f.key}: {_per_call_text(f.runtime)} per call "
                        f"(x{ratio:.2f}, threshold x{runtime_limit:g})",
                    )
                )
    return out


def _compile_time_regressions(r: RankDiff, ratio_limit: bool | float | None) -> list[Regression]:
    """The rank's whole compile time, where it grew past the ratio."""
    total = r.total_seconds
    if isinstance(ratio_limit, float) and total is not None and total.ratio is not None:
        if math.isfinite(total.ratio) and total.ratio > ratio_limit:
            return [
                Regression(
                    "compile_time",
                    r.rank,
                    None,
                    f"compile time {total.baseline:.2f} s -> {total.new:.2f} s "
                    f"(x{total.ratio:.2f}, threshold x{ratio_limit:g})",
                )
            ]
    return []


def uncompared(
    diff: TraceDiff,
    thresholds: Mapping[str, bool | float | None] | None = None,
    baseline: Trace | None = None,
    new: Trace | None = None,
) -> list[str]:
    """What a gate of ``thresholds`` could not compare, a line each: a ratio of the kinds
    it turns on that is not a finite number (NaN, infinite: a time of 0 or past any
    number), and, with ``runtime`` on, each runtime profile of ``baseline`` or ``new``
    that was not read or not shown (a gate never passes on a value it could not read).
    ``sphinx-torchtrace diff`` adds them to :attr:`TraceDiff.unread`: it exits 2 naming
    them, as for records it did not read."""
    settings = validate_regressions(thresholds if thresholds is not None else {})
    out: list[str] = []
    if diff.nothing_compared:
        return out
    for r in [*diff.ranks, *diff.new_only]:
        if isinstance(settings["runtime"], float):
            for f in r.frames:
                ratio = f.runtime_ratio
                if ratio is not None and not math.isfinite(ratio):
                    out.append(
                        f"rank {r.rank}: {f.key}: runtime per call {_per_call_text(f.runtime)} "
                        f"cannot be compared ({_no_ratio(ratio)})"
                    )
        total = r.total_seconds
        if isinstance(settings["compile_time"], float) and total is not None:
            if total.ratio is not None and not math.isfinite(total.ratio):
                out.append(
                    f"rank {r.rank}: compile time {_seconds_text(total.baseline)} -> "
                    f"{_seconds_text(total.new)} cannot be compared ({_no_ratio(total.ratio)})"
                )
    if isinstance(settings["runtime"], float):
        out += _runtime_not_kept(diff)
        for side, trace in (("baseline", baseline), ("new run", new)):
            if trace is not None:
                out += [
                    f"{side}: {d.path}: {d.message}"
                    for d in trace.diagnostics
                    if d.subtype == "runtime"
                ]
    return out


def _no_ratio(ratio: float) -> str:
    """Why a ratio is none, in words (a page or console line never says inf or nan)."""
    return "the ratio is past any number" if ratio == math.inf else "the ratio is no number"


def _runtime_not_kept(diff: TraceDiff) -> list[str]:
    """Each compared rank whose runtime a run did not keep: the gate compared nothing."""
    out = []
    for r in diff.ranks:
        kept = (
            any(f.runtime.baseline is not None for f in r.frames),
            any(f.runtime.new is not None for f in r.frames),
        )
        missing = [n for n, k in zip(("the baseline", "the new run"), kept, strict=True) if not k]
        if r.frames and missing:
            out.append(
                f"rank {r.rank}: runtime not compared: {' and '.join(missing)} kept no runtime "
                "profile of this rank (run --runtime)"
            )
    return out


def _new(evidence: str | None) -> tuple[tuple[str, str], ...]:
    return (("new", evidence),) if evidence else ()


def _frame_evidence(f: FrameDiff, last: bool = False) -> tuple[tuple[str, str], ...]:
    """The frame's records on each side that has it (its last compile's with ``last``)."""
    out = []
    if f.baseline is not None:
        out.append(("baseline", f.baseline.evidence(last)))
    if f.new is not None:
        out.append(("new", f.new.evidence(last)))
    return tuple(out)


# -- output ---------------------------------------------------------------------------------


def _seconds_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


#: Frames a "cache only" line names before "and N more".
CACHE_ONLY_NAMED = 8


def header_lines(diff: TraceDiff, baseline: str, new: str) -> list[str]:
    """Which two runs, made with what; what differs in their setup; whether anything was
    compared.  ``baseline`` and ``new`` name the inputs as the user gave them."""
    lines = []
    if diff.baseline_facts is not None and diff.new_facts is not None:
        lines.append(f"baseline: {baseline} ({diff.baseline_facts.describe()})")
        lines.append(f"new run:  {new} ({diff.new_facts.describe()})")
    for difference in diff.setup:
        lines.append(f"not like for like: {difference}")
    if diff.nothing_compared:
        lines.append(f"nothing compared: {diff.nothing_compared}")
    return lines


def report_lines(diff: TraceDiff) -> list[str]:
    """Plain lines saying what changed, rank by rank (one line when nothing did).  Each
    line starts with the tool's words, never with text from a log."""
    if diff.nothing_compared:
        return []  # the header says so, once
    if diff.unchanged:
        multi = len(diff.ranks) > 1
        return ["No change in compilation (compile time aside)."] + [
            line
            for r in diff.ranks
            for line in _runtime_lines(r, f"rank {r.rank}: " if multi else "")
        ]
    lines = _unread_and_unmatched_lines(diff)
    multi = len(diff.ranks) > 1 or any(r.alike for r in diff.ranks)
    for r in diff.ranks:
        lines += _rank_lines(r, f"rank {r.rank}: " if multi else "")
    return lines


def _unread_and_unmatched_lines(diff: TraceDiff) -> list[str]:
    """What was not read, and the ranks only one run has."""
    lines: list[str] = [f"Not read: {what}" for what in diff.unread]
    for n in diff.ranks_only_baseline:
        lines.append(f"rank {n}: only in the baseline")
    new_only = {r.rank: r for r in diff.new_only}
    for n in diff.ranks_only_new:
        r = new_only.get(n)
        found = (
            (
                f" (compared with nothing: {len(r.errors_new)} compile error(s), "
                f"{len(r.breaks_new)} graph break(s))"
            )
            if r is not None
            else ""
        )
        lines.append(f"rank {n}: only in the new run{found}")
    return lines


def _rank_lines(r: RankDiff, prefix: str) -> list[str]:
    """What changed on one compared rank: frames new and gone, graph breaks and errors,
    changed frames, caches, runtime, compile time."""
    lines: list[str] = []
    if r.alike and r.changed:
        lines.append(
            f"{prefix}stands for ranks {number_ranges(r.alike)} too (alike in "
            "each run: compared once)"
        )
    for f in r.frames_new:
        lines.append(f"{prefix}new frame {f.key} {f.new.label if f.new else ''}".rstrip())
    for f in r.frames_gone:
        lines.append(
            f"{prefix}gone frame {f.key} {f.baseline.label if f.baseline else ''}".rstrip()
        )
    lines += _break_and_error_lines(r, prefix)
    for f in r.frames:
        if f.is_new or f.is_gone or not f.changed or f.cache_only:
            continue
        lines += _changed_frame_lines(f, prefix)
    lines += _cache_only_lines([f for f in r.frames if f.cache_only], prefix)
    if r.cache.changed:
        lines.append(f"{prefix}cache: {_value(r.cache.baseline)} -> {_value(r.cache.new)}")
    lines += _runtime_lines(r, prefix)
    total = r.total_seconds
    if total is not None:
        ratio = f" ({_times_text(total.ratio)}, noisy)" if total.ratio is not None else " (noisy)"
        lines.append(
            f"{prefix}compile time: {_seconds_text(total.baseline)} -> "
            f"{_seconds_text(total.new)}{ratio}"
        )
        lines += _function_time_lines(r, prefix)
    if r.vllm is not None:
        lines.append(f"{prefix}vllm: {r.vllm.baseline or 'none'} -> {r.vllm.new or 'none'}")
    return lines


#: Functions the text names under a rank's compile time, the most changed first.
FUNCTIONS_IN_TEXT = 3


def _function_time_lines(r: RankDiff, prefix: str) -> list[str]:
    """The functions whose compile time changed most, with the phase that changed most."""
    lines: list[str] = []
    for f in r.function_times[:FUNCTIONS_IN_TEXT]:
        if not f.change:
            break
        phase = f.most_changed_phase()
        where = ""
        if phase is not None:
            where = f", most in {PHASE_WORDS.get(phase[0], phase[0])} ({phase[1]:+.2f} s)"
        lines.append(
            f"{prefix}  {f.function} ({f.file}): {f.baseline_seconds:.2f} s -> "
            f"{f.new_seconds:.2f} s{where}"
        )
    return lines


def _break_and_error_lines(r: RankDiff, prefix: str) -> list[str]:
    """Graph breaks and compile errors new and fixed, each with the record it rests on."""
    lines: list[str] = []
    for b in r.breaks_new:
        lines.append(f"{prefix}new graph break: {b}")
        lines += _evidence_line("new", b.evidence)
    for b in r.breaks_fixed:
        lines.append(f"{prefix}graph break fixed: {b}")
        lines += _evidence_line("baseline", b.evidence)
    for e in r.errors_new:
        lines.append(f"{prefix}new compile error: {e}")
        lines += _evidence_line("new", e.evidence)
    for e in r.errors_fixed:
        lines.append(f"{prefix}compile error fixed: {e}")
        lines += _evidence_line("baseline", e.evidence)
    return lines


def _changed_frame_lines(f: FrameDiff, prefix: str) -> list[str]:
    """A frame both runs compiled that changed: each figure that moved, its new recompile
    reasons, its guards and graph, and the records on each side."""
    lines = [f"{prefix}changed frame {f.key}{_match_text(f)}:"]
    for label, change in (
        ("status", f.status),
        ("compiles", f.versions),
        ("graph ops", f.graph_ops),
        ("graph nodes", f.graph_nodes),
        ("kernels", f.kernel_count),
        ("cache", f.cache),
    ):
        if change.changed:
            lines.append(f"  {label}: {_value(change.baseline)} -> {_value(change.new)}")
    for reason in f.recompile_reasons_new:
        lines.append(f"  new recompile reason: {reason}")
    if f.guards_added or f.guards_removed:
        lines.append(f"  guards: +{len(f.guards_added)} -{len(f.guards_removed)}")
    if f.graph_diff:
        lines.append("  Dynamo graph changed")
    lines.append(
        "  evidence: " + ", ".join(f"{side} {where}" for side, where in _frame_evidence(f))
    )
    return lines


def _cache_only_lines(cache_only: list[FrameDiff], prefix: str) -> list[str]:
    """The frames whose cache results alone changed, one line naming the first few."""
    if not cache_only:
        return []
    named = ", ".join(str(f.key) for f in cache_only[:CACHE_ONLY_NAMED])
    more = (
        f" and {len(cache_only) - CACHE_ONLY_NAMED} more"
        if len(cache_only) > CACHE_ONLY_NAMED
        else ""
    )
    return [f"{prefix}cache results only, in {len(cache_only)} frame(s): {named}{more}"]


def _runtime_lines(r: RankDiff, prefix: str) -> list[str]:
    """Each frame's time per call on both sides, where a runtime profile was kept."""
    lines: list[str] = []
    ran = [f for f in r.frames if f.runtime.baseline or f.runtime.new]
    if ran:
        lines.append(f"{prefix}runtime per call (run --runtime; noisy):")
        for f in sorted(ran, key=_growth)[:RUNTIME_LISTED]:
            calls = "/".join(str(s[0]) if s else "-" for s in (f.runtime.baseline, f.runtime.new))
            grew = f.runtime_ratio
            lines.append(
                f"  {f.key}: {_per_call_text(f.runtime)}"
                + (f" ({_times_text(grew)})" if grew is not None else "")
                + f", calls {calls}"
            )
    return lines


def _growth(f: FrameDiff) -> float:
    """Sorts the frames whose runtime cannot be compared first, then the largest growth."""
    ratio = f.runtime_ratio
    return 0.0 if ratio is None else -ratio if math.isfinite(ratio) else -math.inf


def _times_text(ratio: float) -> str:
    """``x1.25``; a ratio that is no finite number is said to be one."""
    return f"x{ratio:.2f}" if math.isfinite(ratio) else "cannot be compared"


def _finite(value: Any) -> Any:
    """A number for JSON: None for NaN and infinities (JSON has none)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


#: Frames the runtime lines list, the largest growth first.
RUNTIME_LISTED = 20


def _evidence_line(side: str, where: str | None) -> list[str]:
    return [f"  evidence: {side} {where}"] if where else []


def _match_text(f: FrameDiff) -> str:
    """`` (ambiguous: paired by order; also [3/*])`` for a pairing that is a guess."""
    if f.match != "ambiguous":
        return ""
    others = f"; also {', '.join(f.candidates)}" if f.candidates else ""
    return f" (ambiguous: several frames of this function, paired by order{others})"


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{v} {k}" for k, v in value.items()) or "none"
    return "-" if value is None else str(value)


def _site_json(site: BreakSite) -> dict[str, str | None]:
    return {
        "reason": site.reason,
        "file": site.file,
        "function": site.function,
        "registry_id": site.registry_id,
        "evidence": site.evidence,
    }


def _frame_json(f: FrameDiff) -> dict[str, Any]:
    def change(c: Change) -> dict[str, Any]:
        return {"baseline": c.baseline, "new": c.new}

    return {
        "file": f.key.file,
        "function": f.key.function,
        "occurrence": f.key.occurrence,
        "baseline_label": f.baseline.label if f.baseline else None,
        "new_label": f.new.label if f.new else None,
        "match": f.match,
        "candidates": f.candidates,
        "evidence": dict(_frame_evidence(f)),
        "first_line": change(
            Change(
                f.baseline.first_line if f.baseline else None, f.new.first_line if f.new else None
            )
        ),
        "changed": f.changed,
        "status": change(f.status),
        "compiles": change(f.versions),
        "recompile_reasons_new": f.recompile_reasons_new,
        "guards_added": f.guards_added,
        "guards_removed": f.guards_removed,
        "graph_ops": change(f.graph_ops),
        "graph_nodes": change(f.graph_nodes),
        "graph_diff": f.graph_diff,
        "kernels": change(f.kernel_count),
        "kernel_names": change(
            Change(
                [n for n, _ in f.baseline.kernels[:MAX_LISTED]] if f.baseline else None,
                [n for n, _ in f.new.kernels[:MAX_LISTED]] if f.new else None,
            )
        ),
        "kernels_added": f.kernels_added,
        "kernels_removed": f.kernels_removed,
        "kernel_kinds": change(f.kernel_kinds),
        "compile_seconds": change(f.seconds),
        "cache": change(f.cache),
        "runtime": change(Change(_ran_json(f.runtime.baseline), _ran_json(f.runtime.new))),
    }


def _ran_json(side: tuple[int, float] | None) -> dict[str, float] | None:
    return None if side is None else {"calls": side[0], "own_us": round(side[1], 3)}


#: What the JSON says it is; its schema is ``sphinx_torchtrace/schemas/diff.schema.json``.
DIFF_JSON_FORMAT = "sphinx-torchtrace/diff/1"

#: The JSON's name of each compile-time phase (``ranks[].compile_time[].phase``, a key of
#: ``TIME_PHASES`` here): published vocabulary, listed in the schema, that CI jobs match on;
#: it stays as it is whatever words the pages use (``site/phase_words.py``).
JSON_PHASE_NAMES: dict[str, str] = {
    "entire_frame": "Whole frame (entire_frame_compile_time_s)",
    "dynamo_before_restart": "Dynamo before a restart (dynamo_time_before_restart_s)",
    "backend": "Backend (backend_compile_time_s)",
    "inductor": "Inductor (inductor_compile_time_s)",
    "code_gen": "Code generation (code_gen_time_s)",
    "backward_inductor": "Backward: Inductor (inductor_compile_time_s)",
    "backward_code_gen": "Backward: code generation (code_gen_time_s)",
}


def _facts_json(facts: RunFacts | None) -> dict[str, Any] | None:
    if facts is None:
        return None
    return {
        "torch": list(facts.torch),
        "python": list(facts.python),
        "config_hashes": {name: facts.config_hash(name) for name in sorted(facts.configs)},
        "ranks": list(facts.ranks),
    }


def diff_json(diff: TraceDiff) -> dict[str, Any]:
    """See :meth:`TraceDiff.to_json`."""
    return {
        "format": DIFF_JSON_FORMAT,
        "unchanged": diff.unchanged,
        "nothing_compared": diff.nothing_compared,
        "setup": {
            "baseline": _facts_json(diff.baseline_facts),
            "new": _facts_json(diff.new_facts),
            "differences": diff.setup,
        },
        "frames_matched": diff.frames_matched,
        "ranks_only_baseline": diff.ranks_only_baseline,
        "ranks_only_new": diff.ranks_only_new,
        "unread": diff.unread,
        "new_only": [
            {
                "rank": r.rank,
                "errors": [_site_json(e) for e in r.errors_new],
                "graph_breaks": [_site_json(b) for b in r.breaks_new],
            }
            for r in diff.new_only
        ],
        "ranks": [
            {
                "rank": r.rank,
                "alike": r.alike,
                "frames_new": [str(f.key) for f in r.frames_new],
                "frames_gone": [str(f.key) for f in r.frames_gone],
                "graph_breaks_new": [_site_json(b) for b in r.breaks_new],
                "graph_breaks_fixed": [_site_json(b) for b in r.breaks_fixed],
                "errors_new": [_site_json(e) for e in r.errors_new],
                "errors_fixed": [_site_json(e) for e in r.errors_fixed],
                "cache": {"baseline": r.cache.baseline, "new": r.cache.new},
                "compile_time": [
                    {
                        "phase": JSON_PHASE_NAMES.get(t.phase, t.phase),
                        "baseline": _finite(t.baseline),
                        "new": _finite(t.new),
                        "ratio": _finite(t.ratio),
                    }
                    for t in r.times
                ],
                "compile_time_by_function": [f.as_json() for f in r.function_times],
                "vllm": r.vllm.as_json() if r.vllm is not None else None,
                "frames": [_frame_json(f) for f in r.frames],
            }
            for r in diff.ranks
        ],
    }


def regressions_json(found: list[Regression]) -> list[dict[str, Any]]:
    """Regressions as JSON-able dicts (``kind``, ``subtype``, ``rank``, ``frame``, ``message``)."""
    return [
        {
            "kind": g.kind,
            "subtype": g.subtype,
            "rank": g.rank,
            "frame": g.frame,
            "message": g.message,
            "evidence": dict(g.evidence),
        }
        for g in found
    ]
