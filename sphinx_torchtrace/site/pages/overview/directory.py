"""The compile directory: every compile id by rank, linked to its page."""

from __future__ import annotations

from collections.abc import Iterable

from ....trace import RankTrace
from ....trace.analyses.caches import cache_text
from ....trace.analyses.naming import compiled_function
from ....trace.analyses.phases import compile_seconds
from ...blocks import Block, Code, Emphasis, Inline, PageLink, Paragraph, Section, Table
from ...plan import FramePlan
from ...source import maybe_strip
from ...words import _
from .view import Overview, Row, seconds_text


def section(view: Overview) -> list[Block]:
    intro = Paragraph(
        [
            "Every compilation, by compile id. A compile id ",
            Code("[x/y]"),
            " is the ",
            Emphasis("y"),
            "-th version of the ",
            Emphasis("x"),
            "-th function compiled (",
            Emphasis("y"),
            " > 0 is a recompile); ",
            Code("_z"),
            " marks a restarted attempt, a leading ",
            Code("!n"),
            " a compiled-autograd graph, and ",
            Code("#2"),
            " the same id used again after ",
            Code("torch._dynamo.reset()"),
            ". Time is the whole compilation in seconds; cache counts the lookups in PyTorch's "
            "compile caches.",
        ]
    )
    bodies = view.for_ranks(view.trace.ranks, lambda r: _directory_of(view, r))
    return [Section([_("Compile directory")], [intro, *bodies], anchor="compile-directory")]


def _directory_of(view: Overview, rank: RankTrace) -> list[Block]:
    mine = [f for f in view.plan.frames if f.rank is rank]
    frames = [f for f in mine if not f.compile.id.is_unknown]
    outside = [_outside_paragraph(f) for f in mine if f.compile.id.is_unknown]
    if not frames:
        return [Paragraph(["No compilations in this log."]), *outside]
    functions = {id(f.compile): compiled_function(rank, f.compile) for f in frames}
    places = places_by_name(functions.values())
    rows: list[Row] = [
        [
            _attempt_cell(view, f),
            function_cell(functions[id(f.compile)], places, view.settings.no_source),
            [f.compile.status],
            [seconds_text(compile_seconds(f.compile))],
            [str(len(f.compile.graphs))],
            [str(len(f.kernels))],
            [cache_text(f.compile) or "—"],
            [str(len(f.compile.artifacts))],
        ]
        for f in frames
    ]
    header = ["Compile id", "Function", "Status", "Time", "Graphs", "Kernels", "Cache", "Artifacts"]
    table = Table(header, rows, widths=[2, 3, 1, 1, 1, 1, 2, 1], classes=["torchtrace-directory"])
    return [table, *outside]


def _outside_paragraph(frame: FramePlan) -> Paragraph:
    """``[-/-]`` is not a compilation: its records are named below the table, not in it."""
    c = frame.compile
    records = len(c.artifacts) + len(c.metrics) + c.chromium_event_count
    names = sorted({a.name for a in c.artifacts})
    if c.metrics:
        names.append(f"{len(c.metrics)} metrics record{'s' if len(c.metrics) != 1 else ''}")
    if c.chromium_event_count:
        n = c.chromium_event_count
        names.append(f"{n} chromium event{'s' if n != 1 else ''}")
    listed = ", ".join(names[:6]) + (f" and {len(names) - 6} more kinds" if len(names) > 6 else "")
    one = records == 1
    return Paragraph(
        [
            f"{records} record{'' if one else 's'} logged outside any compilation"
            + (f" ({listed})" if listed else "")
            + (" is on " if one else " are on "),
            PageLink(frame.docname, "its own page" if one else "their own page"),
            ".",
        ]
    )


def _attempt_cell(view: Overview, frame: FramePlan) -> list[Inline]:
    """One attempt's row: a badge only where ``[x/y]``'s (over all attempts) is its own."""
    if view.plan.badge_status(frame) == frame.compile.status:
        return [view.link(frame.compile)]
    return [PageLink(frame.docname, frame.compile.label)]


def places_by_name(
    functions: Iterable[tuple[str | None, str | None]],
) -> dict[str | None, set[str | None]]:
    """Where the functions of each name are defined, for :func:`function_cell`."""
    places: dict[str | None, set[str | None]] = {}
    for name, place in functions:
        places.setdefault(name, set()).add(place)
    return places


def function_cell(
    function: tuple[str | None, str | None],
    places: dict[str | None, set[str | None]],
    no_source: bool,
) -> list[Inline]:
    """The function's name, with its ``file:line`` where the name alone does not tell it
    apart: a name two functions share, and every ``<lambda>``."""
    name, place = function
    if not name:
        return ["—"]
    cell: list[Inline] = [Code(name)]
    if place and (len(places.get(name, ())) > 1 or name.startswith("<")):
        cell += [" ", Code(maybe_strip(place, no_source))]
    return cell
