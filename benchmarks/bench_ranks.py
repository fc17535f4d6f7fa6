"""Many ranks: a docs build of 8 to 1,024 rank logs, beside tlparse ``--all-ranks-html``.

    python benchmarks/bench_ranks.py [--ranks 8 64 256 1024] [--kinds alike differs]

The rank logs are made from the two real gloo rank logs in ``tests/data`` (rank ``r`` a copy
of rank ``r % 2``, its rank number rewritten in the file name, the records and the
payloads; payload md5s recomputed), of two kinds:

``alike``
    the ranks differ in their rank numbers and in their numbers: each rank's metrics
    (times) and timing events are its own;
``same``
    as ``alike``, every rank a copy of rank 0 (the "N alike ranks cost at most 1.2x one
    rank" target: compare with the one-rank build);
``differs``
    as ``alike``, and every rank but 0 and 1 differs in one compile, by turns: one graph
    line of its own (rank ``r``'s number in it: a page per rank), one extra compile (the
    same on each such rank), another graph break (one of five wordings).

For each kind and rank count: a cold ``sphinx-build`` (furo, one process) and one with
nothing changed, their peak memory (the build process's max RSS), a cold build of the site
with the logs' models in the cache (the pages' cost, reading the logs aside), the pages
generated and the HTML written; tlparse ``--all-ranks-html`` on the same logs in the same
run; and the same builds of one rank alone (the "N alike ranks cost at most 1.2x one rank"
target).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tools.hostile_log import LogRecord, format_record, read_records  # noqa: E402

GLOO = ROOT / "tests" / "data" / "captured" / "multi_rank_gloo"
CONF = 'extensions = ["sphinx_torchtrace"]\nhtml_theme = "furo"\nproject = "ranks"\n'
PAGE = "Ranks\n=====\n\n.. torchtrace:: logs\n   :name: dist\n"
_RANK_IN_NAME = re.compile(r"rank_(\d+)")
_RANK_IN_TEXT = re.compile(r"(rank[ _=:\"]{0,3})\d+", re.IGNORECASE)
_TIME_KEY = re.compile(r"(_us|_s|_time|_ms)$")
BREAK_WORDINGS = 5


def rank_copies(dest: Path, ranks: int, source: Path = GLOO, kind: str = "copies") -> Path:
    """``dest`` filled with ``ranks`` logs: rank ``r`` is source rank ``r % len(source)``,
    changed as ``kind`` says (``copies``: only its rank number; see the module's doc)."""
    dest.mkdir(parents=True, exist_ok=True)
    logs = sorted(source.glob("*.log"), key=lambda p: int(_RANK_IN_NAME.findall(p.name)[0]))
    if kind == "same":
        logs = logs[:1]
    originals = [read_records(log) for log in logs]
    for r in range(ranks):
        records = [_copy(record, r) for record in originals[r % len(logs)]]
        if kind in ("alike", "same", "differs") and r >= len(logs):
            _own_numbers(records, r)
        if kind == "differs" and r >= len(logs):
            [_one_graph_line, _extra_compile, _other_break][r % 3](records, r)
        name = _RANK_IN_NAME.sub(f"rank_{r}", logs[r % len(logs)].name, count=1)
        with (dest / name).open("w", encoding="utf-8") as out:
            out.writelines(format_record(record) for record in records)
    return dest


def _copy(record: LogRecord, r: int) -> LogRecord:
    envelope = dict(record.envelope)
    if "rank" in envelope:
        envelope["rank"] = r
    payload = record.payload
    if payload is not None and ("rank" in payload or "RANK" in payload):
        payload = _RANK_IN_TEXT.sub(lambda m: f"{m[1]}{r}", payload)
    return LogRecord(record.prefix, envelope, payload)


def _own_numbers(records: list[LogRecord], r: int) -> None:
    """Each rank's own times: metrics and the timing events' timestamps."""
    for record in records:
        metrics = record.envelope.get(record.kind)
        if record.kind.endswith("compilation_metrics") and isinstance(metrics, dict):
            record.envelope[record.kind] = {
                k: (
                    v + r * 1e-4
                    if isinstance(v, (int, float))
                    and not isinstance(v, bool)
                    and _TIME_KEY.search(k)
                    else v
                )
                for k, v in metrics.items()
            }
        elif record.kind == "chromium_event" and record.payload:
            event = json.loads(record.payload)
            if isinstance(event.get("ts"), (int, float)):
                event["ts"] += r
            record.payload = json.dumps(event, indent=0)


def _frame_records(records: list[LogRecord], pick: Callable[[LogRecord], bool]) -> LogRecord:
    return next(r for r in records if pick(r))


def _one_graph_line(records: list[LogRecord], r: int) -> None:
    """The first Dynamo graph gets a line with this rank's number (its own page)."""
    graph = _frame_records(records, lambda x: x.kind == "dynamo_output_graph")
    graph.payload = (graph.payload or "") + f"\n        # tuned for shard {r}"


def _extra_compile(records: list[LogRecord], r: int) -> None:
    """The last frame compiled once more: its records again as the next compile id."""
    framed = [x for x in records if isinstance(x.envelope.get("frame_id"), int)]
    last = max(x.envelope["frame_id"] for x in framed)
    mine = [x for x in framed if x.envelope["frame_id"] == last]
    again = max(x.envelope.get("frame_compile_id") or 0 for x in mine) + 1
    for x in mine:
        envelope = dict(x.envelope, frame_compile_id=again)
        metrics = envelope.get("compilation_metrics")
        if isinstance(metrics, dict) and "compile_id" in metrics:
            envelope["compilation_metrics"] = dict(metrics, compile_id=f"{last}/{again}")
        records.append(LogRecord(x.prefix, envelope, x.payload))


def _other_break(records: list[LogRecord], r: int) -> None:
    """The first graph break reason in one of a few other wordings."""
    reason = _frame_records(records, lambda x: x.artifact_name() == "dynamo_graph_break_reason")
    reason.payload = (reason.payload or "") + f"\n(variant {r % BREAK_WORDINGS})"


def make_site(base: Path, ranks: int, kind: str) -> Path:
    src = base / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    (src / "index.rst").write_text(PAGE)
    rank_copies(src / "logs", ranks, GLOO, kind)
    return src


def measured(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{cmd[:3]} failed: {err[-2000:].decode(errors='replace')}")
    return seconds, usage.ru_maxrss / 1024


def sphinx(src: Path, out: Path) -> tuple[float, float]:
    """A build into ``out``, its doctrees beside it (as ``sphinx-build -M`` keeps them)."""
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-q",
        "-b",
        "html",
        "-d",
        str(_doctrees(out)),
        str(src),
        str(out),
    ]
    return measured(cmd, src)


def tlparse(logs: Path, out: Path) -> tuple[float, float]:
    exe = shutil.which("tlparse")
    if exe is None:
        return float("nan"), float("nan")
    cmd = [exe, str(logs), "--all-ranks-html", "-o", str(out), "--overwrite", "--no-browser"]
    return measured(cmd, logs)


def site_only(src: Path, out: Path) -> float:
    """A cold build of the site with the logs' models in the cache (as a CI job that keeps
    the doctree folder's ``torchtrace-cache`` builds): what the pages cost, reading the
    logs aside."""
    cache = _doctrees(out) / "torchtrace-cache"
    kept = out.parent / "models-kept"
    shutil.move(cache, kept)
    shutil.rmtree(out)
    shutil.rmtree(cache.parent)
    shutil.rmtree(src / "torchtrace", ignore_errors=True)
    cache.parent.mkdir(parents=True)
    shutil.move(kept, cache)
    return sphinx(src, out)[0]


def _doctrees(out: Path) -> Path:
    return out.parent / f"{out.name}-doctrees"


def weight(src: Path, out: Path) -> tuple[int, int]:
    """(generated pages, HTML bytes) of a built site."""
    pages = sum(1 for p in (src / "torchtrace").rglob("*") if p.suffix in (".rst", ".md"))
    return pages, sum(p.stat().st_size for p in out.rglob("*.html"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[8, 64, 256, 1024])
    parser.add_argument(
        "--kinds",
        nargs="+",
        default=["alike", "differs"],
        choices=["alike", "same", "differs", "copies"],
    )
    parser.add_argument("--keep", type=Path, help="build here and keep it (default: a temp dir)")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-ranks-"))
    try:
        one = make_site(base / "one", 1, "copies")
        one_s, one_mib = sphinx(one, base / "one" / "out")
        one_site = site_only(one, base / "one" / "out")
        print(
            f"one rank: {one_s:.1f} s, {one_mib:.0f} MiB; site with its model cached "
            f"{one_site:.1f} s",
            flush=True,
        )
        print(
            "| kind | ranks | logs MB | cold s | peak MiB | unchanged s | site s | pages "
            "| HTML MB | tlparse s | tlparse MiB | cold / tlparse | cold / one rank "
            "| site / one rank's |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for kind in args.kinds:
            for n in args.ranks:
                site = base / f"{kind}-{n}"
                src = make_site(site, n, kind)
                logs_mb = sum(p.stat().st_size for p in (src / "logs").iterdir()) / 1e6
                cold, peak = sphinx(src, site / "out")
                again, _ = sphinx(src, site / "out")
                pages, html = weight(src, site / "out")
                site_s = site_only(src, site / "out")
                tl_s, tl_mib = tlparse(src / "logs", site / "tlparse")
                print(
                    f"| {kind} | {n} | {logs_mb:.0f} | {cold:.1f} | {peak:.0f} | {again:.1f} "
                    f"| {site_s:.1f} | {pages} | {html / 1e6:.1f} | {tl_s:.1f} | {tl_mib:.0f} "
                    f"| {cold / tl_s:.1f}x | {cold / one_s:.2f}x | {site_s / one_site:.2f}x |",
                    flush=True,
                )
                if args.keep is None:
                    shutil.rmtree(site)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
