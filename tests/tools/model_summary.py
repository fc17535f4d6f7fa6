"""Summaries of the trace model of every bundled log, pinned in tests/data/expected/model/.

    python tests/tools/model_summary.py            # check: print the logs whose model changed
    python tests/tools/model_summary.py --update   # rewrite the pinned files (review the diff!)

A summary holds what a reader of the docs would notice: compile ids in order,
attempts, statuses, artifact names and counts, node and kernel counts,
failures, cache events and diagnostics.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
EXPECTED = DATA / "expected" / "model"
sys.path.insert(0, str(ROOT))

from sphinx_torchtrace.trace import RankTrace, read_log  # noqa: E402
from sphinx_torchtrace.trace.analyses.status import frame_status  # noqa: E402

LOG_SUFFIXES = (".log", ".txt", ".gz")


#: What a capture program printed, kept beside its log as ground truth: not a log.
PROGRAM_OUTPUT = "program-output.txt"

#: Folders of other input kinds (TORCH_COMPILE_DEBUG folders, TORCH_LOGS text): their
#: files are not trace logs, though a trace log written beside them is.
OTHER_INPUTS = {"debug_dir", "torch_logs", "spyre"}
RUNTIME_DIR = "runtime"


def bundled_logs() -> list[Path]:
    """Every TORCH_TRACE log file under tests/data (the pinned expectations excluded)."""
    return sorted(
        p
        for p in DATA.rglob("*")
        if p.is_file()
        and p.suffix in LOG_SUFFIXES
        and "expected" not in p.relative_to(DATA).parts
        and RUNTIME_DIR not in p.relative_to(DATA).parts  # torch's profiles (run --runtime)
        and p.name != "README.md"
        and p.name != PROGRAM_OUTPUT
        and (
            OTHER_INPUTS.isdisjoint(p.relative_to(DATA).parts)
            or p.name.startswith("dedicated_log_torch_trace")
        )
    )


def summarize(rank: RankTrace) -> dict[str, Any]:
    compiles = []
    for c in rank.compiles:
        compiles.append(
            {
                "label": c.label,
                "status": c.status,
                "first_line": c.first_line,
                "stack_depth": len(c.stack) if c.stack is not None else None,
                "artifacts": dict(Counter(a.name for a in c.artifacts)),
                "unknown_artifacts": sorted({a.name for a in c.artifacts if not a.known}),
                "graph_nodes": {
                    f"{a.name}@{a.line}": a.node_count for a in c.artifacts if a.is_graph
                },
                "kernels": {
                    f"{a.name}@{a.line}": sorted(f"{k.kind}:{k.name}" for k in a.kernels)
                    for a in c.artifacts
                    if a.kernels
                },
                "metrics": [m.event for m in c.metrics],
                "failures": [[f.kind, f.type, f.user_location] for f in c.failures],
                "cache_events": [f"{e.cache}:{e.result}" for e in c.cache_events],
                "recompile_reasons": len(c.recompile_reasons),
                "shape_events": dict(Counter(e.event for e in c.shape_events)),
                "chromium_events": c.chromium_event_count,
            }
        )
    frames: dict[str, str] = {}
    for c in rank.compiles:
        frames.setdefault(str(c.id.frame), frame_status(rank, c.id))
    export = rank.export
    return {
        "rank": rank.rank,
        "size": rank.size,
        "torch_version": (rank.torch_version or {}).get("pytorch_version"),
        "compiles": compiles,
        "frame_statuses": frames,
        "stats": dict(sorted(rank.stats.items())),
        "chromium_events": len(rank.chromium_events),
        "dump_files": sorted(rank.dump_files),
        "unknown_records": dict(Counter(r.event for r in rank.unknown_records)),
        "export": {
            "exported_programs": len(export.exported_programs),
            "guards_added": len(export.guards_added),
            "data_dependent_errors": len(export.data_dependent_errors),
            "expressions": len(export.expressions),
            "unbacked_symbols": len(export.unbacked_symbols),
            "missing_fake_kernels": len(export.missing_fake_kernels),
            "mismatched_fake_kernels": len(export.mismatched_fake_kernels),
        },
        "diagnostics": [[d.subtype, d.line] for d in rank.diagnostics],
    }


def expected_path(log: Path) -> Path:
    return EXPECTED / (str(log.relative_to(DATA)) + ".json")


def current(log: Path) -> dict[str, Any]:
    rank = read_log(log, display_root=DATA)
    return json.loads(json.dumps(summarize(rank)))


def main() -> int:
    update = "--update" in sys.argv
    changed = 0
    for log in bundled_logs():
        summary = current(log)
        target = expected_path(log)
        old = json.loads(target.read_text()) if target.exists() else None
        if old != summary:
            changed += 1
            print(("updated " if update else "differs ") + str(log.relative_to(DATA)))
            if update:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(summary, indent=1, sort_keys=False) + "\n")
    return 1 if changed and not update else 0


if __name__ == "__main__":
    raise SystemExit(main())
