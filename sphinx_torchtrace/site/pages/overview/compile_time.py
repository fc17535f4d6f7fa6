"""Where the compile time went, by the user's source and by phase: an icicle in HTML, a
table in every builder, and the remarks the log's records support.

The numbers are :mod:`....trace.analyses.compile_time`'s: the root is the glance's compile
time (for several ranks, each rank's tab holds its own tree; the glance adds them up).
"""

from __future__ import annotations

from ....trace import RankTrace
from ....trace.analyses import compile_time as ct
from ....trace.analyses.naming import rank_number
from ....trace.analyses.phases import compile_seconds
from ....trace.analyses.vllm import range_text, vllm_view
from ....trace.comparing.function_times import function_times
from ...blocks import (
    Block,
    BulletList,
    Chart,
    Code,
    Emphasis,
    Inline,
    PageLink,
    Paragraph,
    Section,
    Table,
    item,
)
from ...words import _
from .view import Overview, Row, seconds_text

#: The table lists the leaves of this many compiles, the slowest (the picture shows all).
TABLE_COMPILES = 40
#: Functions named where the slowest rank differs from its class's first rank.
SLOWEST_FUNCTIONS = 5


def section(view: Overview) -> list[Block]:
    bodies = view.for_ranks(view.trace.ranks, lambda r: _body(view, r))
    bodies += _slowest_rank(view)
    return [Section([_("Where the compile time went")], bodies, anchor="compile-time-by-source")]


def _slowest_rank(view: Overview) -> list[Block]:
    """Where the slowest rank's time went beside the rank whose tab stands for its class:
    alike ranks log the same compiles, not the same seconds."""
    if not view.multi:
        return []
    spent = [
        (sum(s for c in rank.compiles if (s := compile_seconds(c)) is not None), -i, rank)
        for i, rank in enumerate(view.trace.ranks)
    ]
    seconds, _position, slowest = max(spent, key=lambda t: t[:2])
    rank_plan = view.plan.rank_plan(slowest)
    first = rank_plan.same_as.rank if rank_plan and rank_plan.same_as else None
    if first is None or not seconds:
        return []  # the slowest rank has a tab of its own
    number = rank_number(view.trace, slowest)
    shown = rank_number(view.trace, first)
    old, new = (
        ct.phase_totals(ct.compile_time_tree(first)),
        ct.phase_totals(ct.compile_time_tree(slowest)),
    )
    rows: list[Row] = [
        [
            [ct.PHASE_WORDS[k]],
            [seconds_text(old.get(k, 0.0))],
            [seconds_text(new.get(k, 0.0))],
            [f"{new.get(k, 0.0) - old.get(k, 0.0):+.3f} s"],
        ]
        for k, _words in ct.PHASES
        if k in old or k in new
    ]
    blocks: list[Block] = [
        Paragraph(
            [
                f"The slowest rank, rank {number}, logged what rank {shown} did (its tab stands "
                f"for both) but took {seconds_text(seconds)}: its phases beside rank {shown}'s."
            ]
        ),
        Table(
            [_("Phase"), f"rank {shown}", f"rank {number} (slowest)", _("Difference")],
            rows,
            widths=[4, 2, 2, 2],
        ),
    ]
    changed = [f for f in function_times(first, slowest) if f.change][:SLOWEST_FUNCTIONS]
    if changed:
        items = [item(Code(f.function), f" ({f.file}): {f.change:+.3f} s") for f in changed]
        blocks += [Paragraph(["The functions that differ most:"]), BulletList(items)]
    return blocks


def _body(view: Overview, rank: RankTrace) -> list[Block]:
    root = ct.compile_time_tree(rank)
    if not root.children:
        vllm_blocks = _vllm_body(view, rank)
        return vllm_blocks or [Paragraph(["No compilation logged its compile time."])]
    several = view.multi
    total = (
        f"this rank's {seconds_text(root.seconds)} (the glance adds up every rank's)"
        if several
        else f"the {seconds_text(root.seconds)} the glance states"
    )
    intro = Paragraph(
        [
            f"Every second of {total}, by the file and function torch compiled, then by "
            "compilation and phase. Each compilation's time is its ",
            Code("entire_frame_compile_time_s"),
            "; its phases come from torch's own timers (",
            Code("dynamo_timed"),
            " spans: each instant goes to the innermost phase running), else from the nested "
            "compilation metrics. Time no record places is its own leaf, not attributed.",
        ]
    )
    blocks: list[Block] = [intro]
    table = _table(view, root)
    blocks.append(
        Chart(
            "compile-time-tree",
            root.figures(),
            "Compile time by file, function, compilation and phase",
            fallback=[
                Paragraph(
                    [
                        "The picture of this tree is in the HTML pages; the tables "
                        "below hold its numbers."
                    ]
                )
            ],
        )
    )
    blocks.extend(_phase_totals(root))
    blocks.extend(table)  # in HTML too: the picture's boxes link nowhere
    blocks.extend(_remarks(view, root))
    return blocks


def _vllm_body(view: Overview, rank: RankTrace) -> list[Block]:
    """vLLM's pieces have no compile ids, so no compile's metrics place their time: its
    own spans do, by compile range and subgraph (wall from a piece's start to the next,
    Inductor's span inside it)."""
    found = vllm_view(rank)
    if found is None:
        return []
    if not found.pieces:
        if not found.loads or found.load_span is None:
            return []
        return [
            Paragraph(
                [
                    f"vLLM compiled nothing here: it loaded {len(found.loads)} pieces from its "
                    f"cache in {seconds_text(found.load_span.seconds)} (its inductor_load "
                    f"spans, lines {found.load_span.begin_line}–{found.load_span.end_line})."
                ]
            )
        ]
    rows: list[Row] = []
    total_wall = total_inductor = 0.0
    for call in found.calls:
        for piece in call.pieces:
            inductor = piece.inductor.seconds if piece.inductor is not None else None
            total_wall += piece.wall_seconds or 0.0
            total_inductor += inductor or 0.0
            rows.append(
                [
                    [range_text(piece.range, piece.single_size)],
                    [Code(piece.submod)],
                    [seconds_text(piece.wall_seconds)],
                    [seconds_text(inductor)],
                    [f"line {piece.line}"],
                ]
            )
    backend = found.backend_seconds
    spent = (
        f"vLLM's own span, vllm_backend, took {seconds_text(backend)}; "
        if backend is not None
        else ""
    )
    intro: list[Inline] = [
        "vLLM logged its piecewise compiles without compile ids, so no compile's metrics "
        f"place their time: its own spans do. {spent}its {len(rows)} pieces took "
        f"{seconds_text(total_wall)} from each piece's start to the next, "
        f"{seconds_text(total_inductor)} of it in Inductor. The matrix of ranges and "
        "subgraphs is on the ",
    ]
    link: Inline = (
        PageLink(view.plan.vllm_docname, "vLLM page") if view.plan.vllm_docname else "vLLM page"
    )
    return [
        Paragraph([*intro, link, "."]),
        Table(
            [_("Range"), _("Subgraph"), _("Wall"), _("Inductor"), _("Record")],
            rows[: TABLE_COMPILES * 4],
            widths=[2, 2, 2, 2, 2],
        ),
    ]


def _phase_totals(root: ct.Node) -> list[Block]:
    totals = ct.phase_totals(root)
    rows: list[Row] = [
        [
            [ct.PHASE_WORDS[k]],
            [seconds_text(v)],
            [f"{v / root.seconds:.0%}" if root.seconds else "—"],
        ]
        for k, v in totals.items()
    ]
    return [
        Paragraph([Emphasis("By phase, over all compilations")]),
        Table([_("Phase"), _("Seconds"), _("Share")], rows, widths=[4, 2, 1]),
    ]


def _table(view: Overview, root: ct.Node) -> list[Block]:
    """A row per phase of the slowest compilations: function, compile (linked), phase,
    seconds and the records (``line``) it comes from."""
    compiles: list[tuple[ct.Node, ct.Node, ct.Node]] = [
        (file, function, node)
        for file in root.children
        for function in file.children
        for node in function.children
    ]
    compiles.sort(key=lambda t: -t[2].seconds)
    shown = compiles[:TABLE_COMPILES]
    rows: list[Row] = []
    for file, function, node in shown:
        assert node.compile is not None
        for leaf in node.children:
            rows.append(
                [
                    [Code(function.label), " ", _file_name(file.label)],
                    [view.link(node.compile)],
                    [leaf.label],
                    [seconds_text(leaf.seconds)],
                    _records(leaf),
                ]
            )
    blocks: list[Block] = [
        Paragraph([Emphasis("Compile time by compilation and phase, with the records")]),
        Table(
            [_("Function"), _("Compile"), _("Phase"), _("Seconds"), _("Records (log line)")],
            rows,
            widths=[3, 2, 3, 2, 4],
            classes=["torchtrace-compile-time"],
        ),
    ]
    if len(compiles) > len(shown):
        rest = sum(t[2].seconds for t in compiles[len(shown) :])
        blocks.append(
            Paragraph(
                [
                    f"The {len(shown)} slowest of {len(compiles)} compilations; the other "
                    f"{len(compiles) - len(shown)} took {seconds_text(rest)} together."
                ]
            )
        )
    return blocks


def _file_name(path: str) -> str:
    """The file's last part, in brackets: the tooltip and the tree hold the whole path."""
    return f"({path.replace(chr(92), '/').rsplit('/', 1)[-1]})"


def _records(leaf: ct.Node) -> list[Inline]:
    out: list[Inline] = []
    for i, source in enumerate(leaf.sources):
        if i:
            out.append("; ")
        out += [Code(source.what), f" line {source.line}"]
    return out or ["—"]


def _remarks(view: Overview, root: ct.Node) -> list[Block]:
    found = ct.remarks(root)
    if not found:
        return []
    items: list[list[Block]] = []
    for remark in found:
        lines = ", ".join(f"{s.what} line {s.line}" for s in remark.records[:6])
        more = f" and {len(remark.records) - 6} more" if len(remark.records) > 6 else ""
        content: list[Inline] = [remark.text, " ("]
        for i, compile_ in enumerate(remark.compiles[:8]):
            content += [", " if i else "", view.link(compile_)]
        content.append(f"; records: {lines}{more})")
        items.append(item(*content))
    return [Paragraph([Emphasis("What the records show about it")]), BulletList(items)]
