"""``benchmarks/bench_weight.py`` cuts a page into parts: every byte in one part (the
outermost classified element wins), the parts summing to the page's size."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_weight import PARTS, content_text_bytes, split_page  # noqa: E402

HEAD = '<head><meta charset="utf-8"><title>é</title><style>p{}</style></head>'
SPRITE = '<svg style="display: none;"><symbol id="s"><path d="M0"/></symbol></svg>'
SIDEBAR = (
    '<aside class="sidebar-drawer"><div class="sidebar-tree"><ul><li>a</li></ul></div></aside>'
)
FOLD = '<details><summary>g</summary><div class="highlight"><pre>x = 1 ≠ 2</pre></div></details>'
CODE = '<div class="highlight-python notranslate"><div class="highlight"><pre>y</pre></div></div>'
TABLE = '<div class="table-wrapper"><table><tr><td>1<br>2</td></tr></table></div>'
CHART = '<svg class="torchtrace-chart"><rect width="1"/></svg>'
FOOTER = (
    '<footer><div class="related-pages"><a class="next-page" href="n.html">n</a></div></footer>'
)
SCRIPT = '<script src="furo.js"></script>'


def page() -> str:
    content = f"<section><h1>T</h1><p>text</p>{FOLD}{CODE}{TABLE}{CHART}</section>"
    return (
        f'<!doctype html>\n<html lang="en">{HEAD}<body>{SPRITE}<div class="page">{SIDEBAR}'
        f'<div class="main"><article role="main">{content}</article>{FOOTER}</div></div>'
        f"{SCRIPT}</body></html>\n"
    )


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def test_parts_sum_to_the_page_and_outermost_wins() -> None:
    text = page()
    parts = split_page(text.encode("utf-8"))
    assert set(parts) == set(PARTS)
    assert sum(parts.values()) == size(text)
    assert parts["head"] == size(HEAD) + size(SCRIPT)
    assert parts["navigation"] == size(SPRITE) + size(SIDEBAR) + size(FOOTER)
    assert parts["folds"] == size(FOLD)  # its code is the fold's
    assert parts["code"] == size(CODE)
    assert parts["tables"] == size(TABLE)
    assert parts["svg"] == size(CHART)
    assert parts["other"] == size(text) - sum(
        size(p) for p in (HEAD, SCRIPT, SPRITE, SIDEBAR, FOOTER, FOLD, CODE, TABLE, CHART)
    )


def test_an_unclosed_element_ends_with_its_parent() -> None:
    text = (
        '<html><body><article><div class="table-wrapper"><p>open</div>tail</article></body></html>'
    )
    parts = split_page(text.encode("utf-8"))
    assert parts["tables"] == size('<div class="table-wrapper"><p>open</div>')
    assert sum(parts.values()) == size(text)


def test_content_text_is_what_a_reader_reads_in_the_content() -> None:
    # the content's text nodes, entities decoded, UTF-8: no markup, no sidebar, no head
    text = "T" + "text" + "g" + "x = 1 ≠ 2" + "y" + "12"
    assert content_text_bytes(page().encode("utf-8")) == size(text)
    escaped = '<article role="main"><p>a &lt; b &amp;&#160;c</p></article>'
    assert content_text_bytes(escaped.encode("utf-8")) == size("a < b &\u00a0c")
