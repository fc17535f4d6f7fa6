"""Dynamic shapes: the symbols created for sizes and the guards added on them."""

from __future__ import annotations

from ...blocks import Code, Inlines, Paragraph, Section, Table
from .folds import folded_if_long
from .view import FrameView, truncate

#: Characters of a symbol, guard or source shown in a cell.
CELL_LIMIT = 200


def section(view: FrameView) -> Section | None:
    """The dynamic-shape events: symbols created and guards added while tracing."""
    events = view.compile.shape_events
    if not events:
        return None
    rows: list[list[Inlines]] = []
    for ev in events:
        d = ev.data
        what = d.get("symbol") or d.get("expr") or d.get("value")
        value = (
            d.get("val")
            if d.get("val") is not None
            else (d.get("value") if d.get("symbol") else None)
        )
        where = d.get("source") or d.get("sources") or d.get("vr") or d.get("reason")
        user = ev.user_stack[-1] if ev.user_stack else None
        rows.append(
            [
                [ev.event.replace("_", " ")],
                [Code(truncate(str(what), CELL_LIMIT))] if what is not None else [],
                [Code(str(value))] if value is not None else [],
                [Code(truncate(str(where), CELL_LIMIT))] if where else [],
                [Code(f"{user.filename}:{user.line}")] if user else [],
            ]
        )
    header = ["Event", "Symbol or guard", "Value", "Source or range", "User code"]
    intro = "Symbols created for dynamic sizes and the guards added on them while tracing."
    return Section(
        ["Dynamic shapes"],
        [Paragraph([intro]), folded_if_long(Table(header, rows, [2, 3, 1, 3, 3]), "events")],
        anchor="dynamic-shapes",
    )
