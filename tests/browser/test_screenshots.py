"""Screenshots of the main views in furo's light and dark themes, for people to look at.

Saved under ``tests/.artifacts/screenshots`` (the path is printed at the end of the run).
The asserts only check what the pictures are meant to show: the theme really applied,
the content there.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import PageMaker, frame_named, planned, save_screenshot
from .test_provenance import linked_lines

#: Relative luminance of furo's page background: below this it is dark.
DARK_LUMINANCE = 0.2

LUMINANCE_JS = """
() => {
  const canvas = document.createElement('canvas');
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = getComputedStyle(document.body).backgroundColor;
  ctx.fillRect(0, 0, 1, 1);
  const [r, g, b] = ctx.getImageData(0, 0, 1, 1).data;
  const lin = (c) => (c /= 255) <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}
"""


def expect_theme(page: Any, dark: bool) -> None:
    assert page.evaluate("document.body.dataset.theme") == ("dark" if dark else "light")
    luminance = page.evaluate(LUMINANCE_JS)
    assert (luminance < DARK_LUMINANCE) == dark, f"page background luminance {luminance:.2f}"


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_screenshots(open_page: PageMaker, dark: bool) -> None:
    theme = "dark" if dark else "light"

    overview = open_page(planned("train").index_docname, dark=dark)
    expect_theme(overview, dark)
    assert overview.locator("article .torchtrace-status-break").count() > 0
    save_screenshot(overview, f"overview-{theme}")

    frame = frame_named("train/[1/0]")
    frame_page = open_page(frame.docname, dark=dark)
    expect_theme(frame_page, dark)
    assert "[1/0]" in frame_page.locator("article h1").first.inner_text()
    save_screenshot(frame_page, f"frame-{theme}")

    prose = open_page("prose", dark=dark)
    expect_theme(prose, dark)
    block = prose.locator(".torchtrace-provenance")
    block.scroll_into_view_if_needed()
    line = linked_lines("pre")[0]
    block.locator(f'.torchtrace-pane[data-pane="pre"] .torchtrace-line[data-line="{line}"]').click(
        position={"x": 6, "y": 4}
    )
    assert block.locator(".torchtrace-line.torchtrace-hl").count() > 0
    prose.mouse.move(1, 890)  # off the block (and off headings): the pinned selection stays
    save_screenshot(block, f"provenance-{theme}")
    save_screenshot(prose, f"prose-{theme}")
