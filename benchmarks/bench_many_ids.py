"""Time against the number of compile ids: 4x the ids should cost at most ~5x the time.

    python benchmarks/bench_many_ids.py [--n 250] [--factor 4] [--sphinx] [--profile]

Makes logs of ``n`` and ``factor * n`` one-line compiles (the bundled ``simple``
log's compile repeated under new ids, ``tests/tools/many_ids_log.py``), then times,
for each, the model (``load_trace``, no cache), the plan and every page view (the
overview, each frame, graph and kernel page as blocks; no Sphinx), best of a few
runs, and prints the ratio.  ``--sphinx`` also times a real ``sphinx-build -b
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
from sphinx_torchtrace.site.plan import PageSettings, plan_trace  # noqa: E402
from sphinx_torchtrace.trace import load_trace  # noqa: E402
from tests.tools.many_ids_log import write_many_ids_log  # noqa: E402

#: The target: the larger log may take this many times the smaller one's time, per 4x ids.
TARGET_PER_4X = 5.0


def render_all(log: Path, max_frames: int | None = None) -> int:
    """Model, plan and every page's blocks; the number of pages."""
    trace = load_trace(log)
    kwargs = {} if max_frames is None else {"max_frames": max_frames}
    plan = plan_trace("run", trace, "torchtrace", **kwargs)
    settings = PageSettings(list_frames=False)
    for docname in plan.docnames:
        build_page(plan, docname, settings)
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
        times, pages = [], []
        for n, log in zip(sizes, logs, strict=True):
            pages.append(render_all(log, max_frames=n))
            times.append(best_of(args.runs, functools.partial(render_all, log, max_frames=n)))
            size = log.stat().st_size / 1e6
            print(
                f"{n:6d} ids ({size:5.1f} MB, {pages[-1]} pages): model+plan+pages "
                f"{times[-1]:7.2f} s"
            )
        ratio = times[1] / times[0]
        verdict = "ok" if ratio <= target else "TOO SLOW"
        print(f"ratio {ratio:.2f} for {args.factor}x the ids (target <= {target:.1f}): {verdict}")
        if args.sphinx:
            built = [sphinx_build(log, work) for log in logs]
            for n, seconds in zip(sizes, built, strict=True):
                print(f"{n:6d} ids: sphinx-build -b html {seconds:7.1f} s")
            print(f"sphinx-build ratio {built[1] / built[0]:.2f} (target <= {target:.1f})")
        if args.profile:
            profile = cProfile.Profile()
            profile.runcall(render_all, logs[1], sizes[1])
            pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
