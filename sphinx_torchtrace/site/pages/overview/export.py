"""torch.export's reports: issues and unbacked symbols."""

from __future__ import annotations

from ....trace import RankTrace
from ....trace.analyses.export import (
    ExportIssue,
    UnbackedSymbol,
    export_issues,
    exported_programs,
    unbacked_symbols,
)
from ...blocks import Block, BulletList, Code, CodeBlock, Inline, Paragraph, Section, Table, item
from ...source import maybe_strip
from ...words import _
from .view import Overview, Row


def section(view: Overview) -> list[Block]:
    # only where torch.export logged: torch.compile logs unbacked symbols and guards too
    exporting = [r for r in view.trace.ranks if r.export.exported]
    if not exporting:
        return []
    intro = Paragraph(
        [
            Code("torch.export"),
            " captures a whole program as one graph ahead of time. In draft-export mode it "
            "records the problems it worked around instead of stopping at the first one; each "
            "issue below must be fixed (or the behavior accepted) before a strict export "
            "succeeds.",
        ]
    )
    no_source = view.settings.no_source
    bodies = view.for_ranks(exporting, lambda r: _export_of(r, no_source))
    return [Section([_("Export report")], [intro, *bodies], anchor="export-report")]


def _export_of(rank: RankTrace, no_source: bool) -> list[Block]:
    blocks = _export_issues(rank, no_source)
    blocks.extend(_unbacked_symbols(rank, no_source))
    guards = len(rank.export.guards_added)
    if guards:
        verb = "s were" if guards != 1 else " was"
        blocks.append(Paragraph([f"{guards} guard{verb} added while exporting."]))
    programs = exported_programs(rank)
    for i, program in enumerate(programs, 1):
        which = f" ({i} of {len(programs)})" if len(programs) > 1 else ""
        blocks.append(Paragraph([f"The exported program{which}:"]))
        blocks.append(CodeBlock(maybe_strip(program, no_source), "python"))
    return blocks


def _export_issues(rank: RankTrace, no_source: bool) -> list[Block]:
    issues = export_issues(rank)
    if not issues:
        return [Paragraph(["No issues were found."])]
    rows: list[Row] = [
        [
            [EXPORT_ISSUE_WORDS.get(i.kind, (i.kind, None, "{}"))[0]],
            [Code(i.reason)] if i.reason else ["—"],
            [_detail_text(i)],
            [Code(_location(i, no_source))] if i.location else ["—"],
        ]
        for i in issues
    ]
    plural = "s" if len(issues) != 1 else ""
    table = Table(
        [_("Issue"), _("Expression or operator"), _("Detail"), _("Where")],
        rows,
        widths=[2, 3, 2, 4],
        classes=["torchtrace-export"],
    )
    return [Paragraph([f"{len(issues)} issue{plural} found."]), table]


#: Each kind of draft-export issue: its name in the table, what to do when the log gives
#: no detail, and how a detail it gives reads.
EXPORT_ISSUE_WORDS: dict[str, tuple[str, str | None, str]] = {
    "guard_evaluated": ("Guard evaluated", None, "{}"),
    "data_dependent": ("Data-dependent error", None, "assumed result: {}"),
    "missing_fake_kernel": (
        "Missing fake kernel",
        "the operator has no fake (meta) implementation; add one with torch.library.register_fake",
        "{}",
    ),
    "mismatched_fake_kernel": (
        "Mismatched fake kernel",
        "the fake implementation disagrees with the real one on output shapes or dtypes",
        "{}",
    ),
}


def _detail_text(issue: ExportIssue) -> str:
    """What the log says of an issue, or what to do where it says nothing."""
    _title, advice, template = EXPORT_ISSUE_WORDS.get(issue.kind, (issue.kind, None, "{}"))
    if issue.detail is not None:
        return template.format(issue.detail)
    return advice or "—"


def _unbacked_symbols(rank: RankTrace, no_source: bool) -> list[Block]:
    symbols = unbacked_symbols(rank)
    if not symbols:
        return []
    intro = Paragraph(
        [
            "Unbacked symbols are sizes or values known only when the program runs (from ",
            Code(".item()"),
            ", ",
            Code("nonzero()"),
            " and the like):",
        ]
    )
    items = []
    for s in symbols:
        content: list[Inline] = [Code(s.symbol)]
        if s.value_range:
            content += [", range ", Code(s.value_range)]
        if s.location:
            content += [", from ", Code(_location(s, no_source))]
        items.append(item(*content))
    return [intro, BulletList(items)]


def _location(found: ExportIssue | UnbackedSymbol, no_source: bool) -> str:
    """An export location; with ``:no-source:``, without the user's source line it quotes."""
    return (found.place if no_source else found.location) or ""
