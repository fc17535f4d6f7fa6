"""An 8-rank directory of alike ranks against the 2-rank directory it is copied from.

    python benchmarks/bench_ranks.py [--repeat 3] [--ranks 8]

The 8 ranks are copies of the two-rank gloo trace in ``tests/data`` (rank ``r`` a copy
of rank ``r % 2``, its rank number rewritten in the file name, the records and the
payloads, payload md5s recomputed): ranks that repeat share their pages, so the build
should take at most 1.5x the 2-rank one's.  Prints the best cold ``sphinx-build`` time
(furo) of each, their ratio, and the pages and HTML bytes of each site.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_sphinx import build  # noqa: E402

from tests.tools.hostile_log import format_record, read_records  # noqa: E402

GLOO = ROOT / "tests" / "data" / "captured" / "multi_rank_gloo"
CONF = 'extensions = ["sphinx_torchtrace"]\nhtml_theme = "furo"\nproject = "ranks"\n'
PAGE = "Ranks\n=====\n\n.. torchtrace:: logs\n   :name: dist\n"
_RANK_IN_NAME = re.compile(r"rank_(\d+)")
_RANK_IN_TEXT = re.compile(r"(rank[ _=:\"]{0,3})\d+", re.IGNORECASE)


def rank_copies(dest: Path, ranks: int, source: Path = GLOO) -> Path:
    """``dest`` filled with ``ranks`` logs: rank ``r`` is source rank ``r % len(source)``."""
    dest.mkdir(parents=True, exist_ok=True)
    logs = sorted(source.glob("*.log"), key=lambda p: int(_RANK_IN_NAME.findall(p.name)[0]))
    for r in range(ranks):
        original = logs[r % len(logs)]
        out: list[str] = []
        for record in read_records(original):
            if "rank" in record.envelope:
                record.envelope["rank"] = r
            if record.payload is not None:
                record.payload = _RANK_IN_TEXT.sub(lambda m, r=r: f"{m[1]}{r}", record.payload)
            out.append(format_record(record))
        name = _RANK_IN_NAME.sub(f"rank_{r}", original.name, count=1)
        (dest / name).write_text("".join(out), encoding="utf-8")
    return dest


def make_site(base: Path, ranks: int) -> Path:
    src = base / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    (src / "index.rst").write_text(PAGE)
    rank_copies(src / "logs", ranks)
    return src


def weight(src: Path, out: Path) -> tuple[int, int]:
    """(generated pages, HTML bytes) of a built site."""
    pages = sum(1 for p in (src / "torchtrace").rglob("*.rst"))
    return pages, sum(p.stat().st_size for p in out.rglob("*.html"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sites = {n: make_site(Path(tmp) / f"r{n}", n) for n in (2, args.ranks)}
        best = dict.fromkeys(sites, float("inf"))
        for round_ in range(args.repeat):
            for n, src in sites.items():
                out = Path(tmp) / f"out{n}-{round_}"
                best[n] = min(best[n], build(src, out, jobs=1))
        for n, src in sites.items():
            pages, html = weight(src, Path(tmp) / f"out{n}-0")
            print(f"{n} ranks: {best[n]:.2f} s, {pages} pages, {html / 1e6:.1f} MB HTML")
        ratio = best[args.ranks] / best[2]
        print(f"{args.ranks} ranks / 2 ranks: {ratio:.2f}x (target: at most 1.5x)")


if __name__ == "__main__":
    main()
