"""A one-trace site of a small log beside an empty Sphinx site with as many pages.

    python benchmarks/bench_small_site.py [LOG ...] [--repeat 3] [--theme furo]

For each log (by default a sample of the corpus under 3 MB: the target of issue 40 is for
logs under 3 MB), two sites are built cold with ``sphinx-build -b html`` in a child
process, alternately, ``--repeat`` rounds, and the best of each is kept:

- the trace site: ``conf.py`` with the extension and the theme, and an ``index.rst``
  holding ``.. torchtrace:: trace.log``;
- the floor: the same ``conf.py`` without the extension, and as many pages as the trace
  site has (an index with a toctree of pages of one paragraph each): what Sphinx and the
  theme cost for that many pages, with nothing of ours.

The ratio of the two is what the extension adds to a small docs build (target: at most
1.5).  Compiled bytecode is used as an installed package has it (``PYTHONDONTWRITEBYTECODE``
is unset for the children, and the package is compiled first).
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "corpus"
#: Small logs of different programs (one of a kind each), read when no log is given.
SAMPLE = (
    "custom_ops",
    "mark_dynamic",
    "set_stance",
    "explain",
    "decode_recompile_limit",
    "higher_order_ops",
)


def sample_logs() -> list[Path]:
    found = []
    for name in SAMPLE:
        found += sorted((CORPUS / name).glob("*torch_trace*.log*"))[:1]
    return found


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def build(src: Path, out: Path) -> float:
    """Wall seconds of one cold ``sphinx-build``."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(out)],
        check=True,
        capture_output=True,
        env=child_env(),
        cwd=src,
    )
    return time.perf_counter() - start


def trace_site(base: Path, log: Path, theme: str) -> Path:
    src = base / "trace"
    src.mkdir(parents=True)
    opened = gzip.open(log) if log.suffix == ".gz" else log.open("rb")
    with opened as stream, (src / "trace.log").open("wb") as dst:
        shutil.copyfileobj(stream, dst)
    conf = f'extensions = ["sphinx_torchtrace"]\nhtml_theme = "{theme}"\nproject = "bench"\n'
    (src / "conf.py").write_text(conf)
    (src / "index.rst").write_text("Report\n======\n\n.. torchtrace:: trace.log\n")
    return src


def floor_site(base: Path, pages: int, theme: str) -> Path:
    """An index and ``pages - 1`` pages of one paragraph, in its toctree."""
    src = base / "floor"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(f'html_theme = "{theme}"\nproject = "bench"\n')
    names = [f"page{i}" for i in range(1, pages)]
    toctree = "".join(f"   {n}\n" for n in names)
    (src / "index.rst").write_text(f"Report\n======\n\n.. toctree::\n\n{toctree}")
    for n in names:
        (src / f"{n}.rst").write_text(f"{n}\n{'=' * len(n)}\n\nA paragraph.\n")
    return src


def html_pages(out: Path) -> int:
    """Pages Sphinx wrote from sources (not ``genindex``/``search``)."""
    return sum(1 for _ in out.rglob("*.html")) - 2


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--theme", default="furo")
    args = parser.parse_args()
    compileall.compile_dir(str(ROOT / "sphinx_torchtrace"), quiet=1)
    print("| log | pages | trace site s | empty site s | ratio |")
    print("|---|---|---|---|---|")
    for log in args.logs or sample_logs():
        with tempfile.TemporaryDirectory() as tmp:
            base = Path(tmp)
            src = trace_site(base, log, args.theme)
            build(src, base / "out-trace")  # its page count, for the floor
            pages = html_pages(base / "out-trace")
            floor = floor_site(base, pages, args.theme)
            traced, empty = [], []
            for _ in range(args.repeat):
                traced.append(build(src, base / "out-trace"))
                empty.append(build(floor, base / "out-floor"))
            assert html_pages(base / "out-floor") == pages
        name = log.resolve().relative_to(ROOT) if log.resolve().is_relative_to(ROOT) else log
        best, base_s = min(traced), min(empty)
        print(f"| {name} | {pages} | {best:.2f} | {base_s:.2f} | {best / base_s:.2f} |")


if __name__ == "__main__":
    main()
