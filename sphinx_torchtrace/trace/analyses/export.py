"""What ``torch.export`` logged: the draft-export report's issues in tlparse's order,
the unbacked symbols, the exported programs.  Stacks are read from the log's records
(interned file names resolved), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..model import ExportEvent, RankTrace

#: The kinds of draft-export issue, in tlparse's order; the pages say each in words.
ExportIssueKind = Literal[
    "guard_evaluated",
    "data_dependent",
    "missing_fake_kernel",
    "mismatched_fake_kernel",
]
EXPORT_ISSUE_KINDS: tuple[ExportIssueKind, ...] = get_args(ExportIssueKind)


@dataclass(frozen=True)
class ExportIssue:
    """One row of the draft-export report, as tlparse lists them."""

    kind: ExportIssueKind
    reason: str  # the expression or operator
    detail: str | None  # what the log adds: a data-dependent error's assumed result, a
    # fake kernel's reason; None where it logged none
    location: str | None  # innermost user frame, with the source line it quotes
    place: str | None = None  # the same frame without its source line (``:no-source:``)


def _frame_text(rank: RankTrace, raw: Any) -> tuple[str | None, str | None]:
    """The last frame of a logged stack (``[{filename, line, name, loc}]``), readable:
    with its source line, and without it."""
    if not isinstance(raw, list):
        return None, None
    for item in reversed(raw):
        if not isinstance(item, dict):
            continue
        filename = item.get("filename")
        if isinstance(filename, int) and not isinstance(filename, bool):
            filename = rank.strings.get(filename, f"<string {filename}>")
        if not isinstance(filename, str):
            filename = str(item.get("uninterned_filename", "<unknown>"))
        place = f"{filename}:{item.get('line', '?')} in {item.get('name', '?')}"
        loc = item.get("loc")
        return (f"{place}: {loc}" if isinstance(loc, str) and loc.strip() else place), place
    return None, None


def export_issues(rank: RankTrace) -> list[ExportIssue]:
    """The draft-export report's issues in tlparse's order, each by its kind (a key of
    :data:`EXPORT_ISSUE_KINDS`) with what the log says of it."""
    report = rank.export
    issues = []
    for e in report.guards_added:
        if e.data.get("prefix") == "eval":
            issues.append(
                ExportIssue(
                    "guard_evaluated",
                    str(e.data.get("expr", "")),
                    None,
                    *_frame_text(rank, e.data.get("user_stack")),
                )
            )
    for e in report.data_dependent_errors:
        result = e.data.get("result")
        issues.append(
            ExportIssue(
                "data_dependent",
                str(e.data.get("expr", "")),
                str(result) if result is not None else None,
                *_frame_text(rank, e.data.get("user_stack")),
            )
        )
    fake_kernels: tuple[tuple[ExportIssueKind, list[ExportEvent]], ...] = (
        ("missing_fake_kernel", report.missing_fake_kernels),
        ("mismatched_fake_kernel", report.mismatched_fake_kernels),
    )
    for kind, events in fake_kernels:
        for e in events:
            reason = e.data.get("reason")
            issues.append(
                ExportIssue(kind, str(e.data.get("op", "")), str(reason) if reason else None, None)
            )
    return issues


@dataclass(frozen=True)
class UnbackedSymbol:
    symbol: str
    value_range: str | None
    location: str | None  # as :class:`ExportIssue`'s
    place: str | None = None


def unbacked_symbols(rank: RankTrace) -> list[UnbackedSymbol]:
    return [
        UnbackedSymbol(
            str(e.data.get("symbol", "?")),
            str(e.data["vr"]) if e.data.get("vr") is not None else None,
            *_frame_text(rank, e.data.get("user_stack")),
        )
        for e in rank.export.unbacked_symbols
    ]


def exported_programs(rank: RankTrace) -> list[str]:
    """Texts of the exported programs (``site.source`` leaves out the code they quote)."""
    return [e.payload.text() for e in rank.export.exported_programs if e.payload is not None]


# -- triage: the answer first -----------------------------------------------------------------
