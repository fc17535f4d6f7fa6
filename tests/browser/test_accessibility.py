"""Automated accessibility checks: provenance panes and status badges.

Panes are named regions reachable by keyboard, the selected line says so
(``aria-current``), and text meets WCAG AA contrast (4.5:1) in furo's light and dark
themes: every status badge, highlighted and selected lines, plain lines and their numbers.
Colours are read from the rendered page (``getComputedStyle``, backgrounds resolved by
compositing ancestors), so a theme or a rule that overrides ours is caught too.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import PageMaker, planned
from .test_provenance import linked_lines

AA_TEXT = 4.5

#: ``(elements, pseudo) -> [{what, text, fg, bg, ratio}]``: WCAG 2 contrast of each
#: element's text (or its ``::before`` when pseudo is given) against what is behind it.
CONTRAST_JS = """
([elements, pseudo]) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const rgba = (color) => {  // any CSS colour -> [r, g, b, a] (0-255, alpha 0-1)
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = '#000';
    ctx.fillStyle = color;
    const opaque = ctx.fillStyle;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    if (d[3] === 0) return [0, 0, 0, 0];
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, below) => [0, 1, 2].map(i => top[3] * top[i] + (1 - top[3]) * below[i])
    .concat([1]);
  const background = (el) => {  // the opaque colour behind el's text
    const layers = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const c = rgba(getComputedStyle(node).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let result = [255, 255, 255, 1];  // the canvas behind a page without a background
    for (let i = layers.length - 1; i >= 0; i--) result = over(layers[i], result);
    return result;
  };
  const lin = (c) => (c /= 255) <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  const lum = (c) => 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
  const hex = (c) => '#' + c.slice(0, 3).map(v => Math.round(v).toString(16).padStart(2, '0'))
    .join('');
  return elements.map((el) => {
    const bg = background(el);
    const fg = over(rgba(getComputedStyle(el, pseudo || null).color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const where = el.closest('.torchtrace-pane');
    return {
      what: el.className + (where ? ' in ' + where.dataset.pane + ' pane' : '')
        + (pseudo ? ' ' + pseudo : ''),
      text: (pseudo ? getComputedStyle(el, pseudo).content : el.textContent).slice(0, 40),
      fg: hex(fg), bg: hex(bg), ratio: (hi + 0.05) / (lo + 0.05),
    };
  });
}
"""


def contrast(locator: Any, pseudo: str = "") -> list[dict[str, Any]]:
    elements = locator.element_handles()
    assert elements, f"nothing matches {locator}"
    page = locator.page
    result: list[dict[str, Any]] = page.evaluate(CONTRAST_JS, [elements, pseudo])
    return result


def failures(measured: list[dict[str, Any]]) -> list[str]:
    """One line per colour pair below AA; the same pair reported once."""
    seen: dict[tuple[str, str, str], str] = {}
    for m in measured:
        if m["ratio"] < AA_TEXT:
            key = (m["what"], m["fg"], m["bg"])
            seen.setdefault(
                key, f"{m['what']} {m['text']!r}: {m['fg']} on {m['bg']} = {m['ratio']:.2f}:1"
            )
    return list(seen.values())


THEMES = pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])


@THEMES
def test_status_badges_are_readable(open_page: PageMaker, dark: bool) -> None:
    measured: list[dict[str, Any]] = []
    statuses: set[str] = set()
    for docname in ("prose", planned("train").index_docname, planned("err").index_docname):
        page = open_page(docname, dark=dark)
        badges = page.locator('article [class*="torchtrace-status-"]')
        statuses.update(
            badges.evaluate_all(
                "els => els.flatMap(e => [...e.classList]"
                ".filter(c => c.startsWith('torchtrace-status-')))"
            )
        )
        measured += contrast(badges)
    assert statuses == {
        f"torchtrace-status-{s}" for s in ("ok", "break", "error", "empty", "missing")
    }
    assert not failures(measured), "\n".join(failures(measured))


@THEMES
def test_provenance_lines_are_readable(open_page: PageMaker, dark: bool) -> None:
    page = open_page("prose", dark=dark)
    block = page.locator(".torchtrace-provenance")
    line = linked_lines("post")[0]
    block.locator(f'.torchtrace-pane[data-pane="post"] .torchtrace-line[data-line="{line}"]').click(
        position={"x": 6, "y": 4}
    )
    page.locator("article h1").first.hover()
    highlighted = block.locator(".torchtrace-line.torchtrace-hl")
    assert highlighted.count() > 0
    measured = (
        contrast(block.locator(".torchtrace-line.torchtrace-hl .torchtrace-text"))
        + contrast(block.locator(".torchtrace-line.torchtrace-hl"), "::before")
        + contrast(block.locator(".torchtrace-line.torchtrace-selected .torchtrace-text"))
        + contrast(block.locator(".torchtrace-line.torchtrace-selected"), "::before")
        + contrast(
            block.locator(
                ".torchtrace-line:not(.torchtrace-hl):not(.torchtrace-selected) .torchtrace-text"
            )
        )
        + contrast(
            block.locator(".torchtrace-line:not(.torchtrace-hl):not(.torchtrace-selected)"),
            "::before",
        )
        + contrast(block.locator(".torchtrace-pane-header > *"))
        + contrast(block.locator(".torchtrace-provenance-help"))
    )
    kernel_links = block.locator("a.torchtrace-kernel-link")
    if kernel_links.count():
        measured += contrast(kernel_links)
    assert not failures(measured), "\n".join(failures(measured))


def test_panes_are_named_focusable_regions(open_page: PageMaker) -> None:
    page = open_page("prose")
    block = page.locator(".torchtrace-provenance")
    panes = block.locator(".torchtrace-pane")
    assert panes.count() == 3
    labels = [panes.nth(i).get_attribute("aria-label") or "" for i in range(3)]
    assert all(label.strip() for label in labels) and len(set(labels)) == 3, labels
    for i, label in enumerate(labels):
        pane = panes.nth(i)
        # the browser's own accessibility tree: a region with that name
        assert block.get_by_role("region", name=label, exact=True).count() == 1, label
        assert pane.get_attribute("tabindex") == "0"
        pane.focus()
        assert pane.evaluate("el => document.activeElement === el")
        outline = pane.evaluate("el => getComputedStyle(el).outlineStyle")
        assert outline != "none", f"{label}: no visible focus outline"
    assert block.get_by_role("status").count() == 1


def test_selected_line_is_announced(open_page: PageMaker) -> None:
    page = open_page("prose")
    block = page.locator(".torchtrace-provenance")
    line = linked_lines("code")[0]
    code = block.locator('.torchtrace-pane[data-pane="code"]')
    code.focus()
    page.keyboard.press("ArrowDown")
    selected = block.locator('.torchtrace-line[aria-current="true"]')
    assert selected.count() == 1
    assert selected.get_attribute("data-line") == str(line)
    status = block.get_by_role("status").inner_text()
    assert f"Line {line} of the generated code selected" in status
