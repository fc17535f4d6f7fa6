"""Two runs compared: the comparison behind ``torchtrace-diff`` and ``sphinx-torchtrace diff``.

Ranks are paired by rank number (or as the user pairs them) and ranks alike in each run
are compared once (:func:`diff_traces`); the frames of each pair of ranks are matched by
:mod:`.matching`, never by compile id or line number.  What the result holds is
:mod:`.changes`; :func:`.regressions.regressions` judges it against thresholds,
:func:`.text_report.report_lines` and :func:`.json_form.diff_json` say it.

Pure functions of the model, no Sphinx.  Every string here comes from a log and stays
plain data; all work is bounded.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..analyses.naming import rank_number
from ..digests import class_key
from ..model import RankTrace, Trace
from ..runtime import rank_profiles
from ..secrets import mask_secrets
from .changes import Change, RankDiff, TraceDiff
from .comparability import differences, run_facts
from .matching import diff_ranks
from .run_frames import frame_runtime
from .unread import unread


def diff_traces(
    baseline: Trace,
    new: Trace,
    *,
    rewrite: Callable[[str], str] | None = None,
    pairs: Sequence[tuple[int, int]] | None = None,
    renames: Mapping[str, str] | None = None,
    mask: Callable[[str], str] = mask_secrets,
) -> TraceDiff:
    """Compare two runs.  ``rewrite`` maps each run's file names (path rewriting) before
    matching, so runs from two checkouts or machines still match; ``pairs`` says which
    baseline rank is compared with which new one (by default: equal numbers); ``renames``
    maps baseline function names to new ones (a function renamed between the runs);
    ``mask`` masks what looks secret in the texts compared (:func:`.run_frames.frames_of`)."""
    old_ranks = {rank_number(baseline, r): r for r in baseline.ranks}
    new_ranks = {rank_number(new, r): r for r in new.ranks}
    chosen = pairs is not None  # ranks left out of chosen pairs are the user's choice
    if pairs is None:
        pairs = [(n, n) for n in sorted(set(old_ranks) & set(new_ranks))]
    pairs = [(a, b) for a, b in pairs if a in old_ranks and b in new_ranks]
    old_facts, new_facts = run_facts(baseline), run_facts(new)
    compared: list[RankDiff] = []
    for (a, b), others in _by_classes(pairs, old_ranks, new_ranks).items():
        ranks_diff = diff_ranks(
            old_ranks[a], new_ranks[b], rank=b, rewrite=rewrite, renames=renames, mask=mask
        )
        ranks_diff.alike = others
        _attach_runtime(ranks_diff, baseline, old_ranks[a], new, new_ranks[b])
        compared.append(ranks_diff)
    result = TraceDiff(
        ranks=compared,
        ranks_only_baseline=sorted(set(old_ranks) - {a for a, _ in pairs}),
        ranks_only_new=sorted(set(new_ranks) - {b for _, b in pairs}),
        baseline_facts=old_facts,
        new_facts=new_facts,
        setup=differences(old_facts, new_facts),
    )
    result.nothing_compared = _nothing_compared(result, old_ranks, new_ranks)
    if not chosen and result.ranks:
        result.new_only = [
            diff_ranks(
                RankTrace(path="", rank=b, size=0), new_ranks[b], rank=b, rewrite=rewrite, mask=mask
            )
            for b in result.ranks_only_new
        ]
        result.unread += [
            f"rank {a} of the baseline is not in the new run (no log of it was found)"
            for a in result.ranks_only_baseline
        ]
    result.unread += unread(baseline, "baseline") + unread(new, "new run")
    return result


def _attach_runtime(
    diff: RankDiff, baseline: Trace, old: RankTrace, new: Trace, now: RankTrace
) -> None:
    """Each frame's calls and own time on each side that kept a runtime profile."""
    old_profile = rank_profiles(baseline.runtime, baseline.ranks, old)[0]
    new_profile = rank_profiles(new.runtime, new.ranks, now)[0]
    if old_profile is None and new_profile is None:
        return
    for f in diff.frames:
        for facts, profile in ((f.baseline, old_profile), (f.new, new_profile)):
            if facts is not None and profile is not None:
                facts.runtime = frame_runtime(facts.compiles, profile)
        f.runtime = Change(
            f.baseline.runtime if f.baseline else None, f.new.runtime if f.new else None
        )


def _by_classes(
    pairs: Sequence[tuple[int, int]],
    old_ranks: Mapping[int, RankTrace],
    new_ranks: Mapping[int, RankTrace],
) -> dict[tuple[int, int], list[int]]:
    """The pairs to compare, each with the new rank numbers of the other pairs it stands
    for: pairs whose ranks are of one class in the baseline and of one class in the new
    run compare alike, so a thousand-rank job is compared once per pair of classes."""
    if len(pairs) < 2:
        return {pair: [] for pair in pairs}
    old_keys = {a: class_key(old_ranks[a]) for a in {a for a, _ in pairs}}
    new_keys = {b: class_key(new_ranks[b]) for b in {b for _, b in pairs}}
    firsts: dict[tuple[bytes, bytes], tuple[int, int]] = {}
    out: dict[tuple[int, int], list[int]] = {}
    for a, b in pairs:
        first = firsts.setdefault((old_keys[a], new_keys[b]), (a, b))
        if first == (a, b):
            out[first] = []
        else:
            out[first].append(b)
    return out


def _nothing_compared(
    diff: TraceDiff, old_ranks: Mapping[int, RankTrace], new_ranks: Mapping[int, RankTrace]
) -> str | None:
    """Why the comparison compared nothing, or None: no rank in common, or frames on both
    sides and not one of them matched (two different programs)."""
    if not diff.ranks:
        return (
            f"the runs share no rank (baseline ranks {_numbers(old_ranks)}, new ranks "
            f"{_numbers(new_ranks)}): pair them with --ranks BASELINE:NEW"
        )
    both = any(f.baseline for r in diff.ranks for f in r.frames) and any(
        f.new for r in diff.ranks for f in r.frames
    )
    if both and diff.frames_matched == 0:
        return (
            "no frame of the baseline matches one of the new run (same file and "
            "function): two different programs? (--map renames functions)"
        )
    return None


def _numbers(ranks: Mapping[int, RankTrace]) -> str:
    return ", ".join(map(str, sorted(ranks))) or "none"
