"""What ran (issue 38): compiled regions' calls and time, from torch's own profile.

The capture ``tests/data/captured/runtime_training`` is a real program run by
``sphinx-torchtrace run --runtime --worth-it`` (``tests/capture/capture_runtime.sh``):
a fused pointwise chain that pays off, a small matmul that never does, a training step
with a graph break, hot and cold recompiles, a function called once.  The figures are
checked against the profile read here on its own, and on the pages a real build writes.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import jsonschema
import pytest

from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.pages.runtime import _compile_seconds, compiles_by_region, profiles_of
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace.inputs.loader import load_trace
from sphinx_torchtrace.trace.runtime import (
    BOOT_DIR,
    RuntimeProfile,
    parse_steps,
    profile_of,
    read_profile,
    worth_it,
)

from .conftest import DATA, SIMPLE_LOG

REPO = Path(__file__).resolve().parents[1]
CAPTURE = DATA / "captured" / "runtime_training"


def run(*args: str | Path, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), **env},
    )


@pytest.fixture(scope="module")
def trace():  # type: ignore[no-untyped-def]
    return load_trace(CAPTURE)


def _profiles(trace) -> tuple[RuntimeProfile, RuntimeProfile]:  # type: ignore[no-untyped-def]
    compiled, eager = profiles_of(plan_trace("t", trace, "torchtrace"), trace.ranks[0])
    assert compiled is not None and eager is not None
    return compiled, eager


def _regions_of(trace, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    """The regions of the compiles of function ``name``, in compile order."""
    rank = trace.ranks[0]
    return [
        k
        for k, c in compiles_by_region(rank).items()
        if c.metrics and c.metrics[0].data.get("co_name") == name
    ]


def _by_function(trace, name: str) -> str:  # type: ignore[no-untyped-def]
    (key,) = _regions_of(trace, name)
    return key


def test_figures_agree_with_the_profilers_own_trace(trace) -> None:  # type: ignore[no-untyped-def]
    """Calls and total time of every region as the Chrome trace has them, read here plainly."""
    compiled, _ = _profiles(trace)
    events = json.load(gzip.open(compiled.file))["traceEvents"]
    calls: dict[str, int] = defaultdict(int)
    total: dict[str, float] = defaultdict(float)
    for e in events:
        if e.get("ph") == "X" and e.get("name", "").startswith("Torch-Compiled Region: "):
            key = e["name"].split(": ", 1)[1]
            calls[key] += 1
            total[key] += e["dur"]
    assert calls and {k: r.calls for k, r in compiled.regions.items()} == dict(calls)
    for key, region in compiled.regions.items():
        assert region.total_us == pytest.approx(total[key])
        assert 0 <= region.own_us <= region.total_us + 1e-6
    parts = compiled.compiled_us + compiled.compiling_us + compiled.eager_us
    assert parts == pytest.approx(compiled.profiled_us)
    # what the program did: its loops' counts
    assert compiled.regions[_by_function(trace, "fused")].calls == 1500
    assert compiled.regions[_by_function(trace, "small_mm")].calls == 1500
    assert compiled.regions[_by_function(trace, "setup")].calls == 1
    scale = _regions_of(trace, "scale")
    assert [compiled.regions[k].calls for k in scale] == [1, 200, 1]  # cold, hot, cold


def test_worth_it_gives_the_clear_answers(trace) -> None:  # type: ignore[no-untyped-def]
    compiled, eager = _profiles(trace)
    rows = {w.compile_id: w for w in worth_it(compiled, eager, _compile_seconds(trace.ranks[0]))}
    fused, small = rows[_by_function(trace, "fused")], rows[_by_function(trace, "small_mm")]
    assert fused.eager_us is not None and fused.eager_us > 1.5 * fused.compiled_us
    assert fused.pays_after is not None and fused.pays_after <= fused.calls and fused.paid_off
    assert small.pays_after is None and small.paid_off is False  # no time saved per call


def test_nested_regions_and_compiles_are_left_out_of_own_time() -> None:
    def x(name: str, ts: float, dur: float) -> dict[str, object]:
        return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": 1}

    p = profile_of(
        [
            x("PyTorch Profiler (0)", 0, 1000),
            x("Torch-Compiled Region: 1/0", 100, 500),  # a break: its resume runs inside
            x("dynamo", 150, 200),  # the resume function compiled at its first call
            x("Torch-Compiled Region: 2/0", 400, 50),
            x("Torch-Compiled Region: 1/0", 700, 40),
            x("entire_backward_compile", 800, 100),
            {"ph": "X", "name": "Torch-Compiled Region: 3/0", "ts": "bad", "dur": 5},
        ]
    )
    r1, r2 = p.regions["1/0"], p.regions["2/0"]
    assert (r1.calls, r1.total_us, r1.own_us) == (2, 540, 290)  # 500 - 200 - 50, then 40
    assert (r2.calls, r2.own_us, r2.first_us) == (1, 50, 400)
    assert (p.compiling_us, p.compiles, p.compiled_us, p.eager_us) == (300, 2, 340, 360)
    assert "3/0" not in p.regions


def test_steps_are_a_window() -> None:
    assert parse_steps("10:20") == (10, 20) and parse_steps(":5") == (0, 5)
    for bad in ("5", "5:5", "a:b", "-1:3", "7:2"):
        with pytest.raises(ValueError):
            parse_steps(bad)


def test_pages_show_what_ran_and_a_log_without_a_profile_has_no_trace_of_it(
    tmp_path: Path,
) -> None:
    """A real standalone build: the glance's line, the section, a frame page's answer, the
    profile as a download without the machine's name; the log alone: the same pages."""
    out = tmp_path / "site"
    result = run("build", CAPTURE, "-o", out, "--no-browser", "-q", CI="true")
    assert result.returncode == 0, result.stderr
    (index,) = out.glob("torchtrace/*/index.html")
    page = index.read_text()
    assert "Ran:" in page and 'id="what-ran"' in page and "Was it worth it" in page
    assert "never: no time saved per call" in page and "paid off after 1500" in page
    frames = sorted(index.parent.glob("frame-*.html"))
    with_runtime = [f for f in frames if 'id="ran"' in f.read_text()]
    assert any("ran 1500 times" in f.read_text() for f in with_runtime)
    downloads = list(out.rglob("_downloads/*/profile-*.json"))
    assert len(downloads) == 2, "both runs' profiles are downloads"
    for d in downloads:
        text = d.read_text()
        assert '"host_name": "host"' in text and '"traceName": "profile-' in text
    alone = tmp_path / "alone"
    alone.mkdir()
    for log in CAPTURE.glob("*.log"):
        shutil.copy(log, alone / log.name)
    out2 = tmp_path / "site2"
    assert run("build", alone, "-o", out2, "--no-browser", "-q", CI="true").returncode == 0
    (index2,) = out2.glob("torchtrace/*/index.html")
    assert "Ran:" not in index2.read_text() and 'id="what-ran"' not in index2.read_text()
    assert len(list(index2.parent.glob("*.html"))) == len(list(index.parent.glob("*.html")))


def test_overview_of_a_log_without_profile_has_no_runtime_blocks() -> None:
    plan = plan_trace("t", load_trace(SIMPLE_LOG), "torchtrace")
    page = overview_page(plan, PageSettings())
    assert "What ran" not in repr(page) and "Ran:" not in repr(page)


def test_a_broken_profile_is_one_located_diagnostic(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    shutil.copytree(CAPTURE, folder)
    (folder / "runtime" / "profile-1.json.gz").write_bytes(b"not gzip")
    (folder / "runtime" / "profile-2.json").write_text('{"traceEvents": 3}')
    trace = load_trace(folder)
    found = [d for d in trace.diagnostics if d.subtype == "runtime"]
    assert len(found) == 2 and len(trace.runtime) == 2  # the two good ones still read


def test_the_bootstrap_runs_the_sitecustomize_it_hides(tmp_path: Path) -> None:
    """A distribution's or environment's own sitecustomize still runs after ours."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("import builtins\nbuiltins.THEIRS = 1\n")
    code = "import builtins, sitecustomize; print(getattr(builtins, 'THEIRS', 0))"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(BOOT_DIR), str(theirs)])},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"


PROGRAM = textwrap.dedent(
    """
    import torch

    @torch.compile
    def f(x):
        return (x.sin() + 1).relu()

    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(6):
        f(torch.randn(16))
        model(torch.randn(2, 4)).sum().backward()
        opt.step()
    """
)


@pytest.mark.torch
@pytest.mark.parametrize("steps", [None, "2:4"])
def test_run_runtime_profiles_a_real_program(tmp_path: Path, steps: str | None) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    extra = ["--steps", steps] if steps else []
    result = run(
        "run",
        "--runtime",
        *extra,
        "--no-browser",
        "-q",
        "-o",
        tmp_path / "out",
        "--",
        sys.executable,
        "prog.py",
        cwd=tmp_path,
        CI="true",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    assert result.returncode == 0, result.stderr
    (meta,) = (tmp_path / "cache").rglob("runtime/profile-*.meta.json")
    profile = read_profile(meta.with_name(meta.name.replace(".meta.json", ".json.gz")))
    assert profile.regions["0/0"].calls == (2 if steps else 6)  # steps 2 and 3
    assert profile.steps == ((2, 4) if steps else None)
    assert "ran" in (next((tmp_path / "out").rglob("index.html"))).read_text()


def _slower_copy(dest: Path, factor: float) -> Path:
    """The capture again, its profiles' clock slowed ``factor`` times (every event's start
    and duration: each region ``factor`` times slower per call, nesting kept)."""
    shutil.copytree(CAPTURE, dest)
    for path in (dest / "runtime").glob("profile-*.json.gz"):
        data = json.load(gzip.open(path))
        for e in data["traceEvents"]:
            for key in ("ts", "dur"):
                if isinstance(e.get(key), (int, float)):
                    e[key] *= factor
        with gzip.open(path, "wt") as f:
            json.dump(data, f)
    return dest


def test_diff_reports_runtime_and_fails_only_past_a_threshold(tmp_path: Path) -> None:
    slower = _slower_copy(tmp_path / "slower", 2.0)
    result = run("diff", CAPTURE, slower)
    assert result.returncode == 0, result.stdout + result.stderr  # reported, not a failure
    assert "runtime per call (run --runtime; noisy):" in result.stdout
    (line,) = [ln for ln in result.stdout.splitlines() if "fused" in ln and "(x2.00)" in ln]
    assert "calls 1500/1500" in line
    failed = run("diff", CAPTURE, slower, "--fail-on", "runtime:1.5")
    assert failed.returncode == 1 and "runtime" in failed.stdout + failed.stderr
    assert run("diff", CAPTURE, slower, "--fail-on", "runtime:2.5").returncode == 0
    data = json.loads(run("diff", CAPTURE, slower, "--format", "json").stdout)
    schema = REPO / "sphinx_torchtrace" / "schemas" / "diff.schema.json"
    jsonschema.validate(data, json.loads(schema.read_text("utf-8")))
    frames = [f for r in data["ranks"] for f in r["frames"] if f["function"] == "fused"]
    (fused,) = frames
    old, new = fused["runtime"]["baseline"], fused["runtime"]["new"]
    assert old["calls"] == new["calls"] == 1500
    assert new["own_us"] == pytest.approx(2 * old["own_us"], rel=1e-3)


def test_the_trend_says_how_often_and_how_fast_each_function_ran(tmp_path: Path) -> None:
    slower = _slower_copy(tmp_path / "slower", 2.0)
    result = run("diff", CAPTURE, slower, CAPTURE)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    at = lines.index("function runtime_training.py:fused")
    cells = [ln.rsplit(", ran ", 1)[1] for ln in lines[at + 1 : at + 4]]
    first, second, third = (float(c.split(" at ")[1].split(" ms")[0]) for c in cells)
    assert all(c.startswith("1500 times at ") for c in cells)
    assert first == third and second == pytest.approx(2 * first, rel=1e-3)


RANKS = DATA / "captured" / "runtime_ranks"


def test_each_rank_has_its_own_profile_and_the_slowest_is_named() -> None:
    """A real 2-rank gloo job run with --runtime: a profile per rank process, matched to
    its rank's log by process id; the overview lists every rank, the slowest first."""
    trace = load_trace(RANKS)
    plan = plan_trace("t", trace, "torchtrace")
    mine = {r.rank: profiles_of(plan, r)[0] for r in trace.ranks}
    assert sorted(mine) == [0, 1] and all(p is not None for p in mine.values())
    assert mine[0] is not mine[1]
    for rank in trace.ranks:
        assert mine[rank.rank].pid in rank.pids  # type: ignore[union-attr]
    text = repr(overview_page(plan, PageSettings()))
    slowest = max(mine, key=lambda n: mine[n].compiled_us)  # type: ignore[union-attr]
    assert f"Rank {slowest} spent the most time in compiled code" in text
    assert "counted over the 2 ranks" in text


def test_a_profile_named_oddly_is_shown_as_data_and_downloaded_under_our_name(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "t"
    shutil.copytree(CAPTURE, folder)
    (compiled,) = [p for p in (folder / "runtime").glob("*.json.gz") if p.stat().st_size < 10**6]
    odd = compiled.with_name("profile-<b>x<b>\n$(rm -rf ~)\u202e.json.gz")
    compiled.rename(odd)
    compiled.with_name(compiled.name.replace(".json.gz", ".meta.json")).rename(
        odd.with_name("profile-<b>x<b>\n$(rm -rf ~)\u202e.meta.json")
    )
    trace = load_trace(folder)
    plan = plan_trace("t", trace, "torchtrace")
    assert len(trace.runtime) == 2
    for path in plan.runtime_downloads.values():
        name = path.rsplit("/", 1)[1]
        assert name.replace("-", "").replace(".", "").isalnum(), name
