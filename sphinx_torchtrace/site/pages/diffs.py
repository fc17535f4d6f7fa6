"""How a page shows the change between two texts: a recompile's graph against the previous
compile's, the Dynamo graph diff of a frame page.

Three forms, smallest first: the same text; nearly the same (a unified diff, its first hunks
open and the rest folded); the same but for numbers (a recompile for new input
shapes: the first changes, the rest a download).  Every diff here is bounded in the work it
does and in the lines it shows.
"""

from __future__ import annotations

from collections import Counter
from difflib import SequenceMatcher

from ..blocks import Block, Code, CodeBlock, Download, Dropdown, Inline, Paragraph, WebOnly

#: Share of lines equal to the previous compile's graph for a diff to replace the text.
NEAR_SAME = 0.9
#: Graphs shorter than this are shown whole: a diff of a few lines reads worse than them.
DIFF_MIN_LINES = 40
#: Texts longer than this are not diffed (the diff's work grows with them).
DIFF_MAX_LINES = 20_000
#: Line pairs the diff may compare (its first pass; a hostile text with many equal lines
#: would make it quadratic): past it, the whole text is shown.
DIFF_MAX_WORK = 2_000_000
#: Unchanged lines around each change.
DIFF_CONTEXT = 3
#: Lines of a graph diff shown open; the rest is folded.
DIFF_OPEN_LINES = 40


def near_diff(old: list[str], new: list[str], old_name: str, new_name: str) -> str | None:
    """A unified diff of two texts with at least :data:`NEAR_SAME` of their lines equal: ""
    when they are the same, None when they are not that close or too costly to compare.

    Bounded: the common head and tail are cut first (a recompile changes a few lines), and
    what is left is diffed only when its first matching pass stays under
    :data:`DIFF_MAX_WORK` line pairs.
    """
    longest = max(len(old), len(new))
    if longest > DIFF_MAX_LINES:
        return None
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    shortest = min(len(old), len(new))
    while tail < shortest - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    a, b = old[head : len(old) - tail], new[head : len(new) - tail]
    if not a and not b:
        return ""
    if head + tail < NEAR_SAME * longest - min(len(a), len(b)):
        return None  # even if every middle line matched
    in_a, in_b = Counter(a), Counter(b)
    if head + tail + sum((in_a & in_b).values()) < NEAR_SAME * longest:
        return None  # even the lines both have, in any order, are too few (linear)
    if sum(in_b.get(line, 0) for line in a) > DIFF_MAX_WORK:
        return None
    middle = SequenceMatcher(None, a, b, autojunk=False)
    equal = head + tail + sum(block.size for block in middle.get_matching_blocks())
    if equal < NEAR_SAME * longest:
        return None
    codes: list[_Opcode] = [("equal", 0, head, 0, head)] if head else []
    shifted = [
        (t, i1 + head, i2 + head, j1 + head, j2 + head)
        for t, i1, i2, j1, j2 in middle.get_opcodes()
    ]
    if tail:
        shifted.append(("equal", len(old) - tail, len(old), len(new) - tail, len(new)))
    for code in shifted:
        if code[0] == "equal" and codes and codes[-1][0] == "equal":  # one run, as difflib's
            last = codes.pop()
            code = ("equal", last[1], code[2], last[3], code[4])
        codes.append(code)
    return _unified(old, new, old_name, new_name, codes)


_Opcode = tuple[str, int, int, int, int]


def _unified(
    old: list[str], new: list[str], old_name: str, new_name: str, codes: list[_Opcode]
) -> str:
    """The unified diff (``diff -u``'s form) that opcodes describe."""
    out = [f"--- {old_name}", f"+++ {new_name}"]
    for group in _hunks(codes, DIFF_CONTEXT):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out.extend(" " + line for line in old[i1:i2])
                continue
            out.extend("-" + line for line in old[i1:i2])
            out.extend("+" + line for line in new[j1:j2])
    return "\n".join(out)


#: Lines of a sizes-only diff shown: its first hunks say which inputs changed shape; the
#: rest repeats the same sizes through the graph (the whole text is a download).
SIZES_DIFF_LINES = 40


def sizes_diff(
    old: list[str], new: list[str], old_name: str, new_name: str, limit: int = SIZES_DIFF_LINES
) -> tuple[str, int]:
    """The diff of two texts of the same length, compared line for line, cut after about
    ``limit`` lines; and how many changed lines the cut leaves out.  Linear."""
    changed = [a != b for a, b in zip(old, new, strict=True)]
    near = _distance_to_change(changed)
    cost, stop = 0, len(changed)
    for i, is_change in enumerate(changed):
        cost += 2 if is_change else (1 if near[i] <= DIFF_CONTEXT else 0)
        if cost > limit:
            stop = i
            break
    codes: list[_Opcode] = []
    for i in range(stop):
        tag = "replace" if changed[i] else "equal"
        if codes and codes[-1][0] == tag:
            codes[-1] = (tag, codes[-1][1], i + 1, codes[-1][3], i + 1)
        else:
            codes.append((tag, i, i + 1, i, i + 1))
    return _unified(old, new, old_name, new_name, codes), sum(changed[stop:])


def _distance_to_change(changed: list[bool]) -> list[int]:
    """For each line, how far the nearest changed line is (two passes)."""
    far = len(changed) + 1
    out = [far] * len(changed)
    last = -far
    for i, c in enumerate(changed):
        last = i if c else last
        out[i] = i - last
    last = 2 * far
    for i in range(len(changed) - 1, -1, -1):
        last = i if changed[i] else last
        out[i] = min(out[i], last - i)
    return out


def whole_text(raw_path: str, line: int) -> list[Inline]:
    """Where a text shown by its changes is whole: a download on the web, and in print
    (which has no downloads) the log, at the record's line."""
    return [
        WebOnly(
            [Download(raw_path, "The whole text"), " is a download."],
            [f"The whole text is in the log, at line {line}."],
        )
    ]


def sizes_only_blocks(
    same_as: list[Inline],
    changed: int,
    lines: int,
    diff: str,
    unshown: int,
    whole: list[Inline],
) -> list[Block]:
    """A recompile's text that differs from the previous one only in numbers:
    that fact, the first changes (which inputs changed shape), the rest as a download."""
    intro: list[Inline] = [
        *same_as,
        f" but for its numbers (sizes, strides, constants): {changed} of {lines} lines "
        "differ only in them."
        " The first changes (lines starting with ",
        Code("-"),
        " are its, with ",
        Code("+"),
        " this one's):",
    ]
    blocks: list[Block] = [Paragraph(intro), CodeBlock(diff, "diff")]
    if unshown:
        blocks.append(
            Paragraph(
                [
                    f"{unshown} more changed lines are not shown: they carry the same new numbers "
                    "further down. ",
                    *whole,
                ]
            )
        )
    else:
        blocks.append(Paragraph(whole))
    return blocks


def _hunks(codes: list[_Opcode], n: int) -> list[list[_Opcode]]:
    """Opcodes grouped into hunks with ``n`` lines of context (difflib's grouping, for
    opcodes put together from a cut head, a diffed middle and a cut tail)."""
    if not codes:
        return []
    codes = list(codes)
    tag, i1, i2, j1, j2 = codes[0]
    if tag == "equal":
        codes[0] = (tag, max(i1, i2 - n), i2, max(j1, j2 - n), j2)
    tag, i1, i2, j1, j2 = codes[-1]
    if tag == "equal":
        codes[-1] = (tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n))
    groups: list[list[_Opcode]] = []
    group: list[_Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * n:
            group.append((tag, i1, min(i2, i1 + n), j1, min(j2, j1 + n)))
            groups.append(group)
            group = []
            i1, j1 = max(i1, i2 - n), max(j1, j2 - n)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        groups.append(group)
    return [g for g in groups if any(code[0] != "equal" for code in g)]


def _range(start: int, stop: int) -> str:
    """A hunk's line range as ``diff -u`` writes it."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"


def folded_diff(diff: str) -> list[Block]:
    """The first changed hunks open (each with a few lines of context), the rest folded:
    a recompile's diff can run to hundreds of lines and push the page down."""
    lines = diff.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("@@")]
    if len(lines) <= DIFF_OPEN_LINES or not starts:
        return [CodeBlock(diff, "diff")]
    header = lines[: starts[0]]
    hunks = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    shown, n = list(header), 0
    while n < len(hunks) and (n == 0 or len(shown) + len(hunks[n]) <= DIFF_OPEN_LINES):
        shown += hunks[n]
        n += 1
    cut = len(shown) > DIFF_OPEN_LINES * 5 // 4  # one long hunk: its start, the rest folded
    rest = shown[DIFF_OPEN_LINES:] if cut else []
    shown = shown[:DIFF_OPEN_LINES] if cut else shown
    rest += [line for hunk in hunks[n:] for line in hunk]
    blocks: list[Block] = [CodeBlock("\n".join(shown), "diff")]
    if rest:
        changed = sum(1 for line in rest if line[:1] in "+-")
        more = len(hunks) - n
        where = f" in {more} more hunk{'s' if more != 1 else ''}" if more else ""
        title = f"The rest of the diff: {changed} changed lines{where} ({len(rest)} lines)"
        blocks.append(Dropdown([title], [CodeBlock("\n".join(rest), "diff")]))
    return blocks
