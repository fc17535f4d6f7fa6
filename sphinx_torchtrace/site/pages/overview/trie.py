"""The stack trie: where in the program each frame was compiled."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ....trace import Compile, StackTrieNode
from ....trace.analyses.stack_trie import TrieLine, trie_lines
from ...blocks import (
    Block,
    BulletList,
    Code,
    Dropdown,
    Emphasis,
    Inline,
    Paragraph,
    Section,
    Target,
)
from ...words import _
from .view import FrameLink, Overview

#: Nested lists a stack trie may use: LaTeX allows 4 nested itemize lists, and docutils
#: recurses per level; deeper frames are listed flat at the last level, with their depth.
TRIE_MAX_NESTING = 4


#: Stack tries longer than this (frames) are folded away: they push the rest of the page down.
TRIE_FOLD_LINES = 30


def section(view: Overview) -> list[Block]:
    intro = Paragraph(
        [
            "A compilation starts when Python calls a function that ",
            Code("torch.compile"),
            " wraps. This tree merges the Python call stacks of those moments, so shared "
            "callers appear once; each compile id stands at the frame where it started. Frames "
            "of PyTorch itself and of the standard library are marked ",
            Emphasis("(library)"),
            "; the others are your code.",
        ]
    )
    no_source = view.settings.no_source

    def anchor(compile_: Compile) -> str | None:  # a frame page links its compile's entry
        frame = view.plan.frame_for(compile_)
        return view.plan.trie_anchor(frame) if frame is not None else None

    bodies = view.for_ranks(
        view.trace.ranks,
        lambda r: stack_trie_blocks(r.stack_trie, view.link, no_source, anchor),
    )
    title = [_("Where compilations start")]
    return [Section(title, [intro, *bodies], anchor="where-compilations-start")]


def stack_trie_blocks(
    root: StackTrieNode,
    link: FrameLink,
    no_source: bool = False,
    anchor: Callable[[Compile], str | None] | None = None,
) -> list[Block]:
    """The stack trie as nested bullet lists, folded in a dropdown when it is long;
    ``anchor`` names the entry of each compile that frame pages link to."""
    lines = trie_lines(root)
    if not lines:
        return [Paragraph(["No compilation logged its Python stack."])]
    tree = trie_list(lines, link, no_source, anchor)
    if len(lines) > TRIE_FOLD_LINES:
        return [Dropdown([f"Stack trie ({len(lines)} frames)"], [tree])]
    return [tree]


def trie_list(
    lines: Sequence[TrieLine],
    link: FrameLink,
    no_source: bool = False,
    anchor: Callable[[Compile], str | None] | None = None,
) -> BulletList:
    """Trie lines (pre-order, with depths) as at most :data:`TRIE_MAX_NESTING` nested lists.

    One pass, one item per line: a stack of thousands of frames costs thousands of
    items, not thousands of nested lists.
    """
    top: list[list[Block]] = []
    open_lists: list[list[list[Block]]] = [top]  # [k]: the items of the open list at level k
    for line in lines:
        level = min(line.depth, TRIE_MAX_NESTING - 1)
        del open_lists[level + 1 :]
        while len(open_lists) <= level:  # the first child of the last item one level up
            items: list[list[Block]] = []
            parent = open_lists[-1]
            if not parent:
                parent.append([])
            parent[-1].append(BulletList(items))
            open_lists.append(items)
        content = _trie_line(line, link, no_source, flattened=line.depth > level)
        anchors = [a for c in line.compiles if anchor and (a := anchor(c))]
        open_lists[level].append([*map(Target, anchors), Paragraph(content)])
    return BulletList(top)


def _trie_line(line: TrieLine, link: FrameLink, no_source: bool, flattened: bool) -> list[Inline]:
    frame = line.frame
    content: list[Inline] = [f"(depth {line.depth + 1}) "] if flattened else []
    content += [Code(f"{frame.filename}:{frame.line}"), " in ", Code(frame.name)]
    if not frame.is_user_code:
        content += [" ", Emphasis("(library)")]
    if frame.loc and not no_source:
        content += [" — ", Code(frame.loc)]
    for compile_ in line.compiles:
        content += [" ", link(compile_)]
    return content
