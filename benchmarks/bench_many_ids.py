"""Time against the number of compile ids: 4x the ids should cost at most ~5x the time.

    python benchmarks/bench_many_ids.py [--n 250] [--factor 4] [--sphinx] [--profile]

Makes inputs of ``n`` and ``factor * n`` ids (``tests/tools/many_ids_log.py``) of each
input kind: trace logs of one-line compiles (the bundled ``simple`` log's compile
repeated under new ids), TORCH_LOGS text logs whose every frame restarts (``[i/0]``
then ``[i/0_1]``), and TORCH_COMPILE_DEBUG folders of as many graph folders (a quarter
of the ids: each is a page with kernels).  For each it times the model (no cache),
the plan and every page view (as blocks; no Sphinx), best of a few runs, and prints
the ratio.  ``--sphinx`` also times a real ``sphinx-build -b
html`` of each (one run each: slow); ``--profile`` prints the top functions of
the larger run, to find what grows faster than the ids.
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sphinx_torchtrace.site.pages import build_page  # noqa: E402
from sphinx_torchtrace.site.pages.debug_dir import build_debug_page  # noqa: E402
from sphinx_torchtrace.site.plan import PageSettings, plan_debug_dir, plan_trace  # noqa: E402
from sphinx_torchtrace.trace import load_trace  # noqa: E402
from sphinx_torchtrace.trace.inputs.debug_dir import load_debug_dir  # noqa: E402
from sphinx_torchtrace.trace.inputs.text_log import load_text_log  # noqa: E402
from tests.tools.many_ids_log import (  # noqa: E402
    write_many_graphs_debug_dir,
    write_many_ids_log,
    write_many_ids_text_log,
)

#: The target: the larger log may take this many times the smaller one's time, per 4x ids.
TARGET_PER_4X = 5.0


def render_all(log: Path, max_frames: int | None = None, text: bool = False) -> int:
    """Model, plan and every page's blocks; the number of pages."""
    trace = load_text_log(log) if text else load_trace(log)
    kwargs = {} if max_frames is None else {"max_frames": max_frames}
    plan = plan_trace("run", trace, "torchtrace", **kwargs)
    settings = PageSettings()
    for docname in plan.docnames:
        build_page(plan, docname, settings)
    return len(plan.docnames)


def render_debug_dir(folder: Path) -> int:
    """A debug folder's model, plan and every page's blocks; the number of pages."""
    plan = plan_debug_dir("debug", load_debug_dir(folder), "torchtrace")
    for docname in plan.docnames:
        build_debug_page(plan, docname, PageSettings())
    return len(plan.docnames)


def best_of(runs: int, fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def sphinx_build(log: Path, work: Path) -> float:
    """Seconds of a cold ``sphinx-build -b html`` of a page showing the log."""
    src = work / f"site-{log.stem}"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["sphinx_torchtrace"]\ntorchtrace_max_frames = 100000\n', encoding="utf-8"
    )
    shutil.copy(log, src / "many.log")  # a path is relative to the page
    (src / "index.rst").write_text(
        "Many ids\n========\n\n.. torchtrace:: many.log\n   :name: run\n", encoding="utf-8"
    )
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(src / "_build")],
        check=True,
    )
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=250, help="compile ids of the smaller log")
    parser.add_argument("--factor", type=int, default=4, help="the larger log has n*factor ids")
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs")
    parser.add_argument("--sphinx", action="store_true", help="also time real sphinx-builds")
    parser.add_argument("--profile", action="store_true", help="profile the larger run")
    args = parser.parse_args()
    sizes = (args.n, args.n * args.factor)
    # the target scales with the factor: 5x for 4x the ids, i.e. an exponent of log4(5)
    exponent = 1.161
    target = args.factor**exponent
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        logs = [write_many_ids_log(work / f"ids-{n}.log", n) for n in sizes]
        kinds: list[tuple[str, list[Callable[[], int]], list[float]]] = [
            (
                "trace logs",
                [
                    functools.partial(render_all, log, max_frames=n)
                    for n, log in zip(sizes, logs, strict=True)
                ],
                [log.stat().st_size / 1e6 for log in logs],
            ),
        ]
        texts = [write_many_ids_text_log(work / f"text-{n}.log", n) for n in sizes]
        kinds.append(
            (
                "text logs",
                [
                    functools.partial(render_all, t, max_frames=2 * n, text=True)
                    for n, t in zip(sizes, texts, strict=True)
                ],
                [t.stat().st_size / 1e6 for t in texts],
            )
        )
        folders = [write_many_graphs_debug_dir(work / f"debug-{n}", max(1, n // 4)) for n in sizes]
        kinds.append(
            (
                "debug folders",
                [functools.partial(render_debug_dir, f) for f in folders],
                [sum(p.stat().st_size for p in f.rglob("*") if p.is_file()) / 1e6 for f in folders],
            )
        )
        failed = False
        for kind, runs, megabytes in kinds:
            times = []
            for n, run, size in zip(sizes, runs, megabytes, strict=True):
                pages = run()
                times.append(best_of(args.runs, run))
                print(
                    f"{kind:13s} {n:6d} ids ({size:6.1f} MB, {pages:5d} pages): "
                    f"model+plan+pages {times[-1]:7.2f} s"
                )
            ratio = times[1] / times[0]
            verdict = "ok" if ratio <= target else "TOO SLOW"
            failed |= ratio > target
            print(
                f"{kind:13s} ratio {ratio:.2f} for {args.factor}x the ids "
                f"(target <= {target:.1f}): {verdict}"
            )
        if args.sphinx:
            built = [sphinx_build(log, work) for log in logs]
            for n, seconds in zip(sizes, built, strict=True):
                print(f"{n:6d} ids: sphinx-build -b html {seconds:7.1f} s")
            print(f"sphinx-build ratio {built[1] / built[0]:.2f} (target <= {target:.1f})")
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(render_all, logs[1], sizes[1])
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
        if failed:
            sys.exit(1)


if __name__ == "__main__":
    main()
