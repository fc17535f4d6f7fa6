"""Where the compile was started from: the user frames as a table, torch's folded."""

from __future__ import annotations

from collections.abc import Sequence

from ....trace import StackFrame
from ...blocks import Block, Code, CodeBlock, Dropdown, Inlines, Paragraph, Section, Table
from ...words import _
from .view import FrameView


def section(view: FrameView) -> Section | None:
    """The stack the compile started from: user frames as a table, the rest folded."""
    stack = view.compile.stack
    if not stack:
        return None
    user_frames = [f for f in stack if f.is_user_code]
    torch_frames = [f for f in stack if not f.is_user_code]
    blocks: list[Block] = []
    if user_frames:
        blocks.append(
            Paragraph(
                [
                    "The call stack in user code, outermost first; the last frame is the one "
                    "compiled:"
                ]
            )
        )
        with_code = not view.settings.no_source and any(f.loc for f in user_frames)
        header = ["File", "Line", "Function"] + (["Code"] if with_code else [])
        rows: list[list[Inlines]] = []
        for f in user_frames:
            row: list[Inlines] = [[Code(f.filename)], [str(f.line)], [Code(f.name)]]
            if with_code:
                row.append([Code(f.loc)] if f.loc else [])
            rows.append(row)
        blocks.append(Table(header, rows, [3, 1, 2, 4] if with_code else [3, 1, 2]))
    if torch_frames:
        count = len(torch_frames)
        title = f"{count} frame{'s' if count > 1 else ''} in PyTorch and Python"
        blocks.append(Dropdown([title], [CodeBlock(_traceback_text(view, torch_frames), "pytb")]))
    return Section([_("Where it was compiled from")], blocks, anchor="stack")


def _traceback_text(view: FrameView, frames: Sequence[StackFrame]) -> str:
    """Frames as Python prints a traceback (and tlparse shows a stack)."""
    lines: list[str] = []
    for f in frames:
        lines.append(f'  File "{f.filename}", line {f.line}, in {f.name}')
        if f.loc and not view.settings.no_source:
            lines.append(f"    {f.loc}")
    return "\n".join(lines)
