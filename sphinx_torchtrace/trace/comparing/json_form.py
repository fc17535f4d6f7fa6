"""A comparison as JSON-able data (``sphinx-torchtrace diff --json``): format
:data:`DIFF_JSON_FORMAT`, schema ``sphinx_torchtrace/schemas/diff.schema.json``.

Its keys and phase names are published vocabulary CI jobs match on, kept here apart from
the model and the text so that a change to either never moves them.  JSON has no NaN or
infinity: such a number is null.
"""

from __future__ import annotations

import math
from typing import Any

from .changes import Change, FrameDiff, TraceDiff, frame_evidence
from .comparability import RunFacts
from .regressions import Regression
from .run_frames import BreakSite

MAX_LISTED = 200  # kernel names per frame


def _finite(value: Any) -> Any:
    """A number for JSON: None for NaN and infinities (JSON has none)."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _site_json(site: BreakSite) -> dict[str, str | None]:
    return {
        "reason": site.reason,
        "file": site.file,
        "function": site.function,
        "registry_id": site.registry_id,
        "evidence": site.evidence,
    }


def _frame_json(f: FrameDiff) -> dict[str, Any]:
    """One frame's comparison: each figure on both sides, what was added and removed."""

    def change(c: Change) -> dict[str, Any]:
        return {"baseline": c.baseline, "new": c.new}

    return {
        "file": f.key.file,
        "function": f.key.function,
        "occurrence": f.key.occurrence,
        "baseline_label": f.baseline.label if f.baseline else None,
        "new_label": f.new.label if f.new else None,
        "match": f.match,
        "candidates": f.candidates,
        "evidence": dict(frame_evidence(f)),
        "first_line": change(
            Change(
                f.baseline.first_line if f.baseline else None, f.new.first_line if f.new else None
            )
        ),
        "changed": f.changed,
        "status": change(f.status),
        "compiles": change(f.versions),
        "recompile_reasons_new": f.recompile_reasons_new,
        "guards_added": f.guards_added,
        "guards_removed": f.guards_removed,
        "graph_ops": change(f.graph_ops),
        "graph_nodes": change(f.graph_nodes),
        "graph_diff": f.graph_diff,
        "kernels": change(f.kernel_count),
        "kernel_names": change(
            Change(
                [n for n, _ in f.baseline.kernels[:MAX_LISTED]] if f.baseline else None,
                [n for n, _ in f.new.kernels[:MAX_LISTED]] if f.new else None,
            )
        ),
        "kernels_added": f.kernels_added,
        "kernels_removed": f.kernels_removed,
        "kernel_kinds": change(f.kernel_kinds),
        "compile_seconds": change(f.seconds),
        "cache": change(f.cache),
        "runtime": change(Change(_ran_json(f.runtime.baseline), _ran_json(f.runtime.new))),
    }


def _ran_json(side: tuple[int, float] | None) -> dict[str, float] | None:
    return None if side is None else {"calls": side[0], "own_us": round(side[1], 3)}


#: What the JSON says it is; its schema is ``sphinx_torchtrace/schemas/diff.schema.json``.
DIFF_JSON_FORMAT = "sphinx-torchtrace/diff/1"


#: The JSON's name of each compile-time phase (``ranks[].compile_time[].phase``, a key of
#: ``TIME_PHASES`` here): published vocabulary, listed in the schema, that CI jobs match on;
#: it stays as it is whatever words the pages use (``site/phase_words.py``).
JSON_PHASE_NAMES: dict[str, str] = {
    "entire_frame": "Whole frame (entire_frame_compile_time_s)",
    "dynamo_before_restart": "Dynamo before a restart (dynamo_time_before_restart_s)",
    "backend": "Backend (backend_compile_time_s)",
    "inductor": "Inductor (inductor_compile_time_s)",
    "code_gen": "Code generation (code_gen_time_s)",
    "backward_inductor": "Backward: Inductor (inductor_compile_time_s)",
    "backward_code_gen": "Backward: code generation (code_gen_time_s)",
}


def _facts_json(facts: RunFacts | None) -> dict[str, Any] | None:
    """How a run was made: torch and Python versions, config hashes, ranks."""
    if facts is None:
        return None
    return {
        "torch": list(facts.torch),
        "python": list(facts.python),
        "config_hashes": {name: facts.config_hash(name) for name in sorted(facts.configs)},
        "ranks": list(facts.ranks),
    }


def diff_json(diff: TraceDiff) -> dict[str, Any]:
    """The comparison as JSON-able data (lists, dicts, strings, numbers, None)."""
    return {
        "format": DIFF_JSON_FORMAT,
        "unchanged": diff.unchanged,
        "nothing_compared": diff.nothing_compared,
        "setup": {
            "baseline": _facts_json(diff.baseline_facts),
            "new": _facts_json(diff.new_facts),
            "differences": diff.setup,
        },
        "frames_matched": diff.frames_matched,
        "ranks_only_baseline": diff.ranks_only_baseline,
        "ranks_only_new": diff.ranks_only_new,
        "unread": diff.unread,
        "new_only": [
            {
                "rank": r.rank,
                "errors": [_site_json(e) for e in r.errors_new],
                "graph_breaks": [_site_json(b) for b in r.breaks_new],
            }
            for r in diff.new_only
        ],
        "ranks": [
            {
                "rank": r.rank,
                "alike": r.alike,
                "frames_new": [str(f.key) for f in r.frames_new],
                "frames_gone": [str(f.key) for f in r.frames_gone],
                "graph_breaks_new": [_site_json(b) for b in r.breaks_new],
                "graph_breaks_fixed": [_site_json(b) for b in r.breaks_fixed],
                "errors_new": [_site_json(e) for e in r.errors_new],
                "errors_fixed": [_site_json(e) for e in r.errors_fixed],
                "cache": {"baseline": r.cache.baseline, "new": r.cache.new},
                "compile_time": [
                    {
                        "phase": JSON_PHASE_NAMES.get(t.phase, t.phase),
                        "baseline": _finite(t.baseline),
                        "new": _finite(t.new),
                        "ratio": _finite(t.ratio),
                    }
                    for t in r.times
                ],
                "compile_time_by_function": [f.as_json() for f in r.function_times],
                "vllm": r.vllm.as_json() if r.vllm is not None else None,
                "frames": [_frame_json(f) for f in r.frames],
            }
            for r in diff.ranks
        ],
    }


def regressions_json(found: list[Regression]) -> list[dict[str, Any]]:
    """Regressions as JSON-able dicts (``kind``, ``subtype``, ``rank``, ``frame``, ``message``)."""
    return [
        {
            "kind": g.kind,
            "subtype": g.subtype,
            "rank": g.rank,
            "frame": g.frame,
            "message": g.message,
            "evidence": dict(g.evidence),
        }
        for g in found
    ]
