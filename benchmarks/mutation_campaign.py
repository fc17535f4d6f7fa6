"""Mutated real logs through the model, the plan, every page view, then real Sphinx builds.

    python benchmarks/mutation_campaign.py [--mutants 10000] [--builds 200] [--seed 0]
    nox -s mutation -- --mutants 500 --builds 10      # a quick run

Every bundled log under 5 MB (``tests/data``; ``--max-seed-kb``) is a seed.  Each mutant applies
one to three mutations to a seed: byte flips, line drops, duplicates and swaps,
a cut at a random byte, or a JSON value of a record (in its envelope or in a
JSON payload) swapped for a hostile one: nesting thousands of levels deep, a
400-digit integer, ``Infinity``/``NaN``/``1e999``/``5e-324``, lone surrogates,
a list or an object where a scalar was, a string of a megabyte, markup.  Half
the mutants get their payload md5s recomputed (so the reader analyses the
payload instead of only flagging it), one in ten is gzipped, and one in ten is a
trace directory (a bundled multi-rank folder with one or two logs mutated).

Every input kind is mutated: besides trace logs and folders, TORCH_LOGS text logs
(the bundled ones are seeds too, read as text logs), TORCH_COMPILE_DEBUG folders
(a bundled folder with one to three files mutated, JSON files by value too) and
pairs of runs for ``torchtrace-diff`` (a bundled pair, one side mutated).

Each mutant goes through its reader, its site plan and every page view (blocks, no
Sphinx; for a pair: the comparison, its regressions and every page); any
exception is a finding.  Then ``--builds`` of them are
built by Sphinx (text and html builders in turn, in process), where an exception or a warning
that is not a ``torchtrace.*`` one is a finding.  The report: mutants tried,
mutants per kind, distinct exceptions (type and place, with the first traceback of
each), the slowest case, peak memory (the process's maximum RSS, and tracemalloc's peak
over a sample of one mutant in 25).  Exit status 1 if anything was found.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sphinx_torchtrace.site.diff_plan import plan_diff  # noqa: E402
from sphinx_torchtrace.site.pages import build_page  # noqa: E402
from sphinx_torchtrace.site.pages.debug_dir import build_debug_page  # noqa: E402
from sphinx_torchtrace.site.pages.diff import comparison_blocks, diff_frame_page  # noqa: E402
from sphinx_torchtrace.site.plan import PageSettings, plan_debug_dir, plan_trace  # noqa: E402
from sphinx_torchtrace.trace import load_trace  # noqa: E402
from sphinx_torchtrace.trace.comparing.diff import diff_traces  # noqa: E402
from sphinx_torchtrace.trace.comparing.regressions import regressions  # noqa: E402
from sphinx_torchtrace.trace.inputs.debug_dir import load_debug_dir  # noqa: E402
from sphinx_torchtrace.trace.inputs.formats import DEBUG_DIR, TORCH_LOGS, detect_format  # noqa: E402
from sphinx_torchtrace.trace.inputs.text_log import load_text_log  # noqa: E402

DATA = ROOT / "tests" / "data"
#: Bundled TORCH_COMPILE_DEBUG folders and pairs of runs: seeds of those kinds.
DEBUG_SEEDS = [
    DATA / "captured" / "debug_dir" / "inference" / "torch_compile_debug",
    DATA / "captured" / "debug_dir" / "training" / "torch_compile_debug",
    DATA / "spyre" / "fma",
]
PAIR_SEEDS = sorted(p for p in (DATA / "captured" / "pairs").iterdir() if p.is_dir())
#: How often each kind of mutant is made (a trace directory is one in ten trace mutants).
KIND_WEIGHTS = {"trace": 0.6, "text log": 0.15, "debug folder": 0.12, "diff pair": 0.13}
#: Seeds are the bundled logs under this size (issue 9's bound: a log under 5 MB).
MAX_SEED_BYTES = 5_000_000
#: Seconds one mutant may take (model and pages; a Sphinx build gets 10x): a hang is a finding.
TIME_LIMIT = 60

#: The slowest mutant is kept here, to look at after the campaign.
SLOWEST = Path(tempfile.gettempdir()) / "torchtrace-slowest-mutant.log"

_PREFIX = re.compile(rb"^(?:\[rank\d+\]:)?[VIWEC]\d{4} [^\]\n]{0,200}\] ")
_MARK = "\x00HOSTILE\x00"

#: Raw JSON texts put where a value was.
HOSTILE_VALUES: list[tuple[str, Callable[[random.Random], str]]] = [
    ("deep list", lambda r: "[" * r.choice((200, 1100, 5000))),  # closed by _closed
    ("deep object", lambda r: '{"a":' * r.choice((200, 1100, 5000)) + "1"),
    ("huge int", lambda r: "9" * r.choice((20, 310, 400, 5000))),
    ("negative huge int", lambda r: "-" + "9" * r.choice((20, 400))),
    ("inf", lambda r: r.choice(("Infinity", "-Infinity", "NaN", "1e999", "-1e999"))),
    ("tiny float", lambda r: r.choice(("5e-324", "1e-310", "-0.0", "1e308", "-1e308"))),
    ("surrogates", lambda r: r.choice(('"\\ud800"', '"a\\udfff b"', '"\\ud800\\ud800x"'))),
    ("list for scalar", lambda r: r.choice(("[]", "[1, 2]", '["a", null]', "[[[]]]"))),
    ("object for scalar", lambda r: r.choice(("{}", '{"a": 1}', '{"": {"": []}}'))),
    ("null", lambda r: "null"),
    ("bool", lambda r: r.choice(("true", "false"))),
    ("long string", lambda r: json.dumps("x/" * r.choice((5_000, 500_000)))),
    ("markup", lambda r: json.dumps(r.choice(("<script>x</script>", ".. raw:: html", "`x`_")))),
    ("control chars", lambda r: json.dumps("\x00\x1b[31m\r\n\u2028\u202e")),
    ("number as string", lambda r: r.choice(('"12"', '"1e999"', '"0/0"', '"[0/0]"'))),
    ("negative", lambda r: r.choice(("-1", "-5", "0", "-0"))),
]


def _closed(kind: str, text: str) -> str:
    """Close the deep nestings, so the text is valid JSON (only too deep)."""
    if kind == "deep list":
        return text + "]" * text.count("[")
    if kind == "deep object":
        return text + "}" * text.count("{")
    return text


# -- mutations --------------------------------------------------------------------------------


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def flip_bytes(data: bytes, r: random.Random) -> tuple[bytes, str]:
    out = bytearray(data)
    n = r.choice((1, 3, 20))
    for _ in range(n):
        if out:
            out[r.randrange(len(out))] = r.choice((r.randrange(256), 0x0A, 0x09, 0x22, 0x7B))
    return bytes(out), f"flip {n} bytes"


def drop_lines(data: bytes, r: random.Random) -> tuple[bytes, str]:
    lines = _lines(data)
    n = r.choice((1, 5, 50))
    for _ in range(min(n, len(lines) - 1)):
        del lines[r.randrange(len(lines))]
    return b"\n".join(lines), f"drop {n} lines"


def dupe_lines(data: bytes, r: random.Random) -> tuple[bytes, str]:
    lines = _lines(data)
    n = r.choice((1, 5, 50))
    for _ in range(n):
        i = r.randrange(len(lines))
        lines.insert(r.randrange(len(lines) + 1), lines[i])
    return b"\n".join(lines), f"duplicate {n} lines"


def swap_lines(data: bytes, r: random.Random) -> tuple[bytes, str]:
    lines = _lines(data)
    n = r.choice((1, 10))
    for _ in range(n):
        i, j = r.randrange(len(lines)), r.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines), f"swap {n} line pairs"


def cut(data: bytes, r: random.Random) -> tuple[bytes, str]:
    at = r.randrange(len(data) + 1)
    return data[:at], f"cut at byte {at}"


def swap_json_value(data: bytes, r: random.Random) -> tuple[bytes, str]:
    """A value of one record's envelope (or of its JSON payload) replaced by a hostile one."""
    lines = _lines(data)
    heads = [i for i, line in enumerate(lines) if _PREFIX.match(line)]
    if not heads:
        return data, "no record to swap a value in"
    i = r.choice(heads)
    match = _PREFIX.match(lines[i])
    assert match is not None
    prefix, body = lines[i][: match.end()], lines[i][match.end() :]
    payload_at = [j for j in range(i + 1, min(len(lines), i + 2000)) if lines[j][:1] == b"\t"]
    try:
        envelope = json.loads(body)
    except (ValueError, RecursionError):  # an earlier mutation made it so
        return data, "record line did not parse"
    target, where = envelope, "envelope"
    if payload_at and r.random() < 0.4:  # the payload, if it is JSON
        end = payload_at[0]
        while end + 1 < len(lines) and lines[end + 1][:1] == b"\t":
            end += 1
        payload = b"\n".join(line[1:] for line in lines[payload_at[0] : end + 1])
        try:
            target, where = json.loads(payload), "payload"
        except (ValueError, RecursionError):
            target = envelope
    kind, make = r.choice(HOSTILE_VALUES)
    raw = _closed(kind, make(r))
    path = _place(target, r)
    if path is None:
        return data, "no value to swap"
    described = f"{where}{''.join(f'[{p!r}]' for p in path)} := {kind}"
    try:
        text = _dumps_with(target, path, raw)
    except (ValueError, RecursionError):
        return data, "value not writable"
    if where == "envelope":
        lines[i] = prefix + text.encode("utf-8", "surrogatepass")
    else:
        first, last = payload_at[0], end
        new = [b"\t" + line for line in text.encode("utf-8", "surrogatepass").split(b"\n")]
        lines[first : last + 1] = new
    return b"\n".join(lines), described


def _place(value: Any, r: random.Random) -> list[Any] | None:
    """A random path to a value inside ``value`` (the root excluded)."""
    path: list[Any] = []
    node = value
    while isinstance(node, (dict, list)) and node:
        key = r.choice(list(node)) if isinstance(node, dict) else r.randrange(len(node))
        path.append(key)
        node = node[key]
        if r.random() < 0.35:
            break
    return path or None


def _dumps_with(value: Any, path: list[Any], raw: str) -> str:
    node = value
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = _MARK
    return json.dumps(value).replace(json.dumps(_MARK), raw, 1)


def splice(data: bytes, r: random.Random) -> tuple[bytes, str]:
    """Lines of another seed (records of another program) put in at a random place."""
    other = _lines(r.choice(_SEEDS).read_bytes()) if _SEEDS else []
    if not other or other[0][:2] == b"\x1f\x8b":
        return data, "no seed to splice"
    start = r.randrange(len(other))
    chunk = other[start : start + r.choice((1, 10, 200))]
    lines = _lines(data)
    at = r.randrange(len(lines) + 1)
    lines[at:at] = chunk
    return b"\n".join(lines), f"splice {len(chunk)} lines of another log"


_SEEDS: list[Path] = []

MUTATIONS: list[Callable[[bytes, random.Random], tuple[bytes, str]]] = [
    splice,
    flip_bytes,
    drop_lines,
    dupe_lines,
    swap_lines,
    cut,
    swap_json_value,
    swap_json_value,
    swap_json_value,
]


def fix_md5s(data: bytes) -> bytes:
    """Recompute every ``has_payload`` md5, the way torch computes it."""
    lines = _lines(data)
    out: list[bytes] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        while j < len(lines) and lines[j][:1] == b"\t":
            j += 1
        match = _PREFIX.match(line)
        if match and j > i + 1 and b'"has_payload"' in line:
            payload = b"\n".join(p[1:] for p in lines[i + 1 : j])
            digest = hashlib.md5(payload).hexdigest().encode()
            line = re.sub(
                rb'"has_payload": ?"[0-9a-f]*"', b'"has_payload": "' + digest + b'"', line
            )
        out.append(line)
        out.extend(lines[i + 1 : j])
        i = j
    return b"\n".join(out)


# -- running ----------------------------------------------------------------------------------


class Timeout(Exception):
    """A mutant took longer than the time limit."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Timeout(f"over the time limit ({TIME_LIMIT} s a mutant, {TIME_LIMIT * 10} s a build)")


@dataclass
class Report:
    tried: int = 0
    kinds: dict[str, int] = field(default_factory=dict)  # mutants per input kind
    built: int = 0
    findings: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # key: (tb, case, n)
    slowest: tuple[float, str] = (0.0, "")
    slowest_build: tuple[float, str] = (0.0, "")
    traced_peak: tuple[int, str] = (0, "")
    diagnostics: int = 0
    pages: int = 0

    def found(self, err: BaseException | str, case: str, tb: str) -> None:
        if isinstance(err, BaseException):
            frames = traceback.extract_tb(err.__traceback__)
            ours = [f for f in frames if "sphinx_torchtrace" in f.filename] or frames
            where = f"{Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else "?"
            key = f"{type(err).__name__} at {where}"
        else:
            key = err
        old = self.findings.get(key)
        self.findings[key] = (old[0], old[1], old[2] + 1) if old else (tb, case, 1)


def model_and_pages(path: Path) -> tuple[int, int]:
    """The whole path without Sphinx, for the input's kind: (diagnostics, pages)."""
    if path.is_dir() and (path / "baseline").is_dir():
        return _diff_pages(path)
    kind = detect_format(path)
    if kind == DEBUG_DIR:
        debug = load_debug_dir(path)
        dplan = plan_debug_dir("run", debug, "torchtrace")
        for no_source in (False, True):
            for docname in dplan.docnames:
                build_debug_page(dplan, docname, PageSettings(no_source=no_source))
        return len(debug.diagnostics), len(dplan.docnames)
    trace = load_text_log(path) if kind == TORCH_LOGS else load_trace(path)
    plan = plan_trace("run", trace, "torchtrace")
    for no_source in (False, True) if len(plan.docnames) < 40 else (False,):
        settings = PageSettings(no_source=no_source)
        for docname in plan.docnames:
            build_page(plan, docname, settings)
    return len(trace.diagnostics), len(plan.docnames)


def _diff_pages(pair: Path) -> tuple[int, int]:
    """A comparison of the pair's two runs, its regressions and every page of it."""
    old, new = load_trace(pair / "baseline"), load_trace(pair / "new")
    diff = diff_traces(old, new)
    found = regressions(diff)
    for no_source in (False, True):
        plan = plan_diff("run", diff, "torchtrace", no_source=no_source)
        comparison_blocks(plan, found)
        for f in plan.frames:
            if f.docname is not None:
                diff_frame_page(plan, f)
    pages = sum(f.docname is not None for f in plan.frames)
    return len(old.diagnostics) + len(new.diagnostics), pages


def swap_json_file_value(data: bytes, r: random.Random) -> tuple[bytes, str]:
    """A value of a JSON file (a debug folder's mappings, an sdsc) replaced by a hostile one."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return data, "file is not JSON"
    kind, make = r.choice(HOSTILE_VALUES)
    path = _place(value, r)
    if path is None:
        return data, "no value to swap"
    try:
        text = _dumps_with(value, path, _closed(kind, make(r)))
    except (ValueError, RecursionError):
        return data, "value not writable"
    where = "".join(f"[{p!r}]" for p in path)
    return text.encode("utf-8", "surrogatepass"), f"json{where} := {kind}"


def mutate(data: bytes, r: random.Random) -> tuple[bytes, list[str]]:
    """One to three mutations, then (half the time) every payload md5 made right again."""
    steps = []
    for _ in range(r.choice((1, 1, 2, 3))):
        data, step = r.choice(MUTATIONS)(data, r)
        steps.append(step)
    if r.random() < 0.5:
        data = fix_md5s(data)
        steps.append("md5s fixed")
    return data, steps


def rank_dirs(seeds: list[Path]) -> list[Path]:
    """Seed folders of several rank logs: a mutant of one is a trace directory."""
    counts: dict[Path, int] = {}
    for seed in seeds:
        if "_rank_" in seed.name and seed.suffix == ".log":  # a directory mutant reads .log
            counts[seed.parent] = counts.get(seed.parent, 0) + 1
    return sorted(d for d, n in counts.items() if n > 1)


def mutant_kind(r: random.Random) -> str:
    return r.choices(list(KIND_WEIGHTS), weights=list(KIND_WEIGHTS.values()))[0]


def make_mutant(
    seeds: list[Path], r: random.Random, work: Path, n: int, kind: str = "trace"
) -> tuple[Path, str]:
    """A mutant of ``kind``: a mutated trace log, or (one in ten) a trace directory of rank
    logs, one or two mutated; a text log; a debug folder; a pair of runs."""
    if kind == "debug folder":
        return _debug_mutant(r.choice(DEBUG_SEEDS), r, work, n)
    if kind == "diff pair":
        return _pair_mutant(r.choice(PAIR_SEEDS), r, work, n)
    texts = [s for s in seeds if detect_format(s) == TORCH_LOGS]
    traces = [s for s in seeds if s not in texts]
    folders = rank_dirs(traces)
    if kind == "trace" and folders and r.random() < 0.1:
        return _directory_mutant(r.choice(folders), r, work, n)
    seed = r.choice(texts if kind == "text log" and texts else traces)
    data = seed.read_bytes()
    if seed.suffix == ".gz":
        data = gzip.decompress(data)
    data, steps = mutate(data, r)
    name = f"mutant-{n}.log"
    if r.random() < 0.1:
        data = gzip.compress(data, compresslevel=1)
        if r.random() < 0.3:
            data = data[: r.randrange(len(data) + 1)]
            steps.append("gzip cut")
        name += ".gz"
    path = work / name
    path.write_bytes(data)
    rel = seed.relative_to(DATA).as_posix()
    return path, f"#{n} {rel}: " + "; ".join(steps)


def _directory_mutant(folder: Path, r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    out = work / f"mutant-{n}"
    out.mkdir()
    logs = sorted(p for p in folder.iterdir() if p.is_file() and re.search(r"\.log$", p.name))
    chosen = set(r.sample(range(len(logs)), r.choice((1, 2)) if len(logs) > 1 else 1))
    steps = []
    for i, log in enumerate(logs):
        data = log.read_bytes()
        if i in chosen:
            data, done = mutate(data, r)
            steps.append(f"{log.name}: " + "; ".join(done))
        (out / log.name).write_bytes(data)
    rel = folder.relative_to(DATA).as_posix()
    return out, f"#{n} {rel}/ (directory): " + " | ".join(steps)


def _debug_mutant(folder: Path, r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    out = work / f"mutant-{n}"
    shutil.copytree(folder, out / folder.name, symlinks=True)
    files = sorted(p for p in (out / folder.name).rglob("*") if p.is_file())
    steps = []
    for f in r.sample(files, min(len(files), r.choice((1, 2, 3)))):
        data = f.read_bytes()
        if f.suffix == ".json" and r.random() < 0.6:
            data, step = swap_json_file_value(data, r)
        else:
            data, step = r.choice(MUTATIONS[1:6])(data, r)  # bytes and lines, not records
        f.write_bytes(data)
        steps.append(f"{f.relative_to(out).as_posix()}: {step}")
    rel = folder.relative_to(DATA).as_posix()
    return out / folder.name, f"#{n} {rel}/ (debug folder): " + " | ".join(steps)


def _pair_mutant(pair: Path, r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    out = work / f"mutant-{n}"
    shutil.copytree(pair, out)
    side = r.choice(("baseline", "new"))
    log = next((out / side).glob("*.log"))
    data, steps = mutate(log.read_bytes(), r)
    log.write_bytes(data)
    rel = pair.relative_to(DATA).as_posix()
    return out, f"#{n} {rel}/ (pair, {side} mutated): " + "; ".join(steps)


def sphinx_build(log: Path, work: Path, builder: str) -> tuple[str, BaseException | None]:
    """A real build of a page showing the log: (warnings, exception)."""
    from sphinx.testing.util import SphinxTestApp  # unregisters nodes and roles after

    src = work / "site"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir()
    if log.is_dir():
        shutil.copytree(log, src / log.name, symlinks=True)
    else:
        shutil.copy(log, src / log.name)
    # Sphinx 7.3 names a warning's type (what tells ours from others) only when asked
    (src / "conf.py").write_text(
        'extensions = ["sphinx_torchtrace"]\nshow_warning_types = True\n', encoding="utf-8"
    )
    directive = f".. torchtrace:: {log.name}\n   :name: run\n"
    if (log / "baseline").is_dir():  # a pair of runs
        directive = (
            f".. torchtrace-diff:: {log.name}/baseline {log.name}/new\n"
            "   :name: run\n   :no-regressions:\n"
        )
    (src / "index.rst").write_text(f"Mutant\n======\n\n{directive}", encoding="utf-8")
    warnings = io.StringIO()
    app = None
    try:
        app = SphinxTestApp(builder, srcdir=src, status=io.StringIO(), warning=warnings)
        app.build()
    except Exception as err:  # every exception is a finding
        return warnings.getvalue(), err
    finally:
        if app is not None:
            app.cleanup()
    return warnings.getvalue(), None


_FOREIGN = re.compile(r"WARNING: (?!.*\[torchtrace\.[a-z0-9_]+\]).*")


def run(args: argparse.Namespace, report: Report) -> None:
    """The campaign, adding to ``report`` as it goes (Ctrl-C stops it with a report so far)."""
    r = random.Random(args.seed)
    seeds = sorted(
        p
        for p in DATA.rglob("*")
        if p.is_file()
        and re.search(r"\.log(\.gz)?$", p.name)
        and 0 < p.stat().st_size < args.max_seed_kb * 1000
    )
    _SEEDS[:] = seeds
    print(f"{len(seeds)} seed logs under {args.max_seed_kb} KB in tests/data", flush=True)
    signal.signal(signal.SIGALRM, _alarm)
    build_at = set(r.sample(range(args.mutants), min(args.builds, args.mutants)))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="torchtrace-mutants-") as tmp:
        work = Path(tmp)
        for n in range(args.mutants):
            kind = mutant_kind(r)
            path, case = make_mutant(seeds, r, work, n, kind)
            report.kinds[kind] = report.kinds.get(kind, 0) + 1
            sample = n % 25 == 0
            if sample:
                tracemalloc.start()
            t = time.perf_counter()
            signal.alarm(TIME_LIMIT)
            try:
                diagnostics, pages = model_and_pages(path)
                report.diagnostics += diagnostics
                report.pages += pages
            except Exception as err:  # every exception is a finding
                report.found(err, case, traceback.format_exc())
            finally:
                signal.alarm(0)
            seconds = time.perf_counter() - t
            if sample:
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
                if peak > report.traced_peak[0]:
                    report.traced_peak = (peak, case)
            if seconds > report.slowest[0]:
                report.slowest = (seconds, case)
                if path.is_file():
                    shutil.copy(path, SLOWEST)
            report.tried += 1
            if n in build_at:
                t = time.perf_counter()
                signal.alarm(TIME_LIMIT * 10)
                failure: BaseException | None
                try:
                    builder = "html" if report.built % 2 else "text"
                    warnings, failure = sphinx_build(path, work, builder)
                except Timeout as timeout:
                    warnings, failure = "", timeout
                finally:
                    signal.alarm(0)
                seconds = time.perf_counter() - t
                report.built += 1
                if seconds > report.slowest_build[0]:
                    report.slowest_build = (seconds, case)
                if failure is not None:
                    report.found(failure, case, "".join(traceback.format_exception(failure)))
                for foreign in _FOREIGN.findall(warnings):
                    report.found(f"Sphinx warning: {foreign[:120]}", case, foreign)
            shutil.rmtree(work / f"mutant-{n}", ignore_errors=True)  # a folder's or a pair's
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            elif path.exists():
                path.unlink()
            if args.progress and (n + 1) % args.progress == 0:
                elapsed = time.perf_counter() - started
                print(
                    f"  {n + 1} mutants, {report.built} builds, {len(report.findings)} kinds "
                    f"of finding, {elapsed:.0f} s",
                    flush=True,
                )


def print_report(report: Report, seconds: float) -> None:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(
        f"mutants tried: {report.tried} (model + plan + every page view), "
        f"Sphinx builds (text, html): {report.built}, in {seconds:.0f} s"
    )
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(report.kinds.items()))
    print(f"mutants per kind: {kinds}")
    print(f"diagnostics given: {report.diagnostics}, pages rendered: {report.pages}")
    print(f"slowest mutant: {report.slowest[0]:.2f} s ({report.slowest[1]}; kept as {SLOWEST})")
    print(f"slowest build: {report.slowest_build[0]:.2f} s ({report.slowest_build[1]})")
    print(
        f"peak memory: max RSS {rss:.0f} MiB; tracemalloc peak of one mutant (1 in 25 "
        f"sampled) {report.traced_peak[0] / 2**20:.1f} MiB ({report.traced_peak[1]})"
    )
    print(f"distinct exceptions and foreign warnings: {len(report.findings)}")
    for key, (tb, case, count) in sorted(report.findings.items()):
        print(f"\n== {key}: {count} mutant(s); first: {case}\n{tb}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mutants", type=int, default=10_000)
    parser.add_argument("--builds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seed-kb", type=int, default=MAX_SEED_BYTES // 1000)
    parser.add_argument("--progress", type=int, default=500, help="a line every N mutants")
    args = parser.parse_args()
    started = time.perf_counter()
    report = Report()
    try:
        run(args, report)
    except KeyboardInterrupt:
        print(f"interrupted after {report.tried} mutants: the figures so far")
    print_report(report, time.perf_counter() - started)
    sys.exit(1 if report.findings else 0)


if __name__ == "__main__":
    main()
