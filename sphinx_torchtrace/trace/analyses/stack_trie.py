"""The stack trie as lines: where in the user's code each compile started, nested.

Flattened iteratively, so a deep trie never hits the recursion limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Compile, StackFrame, StackTrieNode


@dataclass(frozen=True)
class TrieLine:
    """One node of the stack trie, flattened in pre-order for a nested bullet list."""

    depth: int
    frame: StackFrame
    compiles: list[Compile]


def trie_lines(root: StackTrieNode) -> list[TrieLine]:
    lines: list[TrieLine] = []
    stack: list[tuple[int, StackTrieNode]] = [(0, c) for c in reversed(root.children)]
    while stack:  # iterative: a deep trie must not hit the recursion limit
        depth, node = stack.pop()
        if node.frame is not None:
            lines.append(TrieLine(depth, node.frame, list(node.compiles)))
        stack.extend((depth + 1, c) for c in reversed(node.children))
    return lines
