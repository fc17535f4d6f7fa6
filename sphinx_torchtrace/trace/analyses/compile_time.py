"""Where the compile time went, by the user's source: a tree file → function → compile →
phase whose root is the glance's compile time, every leaf a figure of the log.

A compile's seconds are its ``entire_frame_compile_time_s`` (what the glance adds up,
:func:`.phases.compile_seconds`).  They are split into phases by the log's own spans when
it logged them: each instant of the compile's ``entire_frame_compile`` span goes to the
most specific phase whose ``dynamo_timed`` span covers it (autotuning over C++/Triton
compilation over cache loads over code generation over Inductor over the backend over
Dynamo's own frame), so the phases add up without any guess.  Without spans the nested
metrics split it (frame ⊇ backend ⊇ Inductor ⊇ code generation, each phase one metric
less the next).  What the records do not cover (a metric longer than its span) is a
leaf of its own, "not attributed": never spread over the phases.

Each leaf names its records (``log:line``); :func:`remarks` says what to do about it only
where the records show the cause.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..kept import Kept
from ..model import Compile, RankTrace, Trace
from .autotuning import NOTABLE_SHARE  # a remark needs this share
from .caches import lookups
from .naming import compiled_function
from .phases import compile_seconds
from .timings import MAX_SECONDS, MAX_TIMESTAMP_US, _parsed_events, plausible

#: Phases in pipeline order: (key, words).  The key is what the JSON and tests use.
PHASES: tuple[tuple[str, str], ...] = (
    ("dynamo", "Dynamo (tracing, guards)"),
    ("backend", "AOT autograd and the backend"),
    ("inductor", "Inductor lowering and passes"),
    ("code_gen", "Code generation"),
    ("cache", "Cache lookups and loads"),
    ("compile", "C++/Triton compilation"),
    ("autotune", "Autotuning"),
    ("unattributed", "Not attributed"),
)
PHASE_WORDS: dict[str, str] = dict(PHASES)

#: The spans of each phase, by the name torch's ``dynamo_timed`` gives them.
_SPAN_PHASES: dict[str, str] = {
    **dict.fromkeys(
        ("backend_compile", "OutputGraph.call_user_compiler", "create_aot_dispatcher_function"),
        "backend",
    ),
    **dict.fromkeys(("inductor_compile", "compile_fx_inner", "fx_codegen_and_compile"), "inductor"),
    **dict.fromkeys(
        ("code_gen", "GraphLowering.compile_to_fn", "GraphLowering.compile_to_module"), "code_gen"
    ),
    **dict.fromkeys(
        (
            "AOTAutogradCache.inductor_load",
            "GraphPickler.loads",
            "TritonBundler.read_and_emit",
            "TritonBundler.load_cached_static_autotuners",
            "CompiledArtifact.load",
            "inductor_codecache_torch_key",
            "CacheBase.get_system.triton_key",
        ),
        "cache",
    ),
    **dict.fromkeys(
        (
            "compile_file",
            "async_compile.wait",
            "async_compile.precompile",
            "AotCodeCompiler.compile",
            "aoti_compile_fatbin",
            "aoti_precompile_header",
        ),
        "compile",
    ),
    **dict.fromkeys(
        (
            "CachingAutotuner.benchmark_all_configs",
            "CachingAutotuner.coordinate_descent_tuning",
            "CachingAutotuner.combo_sequential_autotune",
            "CachingAutotuner.slow_precompile_config",
            "benchmark_fused_nodes",
            "benchmark_codegened_module",
            "StaticAutotunerFuture.warm_precompile",
            "collective_compute_do_bench",
            "InductorBenchmarker.benchmark_gpu",
            "InductorBenchmarker.benchmark_cpu",
        ),
        "autotune",
    ),
}
#: Autotuning spans named after the template: ``mm_template_autotuning``.
_AUTOTUNE_SUFFIXES = ("_template_autotuning", "_template_precompiling")
#: The compile's own span, whose length the metric ``entire_frame_compile_time_s`` is.
_FRAME_SPANS = ("entire_frame_compile", "_compile.compile_inner")
#: Most specific first: an instant covered by several phases' spans goes to the first.
_SPECIFIC = ("autotune", "compile", "cache", "code_gen", "inductor", "backend")

#: Nested metrics, outermost first: (phase the level's own time goes to, seconds, µs key).
_METRIC_LEVELS: tuple[tuple[str, str, str], ...] = (
    ("dynamo", "entire_frame_compile_time_s", "dynamo_cumulative_compile_time_us"),
    ("backend", "backend_compile_time_s", "aot_autograd_cumulative_compile_time_us"),
    ("inductor", "inductor_compile_time_s", "inductor_cumulative_compile_time_us"),
    ("code_gen", "code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us"),
)

#: A warm start's C++/Triton compilation is remarked on from this many seconds.
WARM_COMPILE_SECONDS = 0.05


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Source:
    """A record a figure comes from: what it is and its line in the log."""

    what: str  # "compile_file ×3", "entire_frame_compile_time_s"
    line: int
    path: str = ""  # the log, for several ranks


@dataclass
class Node:
    """A node of the tree: its seconds are its children's sum (a leaf's, its records')."""

    kind: Literal["root", "rank", "file", "function", "compile", "phase"]
    label: str
    seconds: float = 0.0
    children: list[Node] = field(default_factory=list)
    sources: tuple[Source, ...] = ()
    compile: Compile | None = None  # for a compile and its phases
    rank: RankTrace | None = None
    phase: str | None = None  # a key of PHASES, for a leaf

    def leaves(self) -> list[Node]:
        out: list[Node] = []
        stack = [self]
        while stack:
            node = stack.pop()
            if node.children:
                stack.extend(reversed(node.children))
            else:
                out.append(node)
        return out

    def figures(self) -> Node:
        """A copy with the figures and words only (no compile, no rank): what a picture
        draws, holding none of the log's other records."""
        copy = Node(self.kind, self.label, self.seconds, sources=self.sources, phase=self.phase)
        stack = [(self, copy)]
        while stack:
            node, made = stack.pop()
            for child in node.children:
                twin = Node(child.kind, child.label, child.seconds, sources=child.sources)
                twin.phase = child.phase
                made.children.append(twin)
                stack.append((child, twin))
        return copy

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "label": self.label}
        data["seconds"] = round(self.seconds, 6)
        if self.phase is not None:
            data["phase"] = self.phase
        if self.compile is not None:
            data["compile_id"] = self.compile.label
        if self.sources:
            data["sources"] = [
                {"what": s.what, "line": s.line, **({"log": s.path} if s.path else {})}
                for s in self.sources
            ]
        if self.children:
            data["children"] = [c.as_json() for c in self.children]
        return data


@dataclass(frozen=True)
class Remark:
    """What to do about some of the time, where the records show why; ``records`` name them."""

    kind: Literal["warm_compile", "autotune", "identical_graph"]
    text: str
    seconds: float
    compiles: tuple[Compile, ...]
    records: tuple[Source, ...]


# --------------------------------------------------------------------------- the tree


def compile_time_tree(trace: Trace | RankTrace) -> Node:
    """The tree of a trace (a rank level first where there are several) or of one rank."""
    ranks = trace.ranks if isinstance(trace, Trace) else [trace]
    several = len(ranks) > 1
    root = Node("root", "Compile time")
    for position, rank in enumerate(ranks):
        files = _rank_files(rank, several)
        if not files:
            continue
        if several:
            number = rank.rank if rank.rank is not None else position
            node = Node("rank", f"rank {number}", children=files, rank=rank)
            node.seconds = sum(f.seconds for f in files)
            root.children.append(node)
        else:
            root.children.extend(files)
    root.seconds = sum(c.seconds for c in root.children)
    return root


def _rank_files(rank: RankTrace, several: bool) -> list[Node]:
    spans = _spans_of(rank)
    files: dict[str, Node] = {}
    functions: dict[tuple[str, str, str], Node] = {}
    for compile_ in rank.compiles:
        if compile_.id.is_unknown:
            continue  # the glance counts compiles of a known id
        seconds = compile_seconds(compile_)
        if seconds is None:
            continue
        name, place = compiled_function(rank, compile_)
        filename = place.rsplit(":", 1)[0] if place and ":" in place else place
        file_label = filename or "(file not logged)"
        function_label = name or "(function not logged)"
        file_node = files.get(file_label)
        if file_node is None:
            file_node = files[file_label] = Node("file", file_label, rank=rank)
        key = (file_label, function_label, place or "")
        function_node = functions.get(key)
        if function_node is None:
            function_node = functions[key] = Node("function", function_label, rank=rank)
            file_node.children.append(function_node)
        node = Node("compile", compile_.label, seconds, compile=compile_, rank=rank)
        node.children = _phases(rank, compile_, seconds, spans, several)
        function_node.children.append(node)
        function_node.seconds += seconds
        file_node.seconds += seconds
    for file_node in files.values():
        file_node.children.sort(key=lambda n: -n.seconds)
    return sorted(files.values(), key=lambda n: -n.seconds)


def _phases(
    rank: RankTrace, compile_: Compile, seconds: float, spans: _RankSpans, several: bool
) -> list[Node]:
    """A compile's phase leaves: their seconds add up to ``seconds`` exactly."""
    path = rank.path if several else ""
    metrics = compile_.compilation_metrics[0]
    metric = Source("compilation_metrics entire_frame_compile_time_s", metrics.line, path)
    split = spans.split(compile_, path)
    if split is None:
        split = _metric_split(metrics.data, metrics.line, path)
    measured = sum(s for s, _ in split.values())
    if measured > seconds:  # a span a little longer than its metric: take it off the frame
        excess = measured - seconds
        own, sources = split.get("dynamo", (0.0, ()))
        split["dynamo"] = (max(0.0, own - excess), sources)
        measured = sum(s for s, _ in split.values())
    leaves = [
        Node(
            "phase",
            PHASE_WORDS[key],
            value,
            sources=sources,
            compile=compile_,
            rank=rank,
            phase=key,
        )
        for key, _ in PHASES
        if key in split
        for value, sources in [split[key]]
        if value > 0
    ]
    rest = seconds - measured
    if rest > 1e-9 or not leaves:
        leaves.append(
            Node(
                "phase",
                PHASE_WORDS["unattributed"],
                max(0.0, rest),
                sources=(metric,),
                compile=compile_,
                rank=rank,
                phase="unattributed",
            )
        )
    # the sum of the leaves is the compile's seconds, to the last bit
    if leaves:
        drift = seconds - sum(leaf.seconds for leaf in leaves)
        biggest = max(leaves, key=lambda n: n.seconds)
        biggest.seconds = max(0.0, biggest.seconds + drift)
    return leaves


Split = dict[str, tuple[float, tuple[Source, ...]]]


def _metric_split(data: dict[str, Any], line: int, path: str) -> Split:
    """The nested metrics as exclusive phases: each level less the next one logged."""
    levels: list[tuple[str, str, float]] = []
    for phase, seconds_key, micros_key in _METRIC_LEVELS:
        value = plausible(data.get(seconds_key), MAX_SECONDS)
        key = seconds_key
        if value is None:
            micros = plausible(data.get(micros_key), MAX_SECONDS * 1e6)
            value, key = (None, key) if micros is None else (micros / 1e6, micros_key)
        if value is not None:
            levels.append((phase, key, value))
    if len(levels) < 2 or levels[0][0] != "dynamo":
        return {}  # the frame's figure alone says nothing of where its time went
    out: Split = {}
    for i, (phase, key, value) in enumerate(levels):
        inner = levels[i + 1] if i + 1 < len(levels) else None
        own = value - min(value, inner[2]) if inner is not None else value
        what = f"compilation_metrics {key}" + (f" − {inner[1]}" if inner is not None else "")
        out[phase] = (max(0.0, own), (Source(what, line, path),))
        if inner is not None and inner[2] > value:  # an inner level longer than its outer
            break
    return out


# --------------------------------------------------------------------------- spans

_Interval = tuple[float, float]


@dataclass
class _Span:
    name: str
    start: float
    end: float
    line: int  # the line of its begin event (an X event's own)


@dataclass
class _RankSpans:
    """A rank's spans of the phases and of the frames, read once."""

    spans: list[_Span]  # phase spans, by start
    frames: dict[int, list[_Span]]  # id(compile) -> its entire_frame_compile spans

    def split(self, compile_: Compile, path: str) -> Split | None:
        frames = self.frames.get(id(compile_))
        if not frames:
            return None
        window = _union((f.start, f.end) for f in frames)
        inside: dict[str, list[_Span]] = defaultdict(list)
        for span in self.spans:
            if any(s < span.end and span.start < e for s, e in window):
                inside[_phase_of(span.name) or ""].append(span)
        covered: list[_Interval] = []
        out: Split = {}
        for phase in _SPECIFIC:
            own = _clip(((s.start, s.end) for s in inside.get(phase, [])), window)
            if not own:
                continue
            alone = _length(own) - _overlap(own, covered)
            covered = _union([*covered, *own])
            out[phase] = (alone / 1e6, _named(inside[phase], path))
        frame_seconds = (_length(window) - _length(covered)) / 1e6
        frame_sources = (Source(f"{frames[0].name} (its own time)", frames[0].line, path),)
        out["dynamo"] = (max(0.0, frame_seconds), frame_sources)
        return out


def _phase_of(name: str) -> str | None:
    phase = _SPAN_PHASES.get(name)
    if phase is None and name.endswith(_AUTOTUNE_SUFFIXES):
        return "autotune"
    return phase


def _named(spans: Sequence[_Span], path: str) -> tuple[Source, ...]:
    """One source per span name: its count and its first span's line."""
    first: dict[str, _Span] = {}
    counts: dict[str, int] = defaultdict(int)
    for span in sorted(spans, key=lambda s: s.line):
        first.setdefault(span.name, span)
        counts[span.name] += 1
    return tuple(
        Source(name + (f" ×{counts[name]}" if counts[name] > 1 else ""), span.line, path)
        for name, span in first.items()
    )


def _spans_of(rank: RankTrace) -> _RankSpans:
    """The rank's spans, read once for the ranks asked last."""
    return _SPANS(rank)


def _read_spans(rank: RankTrace) -> _RankSpans:
    """B/E pairs (per process, thread and name) and X events of the phases and frames."""
    owners = _owner_lookup(rank)
    open_at: dict[tuple[str, str, str], list[tuple[float, int]]] = defaultdict(list)
    spans: list[_Span] = []
    frames: dict[int, list[_Span]] = defaultdict(list)
    for event, data in _parsed_events(rank):
        name = data.get("name")
        if not isinstance(name, str):
            continue
        frame = name in _FRAME_SPANS
        if not frame and _phase_of(name) is None:
            continue
        ts = plausible(data.get("ts"), MAX_TIMESTAMP_US)
        phase = data.get("ph")
        if ts is None:
            continue
        key = (_key(data.get("pid")), _key(data.get("tid")), name)
        if phase == "B":
            open_at[key].append((ts, event.line))
            continue
        if phase == "E" and open_at[key]:
            (start, line), end = open_at[key].pop(), ts
        elif phase == "X":
            duration = plausible(data.get("dur"), MAX_SECONDS * 1e6)
            if duration is None:
                continue
            start, end, line = ts, ts + duration, event.line
        else:
            continue
        if end < start:
            continue
        span = _Span(name, start, end, line)
        if frame:
            owner = owners(event.compile_id, event.line)
            if owner is not None:
                frames[id(owner)].append(span)
        else:
            spans.append(span)
    spans.sort(key=lambda s: s.start)
    # the outermost frame span names a compile's frame (a nested one is a restart's)
    return _RankSpans(spans, {k: _outermost(v) for k, v in frames.items()})


_SPANS: Kept[RankTrace, _RankSpans] = Kept(_read_spans)


def _outermost(frames: list[_Span]) -> list[_Span]:
    by_name = [f for f in frames if f.name == _FRAME_SPANS[0]] or frames
    return by_name


def _owner_lookup(rank: RankTrace) -> Any:
    """The compile a frame span's end event belongs to: the latest of its id begun before."""
    by_id: dict[Any, list[Compile]] = defaultdict(list)
    for compile_ in rank.compiles:
        by_id[compile_.id].append(compile_)

    def owner(compile_id: Any, line: int) -> Compile | None:
        best = None
        for candidate in by_id.get(compile_id, ()):
            if candidate.first_line <= line:
                best = candidate
        return best

    return owner


def _key(value: Any) -> str:
    if value is None or isinstance(value, (str, int, float)):
        return repr(value)
    return type(value).__name__


def _union(spans: Iterable[_Interval]) -> list[_Interval]:
    merged: list[_Interval] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _length(spans: Iterable[_Interval]) -> float:
    return sum(e - s for s, e in spans)


def _clip(spans: Iterable[_Interval], window: Sequence[_Interval]) -> list[_Interval]:
    """The parts of ``spans`` inside ``window`` (both unions of intervals), as a union."""
    parts = [(max(s, ws), min(e, we)) for s, e in spans for ws, we in window if s < we and ws < e]
    return _union(parts)


def _overlap(a: Sequence[_Interval], b: Sequence[_Interval]) -> float:
    """Length of the intersection of two unions of intervals."""
    return _length(a) + _length(b) - _length(_union([*a, *b]))


# --------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class FunctionTime:
    file: str
    function: str
    seconds: float
    compiles: int


def top_functions(root: Node, limit: int = 10) -> list[FunctionTime]:
    """The functions that took the longest to compile (over ranks, one row each)."""
    found: dict[tuple[str, str], list[float]] = {}
    stack = [(root, "")]
    while stack:
        node, file = stack.pop()
        if node.kind == "file":
            file = node.label
        if node.kind == "function":
            entry = found.setdefault((file, node.label), [0.0, 0])
            entry[0] += node.seconds
            entry[1] += len(node.children)
            continue
        stack.extend((c, file) for c in node.children)
    rows = [FunctionTime(f, fn, s, int(n)) for (f, fn), (s, n) in found.items()]
    rows.sort(key=lambda r: (-r.seconds, r.file, r.function))
    return rows[:limit]


def phase_totals(root: Node) -> dict[str, float]:
    """Seconds per phase over the whole tree, in pipeline order, phases with time only."""
    totals: dict[str, float] = defaultdict(float)
    for leaf in root.leaves():
        if leaf.phase is not None:
            totals[leaf.phase] += leaf.seconds
    return {k: totals[k] for k, _ in PHASES if totals.get(k)}


# --------------------------------------------------------------------------- remarks


def remarks(root: Node) -> list[Remark]:
    """What to do about the time, only where the log shows the cause."""
    out: list[Remark] = []
    compiles = [n for n in _walk(root) if n.kind == "compile" and n.compile is not None]
    for node in compiles:
        remark = _warm_compile(node)
        if remark is not None:
            out.append(remark)
    autotune = [(n, leaf) for n in compiles for leaf in n.children if leaf.phase == "autotune"]
    spent = sum(leaf.seconds for _, leaf in autotune)
    if root.seconds > 0 and spent >= NOTABLE_SHARE * root.seconds:
        out.append(
            Remark(
                "autotune",
                f"Autotuning took {spent:.1f} s, {spent / root.seconds:.0%} of the compile time: "
                "its results can be kept in the cache (or max-autotune turned off where the "
                "kernels it picks do not matter).",
                spent,
                tuple(n.compile for n, _ in autotune if n.compile is not None),
                tuple(s for _, leaf in autotune for s in leaf.sources),
            )
        )
    out.extend(_identical_graphs(root))
    return out


def _walk(root: Node) -> list[Node]:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(reversed(node.children))
    return out


def _warm_compile(node: Node) -> Remark | None:
    """Cache hits, and still C++/Triton compilation in the same compile."""
    compile_ = node.compile
    assert compile_ is not None
    # lookups only: an FX graph an AOT-autograd hit carried is that hit's load, not a hit
    hits = [e for e in lookups(compile_) if e.result == "hit"]
    compiled = [leaf for leaf in node.children if leaf.phase == "compile"]
    seconds = sum(leaf.seconds for leaf in compiled)
    if not hits or seconds < WARM_COMPILE_SECONDS:
        return None
    path = compiled[0].sources[0].path if compiled[0].sources else ""
    names = sorted({e.artifact for e in hits})
    return Remark(
        "warm_compile",
        f"{compile_.label} hit the cache ({len(hits)} hit{'s' if len(hits) > 1 else ''}: "
        f"{', '.join(names)}) and still spent {seconds:.2f} s compiling C++/Triton code "
        "inside its compile: a warm start that compiled kernels all the same.",
        seconds,
        (compile_,),
        (*(Source(e.artifact, e.line, path) for e in hits), *compiled[0].sources),
    )


def _identical_graphs(root: Node) -> list[Remark]:
    """Recompiles of a function whose Dynamo graph is the same text as an earlier compile's:
    a guard failed (its reasons are logged) and the work was done again for the same graph."""
    out: list[Remark] = []
    functions = [n for n in _walk(root) if n.kind == "function" and len(n.children) > 1]
    for function in functions:
        seen: dict[str, tuple[Node, int]] = {}
        for node in sorted(
            function.children, key=lambda n: n.compile.first_line if n.compile else 0
        ):
            compile_ = node.compile
            graphs = compile_.artifacts_named("dynamo_output_graph") if compile_ else []
            if compile_ is None or not graphs or graphs[0].payload is None:
                continue
            try:
                digest = hashlib.sha256(graphs[0].payload.read_bytes()).hexdigest()
            except OSError:
                continue
            first = seen.setdefault(digest, (node, graphs[0].line))
            if first[0] is node or not compile_.recompile_reasons or first[0].compile is None:
                continue
            path = _path_of(node)
            reasons = len(compile_.recompile_reasons)
            out.append(
                Remark(
                    "identical_graph",
                    f"{compile_.label} recompiled {function.label} to the same graph as "
                    f"{first[0].compile.label} ({node.seconds:.2f} s): the guard that failed "
                    f"({reasons} reason{'s' if reasons > 1 else ''} logged, on its page) "
                    "changed nothing in the graph torch compiled.",
                    node.seconds,
                    (first[0].compile, compile_),
                    (
                        Source("dynamo_output_graph", first[1], path),
                        Source("dynamo_output_graph (same text)", graphs[0].line, path),
                    ),
                )
            )
    return out


def _path_of(node: Node) -> str:
    """The log a node's records are in, where its leaves say (several ranks)."""
    for leaf in node.leaves():
        for source in leaf.sources:
            return source.path
    return ""


# --------------------------------------------------------------------------- summary command


def summary_data(root: Node) -> dict[str, Any]:
    """What ``summary --json`` says: the top functions, the phases, the remarks, the tree."""
    return {
        "seconds": round(root.seconds, 6),
        "functions": [
            {
                "file": f.file,
                "function": f.function,
                "seconds": round(f.seconds, 6),
                "compiles": f.compiles,
            }
            for f in top_functions(root)
        ],
        "phases": {k: round(v, 6) for k, v in phase_totals(root).items()},
        "remarks": [
            {
                "kind": r.kind,
                "text": r.text,
                "seconds": round(r.seconds, 6),
                "compile_ids": [c.label for c in r.compiles],
                "records": [{"what": s.what, "line": s.line} for s in r.records],
            }
            for r in remarks(root)
        ],
        "tree": root.as_json(),
    }


def summary_rows(root: Node, functions: int = 5) -> list[tuple[str, str]]:
    """The ``summary`` lines: the functions that took longest, and the phases' shares."""
    if not root.children:
        return []
    top = top_functions(root, functions)
    by_function = ", ".join(
        f"{f.function} {f.seconds:.2f} s ({f.file.replace(chr(92), '/').rsplit('/', 1)[-1]})"
        for f in top
    )
    share = root.seconds or 1.0
    by_phase = ", ".join(
        f"{PHASE_WORDS[k]} {v:.2f} s ({v / share:.0%})" for k, v in phase_totals(root).items()
    )
    rows = [("by function", by_function), ("by phase", by_phase)]
    rows += [("remark", r.text) for r in remarks(root)[:5]]
    return rows
