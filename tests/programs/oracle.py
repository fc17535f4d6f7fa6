"""Run a generated program under ``TORCH_TRACE`` and compare what we publish with what it did.

The truth is the program's own (:mod:`.generator`'s ``@@CALL`` lines: versions torch added
to the function's cache, refusals it counted, what the call raised) and what the generator
planted (which guard source a new version changed, which graph break on which line).  What
we publish is read where a reader reads it: ``sphinx-torchtrace summary --json`` (run as a
command), the overview page's recompile table, and each frame page's status paragraph (the
site model's pages, the blocks a build writes).  Each comparison that fails is a
:class:`Disagreement` of a named class, so a campaign groups them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from sphinx_torchtrace.site.blocks import (
    BulletList,
    Dropdown,
    Lines,
    Paragraph,
    Section,
    Table,
    TabSet,
    inline_text,
)
from sphinx_torchtrace.site.pages.frame import frame_page
from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.glance import triage
from sphinx_torchtrace.trace.analyses.naming import compiled_function
from sphinx_torchtrace.trace.analyses.outcome import failure_outcome
from sphinx_torchtrace.trace.analyses.run_info import torch_version

from .generator import BREAK_MARK, MAY_BREAK, Program

#: A function torch made to resume after a graph break (not one the program wrote).
RESUME = "torch_dynamo_resume_in_"
#: A resume function's name: the function it resumes, then the line it resumes at.
RESUMED = re.compile(r"torch_dynamo_resume_in_(.+)_at_\d+$")
#: Errors torch raises for a compile (not the program's own ``ValueError``).
PROGRAM_ERRORS = frozenset({"ValueError"})

#: Per planted guard source: words a true sentence about it says (any of them).
GUARD_EXPECTED: dict[str, str] = {
    "shape": r"shape|size",
    "stride": r"stride|layout",
    "dtype": r"dtype|data type",
    "device": r"device",
    "requires_grad": r"requires_grad",
    "grad_mode": r"grad",
    "autocast": r"autocast",
    "deterministic": r"determinis",
    "default_dtype": r"default",
    "global": r"global",
    "module_attribute": r"attribute",
    "closure_cell": r"closure|captured|cell",
    "list_length": r"length",
    "dict_keys": r"\bkeys?\b",
    "python_int": r"number|value",
    "python_float": r"number|value",
}

#: A guard that names a cell as such: torch's source for it reads the function's
#: ``__closure__`` or a cell's ``cell_contents``.
CELL_SOURCE = re.compile(r"__closure__|cell_contents")
#: A guard on a bare name (``k == 2``): the log cannot tell an argument, a local and a
#: free variable of the frame apart (dynamo reads a closure cell as a name of the frame).
BARE_NAME = re.compile(r"^\s*(?:___\w+\()?[A-Za-z_]\w*\)?\s*(?:==|!=|<|>|is\b|in\b)")


def guard_expected(source: str, guard: str) -> str:
    """Words a true sentence says for ``source`` planted and ``guard`` logged.

    A closure cell the log writes as a bare name is true to call "a variable of an
    enclosing function" among what a bare name can be; where the log names the cell
    (``__closure__``, ``cell_contents``) the words must say closure or cell.
    """
    if source == "closure_cell" and not CELL_SOURCE.search(guard) and BARE_NAME.match(guard):
        return GUARD_EXPECTED[source] + r"|enclosing function"
    return GUARD_EXPECTED[source]


@dataclass
class Disagreement:
    cls: str  # the class: what kind of claim is wrong
    detail: str  # this program's instance of it

    def __str__(self) -> str:
        return f"{self.cls}: {self.detail}"


@dataclass
class Run:
    """One program's run: its calls as it printed them, and the trace folder."""

    calls: list[dict[str, Any]]
    resets: list[int]
    returncode: int
    stderr: str
    trace_dir: Path
    seconds: float = 0.0


@dataclass
class Result:
    program: Program
    run: Run
    disagreements: list[Disagreement] = field(default_factory=list)
    compile_ids: int = 0
    failed: str | None = None  # the program or our reader broke: no comparison made


def run_program(program: Program, workdir: Path, timeout: float = 300) -> Run:
    """Write ``program.py`` in ``workdir`` and run it under TORCH_TRACE (a fresh cache)."""
    import time

    workdir.mkdir(parents=True, exist_ok=True)
    script = workdir / "program.py"
    script.write_text(program.text)
    (workdir / "planted.json").write_text(json.dumps(program.to_json(), indent=1) + "\n")
    trace_dir = workdir / "trace"
    env = dict(os.environ)
    env.update(
        TORCH_TRACE=str(trace_dir),
        TORCHINDUCTOR_CACHE_DIR=str(workdir / "inductor-cache"),
        OMP_NUM_THREADS="1",
        PYTHONHASHSEED="0",
    )
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        out, err, rc = done.stdout, done.stderr, done.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err, rc = "timed out", -1
    calls, resets = [], []
    for line in out.splitlines():
        if line.startswith("@@CALL "):
            calls.append(json.loads(line[7:]))
        elif line.startswith("@@RESET "):
            resets.append(json.loads(line[8:])["step"])
    (workdir / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
    return Run(calls, resets, rc, err[-4000:], trace_dir, time.monotonic() - started)


# -- the truth -------------------------------------------------------------------------------


@dataclass
class Truth:
    """What the program did, per function (the names it compiled)."""

    attempted: set[str] = field(default_factory=set)
    versions: Counter[str] = field(default_factory=Counter)
    recompiles: Counter[str] = field(default_factory=Counter)
    refusals: int = 0
    runs: Counter[str] = field(default_factory=Counter)  # runs (between resets) with a version
    #: Per function, in call order: the recompiles (new version not first in its run),
    #: each with the planted guard source (None where the call planted none).
    recompile_sources: dict[str, list[str | None]] = field(default_factory=dict)
    #: Per function, in call order, the compiles that failed: "raised:<type>" or "eager".
    failed: dict[str, list[str]] = field(default_factory=dict)
    #: Per function with graph breaks, the indices in ``failed`` of refusals past the limit
    #: that may be a resume function's: the program sees only that its call was refused.
    maybe_resume: dict[str, list[int]] = field(default_factory=dict)


def truth_of(program: Program, run: Run) -> Truth:
    t = Truth()
    in_run: Counter[str] = Counter()
    resets = set(run.resets)
    for call in run.calls:
        if call["step"] in resets:
            in_run.clear()
        fn, new = call["function"], call["new_versions"]
        planted = call.get("planted") or {}
        if new or call["compiles"] or call["refused"]:
            t.attempted.add(fn)
        t.versions[fn] += new
        for _ in range(new):
            if not in_run[fn]:
                t.runs[fn] += 1
            if in_run[fn]:
                t.recompiles[fn] += 1
                t.recompile_sources.setdefault(fn, []).append(planted.get("guard"))
            in_run[fn] += 1
        t.refusals += call["refused"]
        raised = call["raised"]
        failed = t.failed.setdefault(fn, [])
        torch_raised = raised if raised and raised not in PROGRAM_ERRORS else None
        if call["refused"]:
            if not new and any(b[0] == fn for b in program.breaks):
                t.maybe_resume.setdefault(fn, []).append(len(failed))
            failed.append(f"raised:{torch_raised}" if torch_raised else "eager")
        elif not new and call["compiles"] and torch_raised:
            failed.append(f"raised:{torch_raised}")  # torch started a compile, then raised
        elif not new and torch_raised and planted.get("error_on_recompile") == "config":
            # error_on_recompile: torch logs the compile it refuses (its RecompileError)
            # before the start callbacks run; the stance raises before logging anything
            failed.append(f"raised:{torch_raised}")
        elif not new and call["compiles"] and planted.get("backend_error") == "suppressed":
            failed.append("eager")  # the failing backend, its error suppressed
        elif not new and call["compiles"] and call["frames"] > call["frames_ok"]:
            failed.append("eager")  # a frame torch gave up on and ran as it is
    return t


# -- what we publish -------------------------------------------------------------------------


def summary_json(trace_dir: Path) -> dict[str, Any]:
    """``sphinx-torchtrace summary --json``, run as a user runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", "--json", str(trace_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode not in (0, 2):
        raise RuntimeError(f"summary exited {done.returncode}: {done.stderr[-2000:]}")
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def _walk(blocks: Sequence[Any]) -> Iterator[Any]:
    for b in blocks:
        yield b
        if isinstance(b, (Section, Dropdown)):
            yield from _walk(b.blocks)
        elif isinstance(b, TabSet):
            for tab in b.tabs:
                yield from _walk(tab.blocks)
        elif isinstance(b, BulletList):
            for item in b.items:
                yield from _walk(item)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif is_dataclass(value) and not isinstance(value, type):
        for f in fields(value):
            yield from _strings(getattr(value, f.name))


def page_text(blocks: Sequence[Any]) -> str:
    """What a reader reads in these blocks (code blocks left out: they quote the log)."""
    parts: list[str] = []
    for b in _walk(blocks):
        if isinstance(b, Paragraph):
            parts.append(inline_text(b.content))
        elif isinstance(b, Lines):
            parts += [inline_text(line) for line in b.lines]
        elif isinstance(b, (Dropdown, Section)):
            parts.append(inline_text(b.title))
        elif isinstance(b, Table):
            parts += [inline_text(cell) for row in b.rows for cell in row]
    return "\n".join(parts)


_LABEL = re.compile(r"\[(?:!\d+/)?\d+/\d+(?:_\d+)?\](?: ?#\d+)?")


def recompile_words(page_blocks: Sequence[Any]) -> dict[str, str]:
    """The recompile table's "In plain words" of each new version's first failed check,
    by the new version's compile label."""
    words: dict[str, str] = {}
    for b in _walk(page_blocks):
        if isinstance(b, Table) and list(b.header[:1]) == ["New version"]:
            for row in b.rows:
                first = inline_text(row[0])
                match = _LABEL.search(first)
                label = match.group(0).replace("]#", "] #") if match else None
                if label and label not in words:
                    words[label] = inline_text(row[-1])
    return words


# -- the comparison --------------------------------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.:;])\s+", text) if s]


def compare(program: Program, run: Run, full_pages: bool = True) -> Result:
    """Every published figure and sentence this program's truth can check."""
    result = Result(program, run)
    out = result.disagreements
    if run.returncode != 0 or not run.calls:
        result.failed = f"program exited {run.returncode}: {run.stderr[-800:]}"
        return result
    truth = truth_of(program, run)
    summary = summary_json(run.trace_dir)
    result.compile_ids = int(summary.get("compile_ids", 0))
    trace = load_trace(run.trace_dir)
    if len(trace.ranks) != 1:
        result.failed = f"{len(trace.ranks)} ranks read from one process"
        return result
    rank = trace.ranks[0]
    known = [c for c in rank.compiles if not c.id.is_unknown]
    names = [compiled_function(rank, c)[0] for c in known]
    # functions: each the program compiled, none more, every compile named
    published = {n for n in names if n is not None and not n.startswith(RESUME)}
    if None in names:
        labels = [c.label for c, n in zip(known, names, strict=True) if n is None]
        out.append(Disagreement("compile with no function", f"{', '.join(labels)} name none"))
    if published != truth.attempted:
        out.append(
            Disagreement(
                "functions differ",
                f"published {sorted(published)}, the program compiled {sorted(truth.attempted)}",
            )
        )
    # versions and recompiles per function: the recompile table
    t = triage(trace)
    table = {fn.function: fn for fn in t.recompiled if not (fn.function or "").startswith(RESUME)}
    for fn_name in sorted(truth.attempted | set(n for n in table if n)):
        entry = table.get(fn_name)
        want = truth.recompiles[fn_name]
        got = len(entry.recompiles) if entry else 0
        if got != want:
            out.append(
                Disagreement(
                    "recompiles per function miscounted",
                    f"{fn_name}: {got} published, {want} made (versions {truth.versions[fn_name]})",
                )
            )
        elif entry is not None and entry.versions != truth.versions[fn_name]:
            across = " across a reset" if truth.runs[fn_name] > 1 else ""
            out.append(
                Disagreement(
                    f"versions per function miscounted{across}",
                    f"{fn_name}: {entry.versions} published, {truth.versions[fn_name]} made",
                )
            )
    if None in table:
        out.append(Disagreement("recompile table lists a function with no name", "None"))
    if summary.get("limit_hits", 0) != truth.refusals:
        out.append(
            Disagreement(
                "refusals miscounted",
                f"summary limit_hits {summary.get('limit_hits')}, torch refused {truth.refusals}",
            )
        )
    if not program.breaks and summary.get("recompiles") != sum(truth.recompiles.values()):
        out.append(
            Disagreement(
                "recompiles total miscounted",
                f"summary {summary.get('recompiles')}, made {sum(truth.recompiles.values())}",
            )
        )
    # failed compiles: raised versus eager, per function in order
    by_fn: dict[str, list[Any]] = {}
    resume_refusals: Counter[str] = Counter()  # per function, its resume functions' refusals
    for c, n in zip(known, names, strict=True):
        if n is not None and not n.startswith(RESUME) and not c.id.attempt:
            by_fn.setdefault(n, []).append(c)
        elif n is not None and not c.id.attempt and (of := RESUMED.match(n)):
            found_out = failure_outcome(c)
            if found_out is not None and found_out.outcome == "limit":
                resume_refusals[of.group(1)] += 1
    for fn_name, maybe in truth.maybe_resume.items():
        # refusals that were a resume function's, as the log names it: not the function's own
        drop = set(maybe[: resume_refusals[fn_name]])
        kept = [w for i, w in enumerate(truth.failed[fn_name]) if i not in drop]
        truth.failed[fn_name] = kept
    for fn_name, compiles in by_fn.items():
        got_out = [(c, failure_outcome(c)) for c in compiles]
        failed = [(c, f) for c, f in got_out if f is not None]
        want_out = truth.failed.get(fn_name, [])
        if len(failed) != len(want_out):
            out.append(
                Disagreement(
                    "failed compiles miscounted",
                    f"{fn_name}: {len(failed)} published "
                    f"({', '.join(c.label for c, _ in failed)}), "
                    f"{len(want_out)} failed ({', '.join(want_out)})",
                )
            )
            continue
        for (c, found), want in zip(failed, want_out, strict=True):
            assert found is not None
            fullgraph = any(s["fullgraph"] for s in program.situations if s["function"] == fn_name)
            ok = (
                {"raised", "not_recorded"} | ({"suppressed"} if fullgraph else set())
                if want.startswith("raised")
                else {"eager", "limit", "suppressed", "not_recorded"}
            )
            if found.outcome not in ok:
                out.append(
                    Disagreement(
                        f"{'raised' if want.startswith('raised') else 'eager'} compile "
                        f"published as {found.outcome}",
                        f"{fn_name} {c.label}: {want}, published {found.outcome} ({found.rule})",
                    )
                )
    # pages: the recompile table's words, each frame page's status, sections, versions
    plan = plan_trace("t", trace, "torchtrace")
    settings = PageSettings()
    overview = overview_page(plan, settings)
    words = recompile_words(overview.blocks)
    for fn_name, sources in truth.recompile_sources.items():
        entry = table.get(fn_name)
        if entry is None or len(entry.recompiles) != len(sources):
            continue  # counted above
        for rc, source in zip(entry.recompiles, sources, strict=True):
            if source is None:
                continue
            said = words.get(rc.compile.label)
            if said is None:
                out.append(
                    Disagreement(
                        "recompile missing from the table", f"{fn_name} {rc.compile.label}"
                    )
                )
            elif said == "no reason logged" and rc.compile.recompile_reasons:
                out.append(Disagreement("logged reason said not logged", f"{rc.compile.label}"))
            elif not re.search(
                guard_expected(source, guard := rc.reasons[0].guard if rc.reasons else ""),
                said,
                re.I,
            ):
                out.append(
                    Disagreement(
                        f"guard words wrong for {source}",
                        f"{fn_name} {rc.compile.label}: {said!r} for guard {guard[:120]!r}",
                    )
                )
    overview_text = page_text(overview.blocks)
    _version_notes(rank, overview_text, "overview", out)
    if "export" not in program.text and re.search(r"\bexport report\b", overview_text, re.I):
        out.append(Disagreement("export section without torch.export", "overview"))
    if full_pages:
        _frame_pages(program, truth, plan, settings, by_fn, out)
        _regions(program, plan, settings, by_fn, out)
    _graph_breaks(program, t, rank, out)
    return result


def _version_notes(rank: Any, text: str, where: str, out: list[Disagreement]) -> None:
    logged = torch_version(rank) or ""
    major = ".".join(logged.split(".")[:2])
    for said in set(re.findall(r"\btorch (\d+\.\d+)\b", text)):
        if major and said != major:
            out.append(
                Disagreement(
                    "note names another torch version", f"{where}: torch {said}, log {logged}"
                )
            )


def _frame_pages(
    program: Program,
    truth: Truth,
    plan: Any,
    settings: PageSettings,
    by_fn: dict[str, list[Any]],
    out: list[Disagreement],
) -> None:
    """Each top-level function's frame pages: a raised compile never said to run eagerly,
    an eager one never said to be raised, and no sentence claims what the run contradicts."""
    for fn_name, compiles in by_fn.items():
        outcomes = iter(truth.failed.get(fn_name, []))
        for c in compiles:
            frame = plan.frame_for(c)
            if frame is None:
                continue
            page = frame_page(plan, frame, settings)
            text = page_text(page.blocks)
            _version_notes(frame.rank, text, c.label, out)
            if failure_outcome(c) is None:
                continue
            want = next(outcomes, None)
            if want is None:
                continue
            status = next((b for b in page.blocks if isinstance(b, Paragraph)), None)
            said = inline_text(status.content) if status is not None else ""
            for sentence in _sentences(said):
                low = sentence.lower()
                if want.startswith("raised") and re.search(
                    r"\b(ran|runs|run) (it )?eagerly\b", low
                ):
                    if "fullgraph" not in low and "unless" not in low and " or " not in low:
                        out.append(
                            Disagreement(
                                "raised compile's page says it ran eagerly",
                                f"{fn_name} {c.label} ({want}): {sentence[:200]!r}",
                            )
                        )
                if want == "eager" and re.search(r"\braised to the program\b|\bit raised\b", low):
                    if "fullgraph" not in low and "unless" not in low and " or " not in low:
                        out.append(
                            Disagreement(
                                "eager compile's page says it raised",
                                f"{fn_name} {c.label}: {sentence[:200]!r}",
                            )
                        )


def _regions(
    program: Program,
    plan: Any,
    settings: PageSettings,
    by_fn: dict[str, list[Any]],
    out: list[Disagreement],
) -> None:
    """A nested compile region the function calls N times: each version's frame page lists
    one region of the user's graph called N times, reused N - 1 times."""
    planted = {
        p["function"]: int(p["region_calls"])
        for p in program.planted.values()
        if p.get("region_calls")
    }
    for fn_name, uses in planted.items():
        for c in by_fn.get(fn_name, []):
            if failure_outcome(c) is not None or not c.artifacts_named("dynamo_output_graph"):
                continue  # no graph made
            frame = plan.frame_for(c)
            page = frame_page(plan, frame, settings) if frame is not None else None
            rows = [
                [inline_text(cell) for cell in row]
                for b in _walk(page.blocks if page is not None else [])
                if isinstance(b, Table) and "Region" in [inline_text(h) for h in b.header]
                for row in b.rows
                if inline_text(row[0]) == "dynamo_output_graph"
            ]
            want = [str(uses), str(uses - 1)]
            if [r[2:4] for r in rows] != [want]:
                out.append(
                    Disagreement(
                        "region calls misstated",
                        f"{fn_name} {c.label}: rows {rows}, the program calls one region "
                        f"{uses} times",
                    )
                )


def _graph_breaks(program: Program, t: Any, rank: Any, out: list[Disagreement]) -> None:
    """Graph breaks published at the lines the generator planted them, and nowhere else."""
    planted_lines = {line for _, _, line in program.breaks}
    lines = program.text.splitlines()
    published: set[int] = set()
    for c in rank.compiles:
        for f in c.failures:
            if f.kind != "graph_break":
                continue
            loc = f.user_location or ""
            match = re.search(r"program\.py:(\d+)", loc)
            if match:
                published.add(int(match.group(1)))
    invented = {
        n
        for n in published
        if n not in planted_lines
        and BREAK_MARK not in lines[n - 1]
        and MAY_BREAK not in lines[n - 1]
    }
    # a data-dependent jump or a call torch cannot trace inside the harness' lambda is the
    # program's own break: only lines of the program's functions count
    invented = {n for n in invented if not lines[n - 1].lstrip().startswith("_call(")}
    if invented:
        out.append(
            Disagreement(
                "graph break published where none was planted",
                ", ".join(f"line {n}: {lines[n - 1].strip()!r}" for n in sorted(invented)),
            )
        )


def recheck(kept: Path, full_pages: bool = True) -> Result:
    """Compare a kept program again (``program.py``, ``planted.json``, ``calls.jsonl`` and
    its ``trace``), without torch: a fix is checked on the cases the campaign kept."""
    data = json.loads((kept / "planted.json").read_text())
    program = Program(
        data["seed"],
        data["index"],
        (kept / "program.py").read_text(),
        data["situations"],
        {int(k): v for k, v in data["planted"].items()},
        [tuple(b) for b in data["breaks"]],
        data["config"],
        data["resets"],
    )
    calls = [json.loads(line) for line in (kept / "calls.jsonl").read_text().splitlines()]
    run = Run(calls, list(program.resets), 0, "", kept / "trace")
    return _safe_compare(program, run, full_pages)


def run_and_compare(program: Program, keep: Path | None = None, full_pages: bool = True) -> Result:
    """One program, in a temp folder (or ``keep``/<seed>-<index> when given)."""
    if keep is not None:
        workdir = keep / f"{program.seed}-{program.index}"
        run = run_program(program, workdir)
        return _safe_compare(program, run, full_pages)
    with tempfile.TemporaryDirectory(prefix="torchtrace-program-") as tmp:
        run = run_program(program, Path(tmp))
        return _safe_compare(program, run, full_pages)


def _safe_compare(program: Program, run: Run, full_pages: bool) -> Result:
    try:
        return compare(program, run, full_pages)
    except Exception as e:  # our reader broke on a real log: a finding of its own
        import traceback

        result = Result(program, run)
        result.disagreements.append(
            Disagreement(
                "reader raised", f"{type(e).__name__}: {e}; {traceback.format_exc()[-600:]}"
            )
        )
        return result
