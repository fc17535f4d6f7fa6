"""The provenance block in a browser: which lines light up, pinning, keyboard.

Every expectation comes from the model (:func:`provenance_view`'s line maps), followed
the way the viewer promises: pre-grad → post-grad → code, code → post-grad → pre-grad,
post-grad → both.  What a reader would notice: hovering a node highlights unrelated
lines or misses some, a click that does not keep the selection, panes the keyboard
cannot reach.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from sphinx_torchtrace.trace.analyses.provenance import ProvenanceView, provenance_view

from .conftest import PROVENANCE_FRAME, PageMaker, frame_named

PANES = ("pre", "post", "code")
Lines = dict[str, list[int]]

#: What the block shows now: the selected line(s), which carry aria-current, and the
#: highlighted lines of each pane.
STATE_JS = """
(block) => {
  const where = (el) => [el.closest('.torchtrace-pane').dataset.pane, Number(el.dataset.line)];
  const out = {selected: [], current: [], hl: {pre: [], post: [], code: []}};
  for (const el of block.querySelectorAll('.torchtrace-line.torchtrace-selected'))
    out.selected.push(where(el));
  for (const el of block.querySelectorAll('.torchtrace-line[aria-current="true"]'))
    out.current.push(where(el));
  for (const el of block.querySelectorAll('.torchtrace-line.torchtrace-hl')) {
    const [pane, line] = where(el);
    out.hl[pane].push(line);
  }
  for (const pane in out.hl) out.hl[pane].sort((a, b) => a - b);
  return out;
}
"""

#: Points at every linked line in turn (a synthetic mouseover on the line's text, as a
#: pointer would send) and records what each one highlights.
SWEEP_JS = """
(block) => {
  const state = STATE_JS;
  const seen = [];
  for (const line of block.querySelectorAll('.torchtrace-line.torchtrace-mapped')) {
    const target = line.querySelector('.torchtrace-text') || line;
    target.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
    seen.push({pane: line.closest('.torchtrace-pane').dataset.pane, line: Number(line.dataset.line),
               state: state(block)});
  }
  block.dispatchEvent(new MouseEvent('mouseleave'));
  return seen;
}
""".replace("STATE_JS", STATE_JS.strip())


@functools.cache
def view() -> ProvenanceView:
    found = provenance_view(frame_named(PROVENANCE_FRAME).compile)
    assert found is not None and not found.empty, "the provenance log links no lines"
    return found


def maps() -> dict[str, dict[int, list[int]]]:
    """The four maps the page uses: the code maps of the view's language."""
    line_maps = view().line_maps
    cpp = view().language == "cpp"
    return {
        "pre_post": dict(line_maps["preToPost"]),
        "post_pre": dict(line_maps["postToPre"]),
        "code_post": dict(line_maps["cppCodeToPost" if cpp else "pyCodeToPost"]),
        "post_code": dict(line_maps["postToCppCode" if cpp else "postToPyCode"]),
    }


def related(pane: str, line: int) -> Lines:
    """The lines a linked line highlights in the other panes, from the model alone."""
    m = maps()

    def through(table: dict[int, list[int]], keys: list[int]) -> list[int]:
        return sorted({n for k in keys for n in table.get(k, [])})

    out: Lines = {"pre": [], "post": [], "code": []}
    if pane == "pre":
        out["post"] = sorted(set(m["pre_post"].get(line, [])))
        out["code"] = through(m["post_code"], out["post"])
    elif pane == "post":
        out["pre"] = sorted(set(m["post_pre"].get(line, [])))
        out["code"] = sorted(set(m["post_code"].get(line, [])))
    else:
        out["post"] = sorted(set(m["code_post"].get(line, [])))
        out["pre"] = through(m["post_pre"], out["post"])
    return out


def linked_lines(pane: str) -> list[int]:
    """Lines of a pane that link somewhere: the ones drawn bold."""
    m = maps()
    keys = {
        "pre": set(m["pre_post"]),
        "post": set(m["post_pre"]) | set(m["post_code"]),
        "code": set(m["code_post"]),
    }[pane]
    return sorted(keys)


def expect_shown(state: dict[str, Any], pane: str, line: int, *, pinned: bool) -> None:
    assert state["selected"] == [[pane, line]], state["selected"]
    assert state["current"] == ([[pane, line]] if pinned else []), state["current"]
    assert state["hl"] == related(pane, line), f"{pane} line {line}"


def expect_nothing_shown(state: dict[str, Any]) -> None:
    assert state == {"selected": [], "current": [], "hl": {"pre": [], "post": [], "code": []}}


@pytest.fixture
def block(open_page: PageMaker) -> Any:
    page = open_page("prose")
    found = page.locator(".torchtrace-provenance")
    assert found.count() == 1
    assert found.get_attribute("data-frame") == PROVENANCE_FRAME
    page.wait_for_function(
        "document.querySelector('.torchtrace-provenance').dataset.torchtraceReady === '1'"
    )
    return found


def state_of(block: Any) -> dict[str, Any]:
    result: dict[str, Any] = block.evaluate(STATE_JS)
    return result


def line_at(block: Any, pane: str, line: int) -> Any:
    return block.locator(
        f'.torchtrace-pane[data-pane="{pane}"] .torchtrace-line[data-line="{line}"]'
    )


def point_at(block: Any, pane: str, line: int) -> None:
    """The pointer on the line's number (never on a kernel link in the code)."""
    line_at(block, pane, line).hover(position={"x": 6, "y": 4})


def click_on(block: Any, pane: str, line: int) -> None:
    line_at(block, pane, line).click(position={"x": 6, "y": 4})


def move_away(block: Any) -> None:
    """The pointer over the page's heading, outside the block."""
    block.page.locator("article h1").first.hover()


def test_bold_lines_are_the_linked_lines(block: Any) -> None:
    for pane in PANES:
        bold = block.locator(
            f'.torchtrace-pane[data-pane="{pane}"] .torchtrace-line.torchtrace-mapped'
        )
        shown = [int(n) for n in bold.evaluate_all("els => els.map(e => e.dataset.line)")]
        assert shown == linked_lines(pane), pane
    expect_nothing_shown(state_of(block))


def test_every_linked_line_highlights_exactly_its_relatives(block: Any) -> None:
    sweep = block.evaluate(SWEEP_JS)
    assert len(sweep) == sum(len(linked_lines(p)) for p in PANES)
    for seen in sweep:
        expect_shown(seen["state"], seen["pane"], seen["line"], pinned=False)
    expect_nothing_shown(state_of(block))


@pytest.mark.parametrize("pane", PANES)
def test_pointing_at_a_line_highlights_its_relatives(block: Any, pane: str) -> None:
    lines = linked_lines(pane)
    for line in (lines[0], lines[len(lines) // 2]):
        point_at(block, pane, line)
        expect_shown(state_of(block), pane, line, pinned=False)
        # a related line is scrolled into its pane's view
        for other, numbers in related(pane, line).items():
            if numbers:
                shown = line_at(block, other, numbers[len(numbers) // 2])
                assert shown.evaluate(
                    "el => { const b = el.closest('.torchtrace-pane-body').getBoundingClientRect();"
                    " const r = el.getBoundingClientRect();"
                    " return r.bottom > b.top && r.top < b.bottom; }"
                ), f"{other} line {numbers} not scrolled into view"
    move_away(block)
    expect_nothing_shown(state_of(block))


def test_click_pins_the_selection(block: Any) -> None:
    pre = linked_lines("pre")[0]
    code = linked_lines("code")[-1]
    post = linked_lines("post")[-1]

    click_on(block, "pre", pre)
    expect_shown(state_of(block), "pre", pre, pinned=True)
    move_away(block)
    expect_shown(state_of(block), "pre", pre, pinned=True)

    # pointing elsewhere shows that line for a while, then the pinned one comes back
    point_at(block, "code", code)
    expect_shown(state_of(block), "code", code, pinned=False)
    move_away(block)
    expect_shown(state_of(block), "pre", pre, pinned=True)

    # the next click moves the selection
    click_on(block, "post", post)
    expect_shown(state_of(block), "post", post, pinned=True)
    move_away(block)
    expect_shown(state_of(block), "post", post, pinned=True)
    live = block.locator(".torchtrace-live").inner_text()
    assert f"Line {post} of the post-grad graph selected" in live

    # clicking the pinned line again, or Escape, clears it
    click_on(block, "post", post)
    move_away(block)
    expect_nothing_shown(state_of(block))
    click_on(block, "code", code)
    block.locator('.torchtrace-pane[data-pane="code"]').press("Escape")
    expect_nothing_shown(state_of(block))


@pytest.mark.parametrize("pane", PANES)
def test_keyboard_steps_through_linked_lines(block: Any, pane: str) -> None:
    element = block.locator(f'.torchtrace-pane[data-pane="{pane}"]')
    element.focus()
    assert element.evaluate("el => document.activeElement === el")
    lines = linked_lines(pane)
    page = block.page
    page.keyboard.press("ArrowDown")
    expect_shown(state_of(block), pane, lines[0], pinned=True)
    page.keyboard.press("ArrowDown")
    expect_shown(state_of(block), pane, lines[min(1, len(lines) - 1)], pinned=True)
    page.keyboard.press("End")
    expect_shown(state_of(block), pane, lines[-1], pinned=True)
    page.keyboard.press("ArrowUp")
    expect_shown(state_of(block), pane, lines[max(0, len(lines) - 2)], pinned=True)
    page.keyboard.press("Escape")
    expect_nothing_shown(state_of(block))


def test_tab_reaches_the_three_panes_in_order(block: Any) -> None:
    """Panes are focusable from the keyboard alone, in reading order."""
    block.locator(".torchtrace-provenance-help").click()
    reached: list[str] = []
    page = block.page
    for _ in range(12):
        page.keyboard.press("Tab")
        pane = page.evaluate(
            "() => { const el = document.activeElement;"
            " return el && el.matches('.torchtrace-pane') ? el.dataset.pane : null; }"
        )
        if pane:
            reached.append(pane)
        if len(reached) == 3:
            break
    assert reached == list(PANES)
