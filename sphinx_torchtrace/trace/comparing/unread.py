"""What of a run's inputs a comparison did not read, in the tool's words.

A CI gate must never pass on records it did not read, so the comparison of two runs
(:attr:`.changes.TraceDiff.unread`) and the trend of many both list them.
"""

from __future__ import annotations

from ..model import Trace

#: Diagnostics of records (or bytes) a log holds that the reader could not use: a
#: comparison that did not read them cannot vouch for them.
UNREAD_SUBTYPES = ("json", "truncated", "payload", "nesting", "limit", "prefix", "read")


def unread(trace: Trace, side: str) -> list[str]:
    """What of ``trace`` was not read, in the tool's words (file names as data, escaped
    where printed): logs of its folder left out, entries skipped, records that did not
    parse (counted, the first located)."""
    out: list[str] = []
    if trace.not_shown:
        names = ", ".join(trace.not_shown[:3]) + (" …" if len(trace.not_shown) > 3 else "")
        out.append(
            f"{side}: {len(trace.not_shown)} other log(s) of its folder not read "
            f"({names}); name the log to compare it"
        )
    for d in trace.diagnostics:
        if d.subtype in ("mixed_runs", "skipped"):
            out.append(f"{side}: {d.path}: {d.message}")
    bad = [d for r in trace.ranks for d in r.diagnostics if d.subtype in UNREAD_SUBTYPES]
    if bad:
        first = bad[0]
        out.append(
            f"{side}: {len(bad)} record(s) or line(s) not read "
            f"(first: {first.path}:{first.line}, {first.message})"
        )
    return out
