"""Runtime profiles are input like logs (issue 51, points 5 and 1): read as a stream in
bounded memory, refused (one located warning, never a failed build) when compressed past
a ratio or shaped past a limit, never read through a link out of the folder the user
named, and matched to one rank each: two profiles of one process id (two machines) are
shown for neither, never as both ranks' figures.

Every profile here is a real file: the captured runs' own profiles, rewritten, and
hostile ones written as torch writes its Chrome trace (gzip, JSON).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable
from pathlib import Path

import pytest
from sphinx.util.console import strip_colors

from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.pages.runtime import profiles_of
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace.folders import LEADS_OUT, NOT_A_FILE
from sphinx_torchtrace.trace.inputs.loader import load_trace
from sphinx_torchtrace.trace.runtime import (
    MAX_DEPTH,
    MAX_EVENT_BYTES,
    MAX_EXPANSION,
    MAX_NAME,
    MAX_PROFILES,
    MAX_REGIONS,
    MEMORY_BOUND,
    WINDOW,
    ProfileError,
    RuntimeProfile,
    profile_lines,
    read_profile,
    read_profiles,
)

from .conftest import DATA, SIMPLE_LOG, SiteMaker, copy_testroot, warnings_of

REPO = Path(__file__).resolve().parents[1]
CAPTURE = DATA / "captured" / "runtime_training"
RANKS = DATA / "captured" / "runtime_ranks"
#: The capture's compiled run's profile (its eager run's is the larger one).
(COMPILED,) = [p for p in (CAPTURE / "runtime").glob("*.json.gz") if p.stat().st_size < 10**6]
REGION = "Torch-Compiled Region: "


def _event(name: str, ts: float, dur: float, tid: object = 1, pid: object = 1) -> str:
    return json.dumps({"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid})


def _write(path: Path, events: Iterable[str]) -> Path:
    """A Chrome trace of ``events`` (JSON texts), one a line, as torch writes it."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        first = True
        for e in events:
            f.write(("" if first else ",\n") + e)
            first = False
        f.write("\n]}\n")
    return path


def bomb(path: Path) -> Path:
    """A gzip file of about 1 MB that expands 300 times: 250 MB of one op event repeated."""
    event = _event("aten::add", 1, 1) + ","
    member = gzip.compress((event * (1_000_000 // len(event))).encode(), 9)
    with open(path, "wb") as f:
        f.write(gzip.compress(b'{"traceEvents": ['))
        for _ in range(240):
            f.write(member)
        f.write(gzip.compress((_event(REGION + "0/0", 0, 5) + "]}").encode()))
    return path


def many_calls(path: Path, calls: int) -> Path:
    """A profile of ``calls`` calls of one compiled region, 1 µs each."""
    events = (_event(REGION + "0/0", 2 * i, 1) for i in range(calls))
    return _write(path, events)


def _peak(path: Path) -> dict[str, object]:
    """Read ``path`` in a fresh interpreter: what it read, and its peak memory (resident
    set) above the interpreter's own once the reader is imported."""
    code = textwrap.dedent(
        """
        import json, resource, sys
        from pathlib import Path
        from sphinx_torchtrace.trace.runtime import ProfileError, read_profile
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            p = read_profile(Path(sys.argv[1]))
            said = {"calls": sum(r.calls for r in p.regions.values()),
                    "median": p.regions["0/0"].median_us if p.regions else None}
        except ProfileError as e:
            said = {"refused": str(e)}
        unit = 1 if sys.platform == "darwin" else 1024  # bytes there, kilobytes here
        said["peak"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) * unit
        print(json.dumps(said))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


# -- bounded memory ---------------------------------------------------------------------------


def test_a_profile_made_to_expand_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """Under a megabyte of gzip that would be 250 MB of events (reading it whole peaked
    at 1.6 GB): refused after a few megabytes, saying why."""
    path = bomb(tmp_path / "profile-1.json.gz")
    assert path.stat().st_size < 1_000_000
    said = _peak(path)
    assert f"expands more than {MAX_EXPANSION} times" in str(said.get("refused")), said
    assert int(said["peak"]) < 32 << 20, said  # type: ignore[call-overload]


def test_many_region_calls_are_read_in_bounded_memory(tmp_path: Path) -> None:
    """250,000 calls of one region (reading them whole held every event: about 200 MB):
    each call added to its region as it comes, the figures exact."""
    said = _peak(many_calls(tmp_path / "profile-1.json.gz", 250_000))
    assert said.get("calls") == 250_000 and said.get("median") == 1.0, said
    assert int(said["peak"]) < MEMORY_BOUND, said  # type: ignore[call-overload]


def _figures(p: RuntimeProfile) -> dict[str, object]:
    regions = {
        cid: (r.calls, r.total_us, r.own_us, r.median_us, r.first_call_us, r.later_median_us)
        for cid, r in p.regions.items()
    }
    return {
        "regions": regions,
        "times": (p.profiled_us, p.compiled_us, p.compiling_us, p.compiles),
    }


def test_a_profile_on_one_line_reads_and_downloads_as_torch_wrote_it(tmp_path: Path) -> None:
    """The capture's profile written on one line (8 MB): the same figures, read across
    chunk boundaries, and its download is broken into lines of bounded length that are
    the same JSON."""
    data = json.load(gzip.open(COMPILED))
    one_line = tmp_path / "profile-1.json"
    one_line.write_text(json.dumps(data), encoding="utf-8")
    assert len(one_line.read_text("utf-8").splitlines()) == 1
    original, copy = read_profile(COMPILED), read_profile(one_line)
    assert _figures(copy) == _figures(original)
    lines = list(profile_lines(copy, lambda text: text))
    assert len(lines) > 3 and max(map(len, lines)) <= 2 * MAX_EVENT_BYTES + 2
    assert json.loads("".join(lines))["traceEvents"] == data["traceEvents"]


def test_events_a_little_out_of_order_nest_as_in_order(tmp_path: Path) -> None:
    """torch writes a thread's events in order; a producer that does not, within the
    window, gets the same figures."""
    data = json.load(gzip.open(COMPILED))
    events = data["traceEvents"]
    rng = random.Random(51)
    shuffled = []
    for at in range(0, len(events), 200):
        block = events[at : at + 200]
        rng.shuffle(block)
        shuffled += block
    assert shuffled != events
    path = _write(tmp_path / "profile-1.json.gz", map(json.dumps, shuffled))
    assert _figures(read_profile(path)) == _figures(read_profile(COMPILED))


def _nested(depth: int) -> list[str]:
    return [_event(REGION + "0/0", i, 2 * (depth - i)) for i in range(depth)]


HOSTILE = {
    "nested too deep": (_nested(MAX_DEPTH + 1), f"nested more than {MAX_DEPTH} deep"),
    "too many compile ids": (
        [_event(f"{REGION}{i}/0", 2 * i, 1) for i in range(MAX_REGIONS + 1)],
        f"more than {MAX_REGIONS} compiled regions",
    ),
    "out of order past the window": (
        [_event(REGION + "0/0", 2 * i, 1) for i in reversed(range(WINDOW + 2))],
        "out of order",
    ),
    "an infinite time": (['{"ph": "X", "name": "dynamo", "ts": 1, "dur": Infinity}'], "finite"),
    "a time past any float": ([_event("dynamo", 1, 10**400)], "not a finite number"),
    "a pid that is a list": ([_event(REGION + "0/0", 1, 1, pid=[1])], "pid or tid"),
    "a region named in 1,000 characters": (
        [_event(REGION + "0/" + "0" * 1000, 1, 1)],
        f"named in more than {MAX_NAME} characters",
    ),
    "regions open on many threads at once": (
        [
            _event(REGION + "0/0", 1 + n, 10 - n, tid=t)
            for t in range(MAX_DEPTH // 2 + 1)
            for n in (0, 1)
        ],
        f"nested more than {MAX_DEPTH} deep",
    ),
    "an event of 2 MB": (  # of random text: it does not compress much
        [
            '{"ph": "X", "name": "x", "args": {"a": "'
            + random.Random(51).randbytes(1 << 20).hex()
            + '"}}'
        ],
        f"an event of more than {MAX_EVENT_BYTES >> 20} MB",
    ),
    "a value nested 100,000 deep": (["[" * 100_000 + "]" * 100_000], "not a readable profile"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_profile_past_a_limit_is_refused_saying_why(tmp_path: Path, case: str) -> None:
    events, why = HOSTILE[case]
    path = _write(tmp_path / "profile-1.json.gz", events)
    with pytest.raises(ProfileError, match=re.escape(why)):
        read_profile(path)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"traceEvents": [' + _event("dynamo", 1, 1) + "]} and more", "text after the JSON"),
        ('{"traceEvents": [' + _event("dynamo", 1, 1) + ",", "not a readable profile"),
        ('{"traceEvents": [], "traceEvents": []}', "traceEvents twice"),
        ('{"traceEvents": {}}', "no traceEvents"),
        ("[]", "no traceEvents"),
    ],
)
def test_a_profile_that_is_not_one_chrome_trace_is_refused(
    tmp_path: Path, text: str, why: str
) -> None:
    path = tmp_path / "profile-1.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ProfileError, match=re.escape(why)):
        read_profile(path)


def test_a_folder_s_profiles_are_read_up_to_a_number(tmp_path: Path) -> None:
    """Each profile is read in bounded memory; so are all of a folder's: past
    MAX_PROFILES files, the rest are counted in a warning, not read."""
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    for n in range(MAX_PROFILES + 5):
        _write(runtime / f"profile-{n:05}.json", [_event(REGION + "0/0", 1, 1)])
    profiles, problems = read_profiles(runtime)
    assert len(profiles) == MAX_PROFILES
    assert problems == [
        f"5 more profiles not read: a folder's profiles are read up to {MAX_PROFILES} files "
        "or 100000 compile ids in all"
    ]


# -- a build ----------------------------------------------------------------------------------


def test_a_build_warns_at_each_refused_profile_and_reads_none_of_them(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """Beside a log, in ``runtime/``: a gzip bomb, a link to a profile outside the folder,
    a FIFO, and a profile whose meta file is a link out.  The build warns once for each,
    located at the folder, and shows nothing of any of them."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "profile-7.json.gz"
    shutil.copy(COMPILED, secret)
    (outside / "meta.json").write_text('{"pid": 7, "mode": "compiled"}', encoding="utf-8")
    srcdir = copy_testroot("simple", tmp_path / "site")
    runtime = srcdir / "traces" / "runtime"
    runtime.mkdir(parents=True)
    shutil.copy(SIMPLE_LOG, runtime.parent / SIMPLE_LOG.name)
    bomb(runtime / "profile-1.json.gz")
    (runtime / "profile-2.json.gz").symlink_to(secret)
    shutil.copy(COMPILED, runtime / "profile-4.json.gz")
    (runtime / "profile-4.meta.json").symlink_to(outside / "meta.json")
    expected = {
        "profile-1.json.gz": "expands more than",
        "profile-2.json.gz": LEADS_OUT,
        "profile-4.meta.json": LEADS_OUT,
    }
    if hasattr(os, "mkfifo"):
        os.mkfifo(runtime / "profile-3.json.gz")
        expected["profile-3.json.gz"] = NOT_A_FILE
    app = make_site(
        "simple",
        srcdir=srcdir,
        pages={"index.rst": "Run\n===\n\n.. torchtrace:: traces\n   :name: run\n"},
    )
    warnings = strip_colors(warnings_of(app)).splitlines()
    said = [line for line in warnings if "[torchtrace.runtime]" in line]
    assert len(said) == len(expected), warnings
    for name, why in expected.items():
        (line,) = [w for w in said if f"WARNING: {name}: " in w]
        assert line.startswith("traces/runtime:: ") and why in line, line
    out = Path(app.outdir)
    assert not list(out.rglob("profile-*")), "no profile is published"
    assert sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) < 50 << 20


def test_a_runtime_folder_that_leads_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    shutil.copytree(CAPTURE / "runtime", outside)
    folder = tmp_path / "t"
    folder.mkdir()
    (log,) = CAPTURE.glob("*.log")
    shutil.copy(log, folder / log.name)
    (folder / "runtime").symlink_to(outside, target_is_directory=True)
    trace = load_trace(folder)
    assert not trace.runtime
    (said,) = [d for d in trace.diagnostics if d.subtype == "runtime"]
    assert said.message == f"runtime: not read: {LEADS_OUT}"


# -- one rank's figures -----------------------------------------------------------------------


def _two_machines(dest: Path, ranks: tuple[str | None, str | None]) -> Path:
    """The 2-rank capture as if its ranks ran on two machines whose processes had one id:
    rank 1's log and profile given rank 0's process id, both profiles in one folder
    (``profile-13999.json.gz`` and ``profile-13999-b.json.gz``), their metas naming
    ``ranks``."""
    shutil.copytree(RANKS, dest)
    (log,) = dest.glob("*rank_1_*.log")
    text = re.sub(r"^(V\d+ [\d:.]+) 14000 ", r"\1 13999 ", log.read_text("utf-8"), flags=re.M)
    log.write_text(text, encoding="utf-8")
    runtime = dest / "runtime"
    (runtime / "profile-14000.json.gz").rename(runtime / "profile-13999-b.json.gz")
    (runtime / "profile-14000.meta.json").rename(runtime / "profile-13999-b.meta.json")
    for stem, rank in zip(("profile-13999", "profile-13999-b"), ranks, strict=True):
        meta_path = runtime / f"{stem}.meta.json"
        meta = json.loads(meta_path.read_text("utf-8"))
        meta.update(pid=13999, rank=rank)
        meta_path.write_text(json.dumps(meta), encoding="utf-8")
    return dest


def test_two_machines_profiles_of_one_pid_are_each_their_rank_s(tmp_path: Path) -> None:
    trace = load_trace(_two_machines(tmp_path / "t", ("0", "1")))
    assert [r.pids for r in trace.ranks] == [[13999], [13999]]
    plan = plan_trace("t", trace, "torchtrace")
    mine = {r.rank: profiles_of(plan, r)[0] for r in trace.ranks}
    assert {n: p.path if p else None for n, p in mine.items()} == {
        0: "profile-13999.json.gz",
        1: "profile-13999-b.json.gz",
    }
    assert mine[0].compiled_us != mine[1].compiled_us  # type: ignore[union-attr]
    assert not [d for d in trace.diagnostics if d.subtype == "runtime"]


def test_profiles_of_one_pid_naming_no_rank_are_shown_for_neither(tmp_path: Path) -> None:
    """Which is rank 0's cannot be told: neither rank shows either profile's figures,
    one warning names both, and each rank's section says why it has none."""
    trace = load_trace(_two_machines(tmp_path / "t", (None, None)))
    plan = plan_trace("t", trace, "torchtrace")
    assert [profiles_of(plan, r) for r in trace.ranks] == [(None, None), (None, None)]
    (said,) = [d for d in trace.diagnostics if d.subtype == "runtime"]
    assert "profile-13999.json.gz" in said.message and "profile-13999-b.json.gz" in said.message
    assert "share process id 13999" in said.message
    text = repr(overview_page(plan, PageSettings()))
    assert "More than one runtime profile claims this rank's process" in text
    assert "No runtime profile of this rank's process" not in text
