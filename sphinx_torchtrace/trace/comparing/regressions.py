"""What got worse between two runs, for a CI gate: the kinds a user turns on
(``--fail-on``, ``torchtrace_regressions``), each :class:`Regression` with the records it
rests on, and what such a gate could not compare (:func:`uncompared`).

Apart from the comparison so that what counts as worse is one judgement, shared by the
command's exit status, the page's warnings and the JSON.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from ..model import Trace
from .changes import RankDiff, TraceDiff, frame_evidence
from .figures import per_call_text, seconds_text

#: What got worse; each is the warning subtype ``regression_<kind>``.
RegressionKind = Literal["error", "graph_break", "recompile", "compile_time", "kernels", "runtime"]


#: Regression kinds, in report order.
REGRESSION_KINDS: tuple[RegressionKind, ...] = get_args(RegressionKind)


#: Kinds set by a ratio of times (the new run's over the baseline's), not on or off.
RATIO_KINDS: tuple[RegressionKind, ...] = ("compile_time", "runtime")


#: What counts as a regression unless configured: timings are off (they are noisy).
DEFAULT_REGRESSIONS: dict[str, bool | float | None] = {
    "error": True,
    "graph_break": True,
    "recompile": True,
    "compile_time": None,
    "kernels": False,
    "runtime": None,
}


#: The threshold a ratio kind gets when named without one (``--fail-on compile_time``).
DEFAULT_COMPILE_TIME_RATIO = 1.25


@dataclass(frozen=True)
class Regression:
    """One thing that got worse: kind (warning subtype ``regression_<kind>``), where, what."""

    kind: RegressionKind
    rank: int
    frame: str | None  # str(RunFunction), None for a whole-run regression
    message: str
    #: The records it rests on, ``log:line``: ``{"baseline": ..., "new": ...}``.
    evidence: tuple[tuple[str, str], ...] = ()

    @property
    def subtype(self) -> str:
        return f"regression_{self.kind}"


def validate_regressions(value: object) -> dict[str, bool | float | None]:
    """The regression settings a config dict (``torchtrace_regressions``) means, defaults filled.

    Raises ValueError with a sentence naming the bad key or value.
    """
    if not isinstance(value, Mapping):
        raise ValueError(f"must be a dict with keys among {', '.join(REGRESSION_KINDS)}")
    out = dict(DEFAULT_REGRESSIONS)
    for key, setting in value.items():
        if key not in REGRESSION_KINDS:
            raise ValueError(
                f"unknown regression kind {key!r}; known: {', '.join(REGRESSION_KINDS)}"
            )
        if key in RATIO_KINDS:
            if setting is None or setting is False:
                out[key] = None
            elif setting is True:
                out[key] = DEFAULT_COMPILE_TIME_RATIO
            elif isinstance(setting, (int, float)) and math.isfinite(setting) and setting >= 1:
                out[key] = float(setting)
            else:
                raise ValueError(
                    f"{key} takes None or a ratio >= 1 (1.25 = 25% slower), not {setting!r}"
                )
        elif isinstance(setting, bool):
            out[key] = setting
        else:
            raise ValueError(f"{key} takes True or False, not {setting!r}")
    return out


def parse_fail_on(text: str) -> dict[str, bool | float | None]:
    """``"error,graph_break,compile_time:1.25"`` -> settings with only those kinds on.

    A bare ``compile_time`` means a ratio of :data:`DEFAULT_COMPILE_TIME_RATIO`.  Raises
    ValueError for an unknown kind or a bad ratio.
    """
    chosen: dict[str, object] = dict.fromkeys(REGRESSION_KINDS, False)
    for ratio in RATIO_KINDS:
        chosen[ratio] = None
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        kind, sep, threshold = part.partition(":")
        kind = kind.strip()
        if kind not in REGRESSION_KINDS:
            raise ValueError(
                f"unknown regression kind {kind!r}; known: {', '.join(REGRESSION_KINDS)}"
            )
        if sep and kind not in RATIO_KINDS:
            raise ValueError(f"{kind} takes no threshold")
        if kind in RATIO_KINDS:
            try:
                chosen[kind] = float(threshold) if sep else DEFAULT_COMPILE_TIME_RATIO
            except ValueError:
                raise ValueError(f"{kind}:{threshold} is not a number") from None
        else:
            chosen[kind] = True
    return validate_regressions(chosen)


def regressions(
    diff: TraceDiff, thresholds: Mapping[str, bool | float | None] | None = None
) -> list[Regression]:
    """What got worse, for the kinds ``thresholds`` turns on.

    ``thresholds`` is a (partial) settings dict as :func:`validate_regressions` takes it;
    None or missing keys mean :data:`DEFAULT_REGRESSIONS`.
    """
    settings = validate_regressions(thresholds if thresholds is not None else {})
    out: list[Regression] = []
    if diff.nothing_compared:  # two programs: nothing of one is a regression of the other
        return out
    for r in [*diff.ranks, *diff.new_only]:
        only = (
            f" (rank {r.rank} is only in the new run)" if any(r is n for n in diff.new_only) else ""
        )
        out += _event_regressions(r, settings, only)
        out += _frame_regressions(r, settings)
        out += _runtime_regressions(r, settings["runtime"])
        out += _compile_time_regressions(r, settings["compile_time"])
    order = {k: i for i, k in enumerate(REGRESSION_KINDS)}
    return sorted(out, key=lambda g: (order[g.kind], g.rank))


def _event_regressions(
    r: RankDiff, settings: Mapping[str, bool | float | None], only: str
) -> list[Regression]:
    """The rank's new compile errors and new graph breaks, where those kinds are on."""
    out: list[Regression] = []
    if settings["error"]:
        out += [
            Regression("error", r.rank, None, f"new compile error: {e}{only}", _new(e.evidence))
            for e in r.errors_new
        ]
    if settings["graph_break"]:
        out += [
            Regression("graph_break", r.rank, None, f"new graph break: {b}{only}", _new(b.evidence))
            for b in r.breaks_new
        ]
    return out


def _frame_regressions(
    r: RankDiff, settings: Mapping[str, bool | float | None]
) -> list[Regression]:
    """Frame by frame: compiled more often (or for a new reason), more kernels."""
    out: list[Regression] = []
    for f in r.frames:
        if settings["recompile"] and f.new is not None:
            before = f.baseline.versions if f.baseline else 1
            if f.new.versions > before or (f.baseline and f.recompile_reasons_new):
                why = "; ".join(f.recompile_reasons_new[:2]) or "more versions"
                if len(f.recompile_reasons_new) > 2:
                    why += f" (+{len(f.recompile_reasons_new) - 2} more)"
                was = f"was {before}" if f.baseline else "a new frame"
                out.append(
                    Regression(
                        "recompile",
                        r.rank,
                        str(f.key),
                        f"{f.key}: compiled {f.new.versions} times ({was}): {why}",
                        frame_evidence(f, last=True),
                    )
                )
        if settings["kernels"] and f.baseline and f.new:
            old, new = len(f.baseline.kernels), len(f.new.kernels)
            if new > old:
                out.append(
                    Regression(
                        "kernels",
                        r.rank,
                        str(f.key),
                        f"{f.key}: {new} kernels (was {old})",
                        frame_evidence(f),
                    )
                )
    return out


def _runtime_regressions(r: RankDiff, runtime_limit: bool | float | None) -> list[Regression]:
    """Frames whose time per call grew past the ratio (none where the ratio is off)."""
    out: list[Regression] = []
    if isinstance(runtime_limit, float):
        for f in r.frames:
            ratio = f.runtime_ratio
            if ratio is not None and math.isfinite(ratio) and ratio > runtime_limit:
                out.append(
                    Regression(
                        "runtime",
                        r.rank,
                        str(f.key),
                        f"{f.key}: {per_call_text(f.runtime)} per call "
                        f"(x{ratio:.2f}, threshold x{runtime_limit:g})",
                    )
                )
    return out


def _compile_time_regressions(r: RankDiff, ratio_limit: bool | float | None) -> list[Regression]:
    """The rank's whole compile time, where it grew past the ratio."""
    total = r.total_seconds
    if isinstance(ratio_limit, float) and total is not None and total.ratio is not None:
        if math.isfinite(total.ratio) and total.ratio > ratio_limit:
            return [
                Regression(
                    "compile_time",
                    r.rank,
                    None,
                    f"compile time {total.baseline:.2f} s -> {total.new:.2f} s "
                    f"(x{total.ratio:.2f}, threshold x{ratio_limit:g})",
                )
            ]
    return []


def uncompared(
    diff: TraceDiff,
    thresholds: Mapping[str, bool | float | None] | None = None,
    baseline: Trace | None = None,
    new: Trace | None = None,
) -> list[str]:
    """What a gate of ``thresholds`` could not compare, a line each: a ratio of the kinds
    it turns on that is not a finite number (NaN, infinite: a time of 0 or past any
    number), and, with ``runtime`` on, each runtime profile of ``baseline`` or ``new``
    that was not read or not shown (a gate never passes on a value it could not read).
    ``sphinx-torchtrace diff`` adds them to :attr:`.changes.TraceDiff.unread`: it exits 2 naming
    them, as for records it did not read."""
    settings = validate_regressions(thresholds if thresholds is not None else {})
    out: list[str] = []
    if diff.nothing_compared:
        return out
    for r in [*diff.ranks, *diff.new_only]:
        if isinstance(settings["runtime"], float):
            for f in r.frames:
                ratio = f.runtime_ratio
                if ratio is not None and not math.isfinite(ratio):
                    out.append(
                        f"rank {r.rank}: {f.key}: runtime per call {per_call_text(f.runtime)} "
                        f"cannot be compared ({_no_ratio(ratio)})"
                    )
        total = r.total_seconds
        if isinstance(settings["compile_time"], float) and total is not None:
            if total.ratio is not None and not math.isfinite(total.ratio):
                out.append(
                    f"rank {r.rank}: compile time {seconds_text(total.baseline)} -> "
                    f"{seconds_text(total.new)} cannot be compared ({_no_ratio(total.ratio)})"
                )
    if isinstance(settings["runtime"], float):
        out += _runtime_not_kept(diff)
        for side, trace in (("baseline", baseline), ("new run", new)):
            if trace is not None:
                out += [
                    f"{side}: {d.path}: {d.message}"
                    for d in trace.diagnostics
                    if d.subtype == "runtime"
                ]
    return out


def _no_ratio(ratio: float) -> str:
    """Why a ratio is none, in words (a page or console line never says inf or nan)."""
    return "the ratio is past any number" if ratio == math.inf else "the ratio is no number"


def _runtime_not_kept(diff: TraceDiff) -> list[str]:
    """Each compared rank whose runtime a run did not keep: the gate compared nothing."""
    out = []
    for r in diff.ranks:
        kept = (
            any(f.runtime.baseline is not None for f in r.frames),
            any(f.runtime.new is not None for f in r.frames),
        )
        missing = [n for n, k in zip(("the baseline", "the new run"), kept, strict=True) if not k]
        if r.frames and missing:
            out.append(
                f"rank {r.rank}: runtime not compared: {' and '.join(missing)} kept no runtime "
                "profile of this rank (run --runtime)"
            )
    return out


def _new(evidence: str | None) -> tuple[tuple[str, str], ...]:
    return (("new", evidence),) if evidence else ()
