"""A long code block loads as plain chunks and is highlighted as the reader scrolls: the
spans the script makes are, character for character, the ones an eager block has."""

from __future__ import annotations

import html
import re

from sphinx_torchtrace.render.highlight import highlight_fast
from sphinx_torchtrace.render.lazy_code import LAZY_CLASS

from .conftest import PageMaker, Site

#: Per character of the code column, the class of its span (lazy chunk wrappers aside).
_CLASSES = """(pre) => {
  const out = [];
  const walk = (node, cls) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        for (let i = 0; i < child.data.length; i++) out.push(cls);
      } else {
        const own = child.classList.contains("LAZY") ? cls : (child.className || null);
        walk(child, own);
      }
    }
  };
  walk(pre, null);
  return out;
}""".replace("LAZY", LAZY_CLASS)


def _expected(text: str, language: str) -> list[str | None]:
    eager = highlight_fast(text, language, linenos=False)
    code = eager.split("<pre>", 1)[1].rsplit("</pre>", 1)[0]
    out: list[str | None] = []
    for css_class, token, plain in re.findall(
        r'<span class="([a-z0-9]+)">([^<]*)</span>|<span></span>|([^<]+)', code
    ):
        units = len(html.unescape(token or plain).encode("utf-16-le")) // 2
        out += [css_class or None] * units
    return out


def test_long_code_is_highlighted_when_read(site: Site, open_page: PageMaker) -> None:
    chunks = {p: p.read_text().count(f'class="{LAZY_CLASS}"') for p in site.html.rglob("*.html")}
    longest = max(chunks, key=chunks.__getitem__)
    assert chunks[longest] >= 3, "the site has a long code block"
    page = open_page(str(longest.relative_to(site.html)).removesuffix(".html"))
    page.wait_for_load_state("load")
    block = page.locator(f"td.code pre:has(.{LAZY_CLASS})").first
    block.evaluate(  # open the folds around it
        "pre => { for (let d = pre.closest('details'); d;"
        " d = d.parentElement.closest('details')) d.open = true; }"
    )
    waiting = block.locator(f".{LAZY_CLASS}[data-runs]")
    page.wait_for_timeout(200)
    assert waiting.count() >= 1  # chunks far below the screen wait as plain text
    text = block.evaluate("pre => pre.textContent")
    language = block.evaluate(
        "pre => (pre.closest('[class*=highlight-]').className.match(/highlight-(\\S+)/) || [])[1]"
    )
    # in-page find sees every line at once: the last line is in the text before any scroll
    assert text.rstrip("\n").splitlines()[-1] in block.inner_text()
    block.locator(f".{LAZY_CLASS}").last.scroll_into_view_if_needed()
    last = block.locator(f".{LAZY_CLASS}").last
    page.wait_for_function("chunk => !chunk.hasAttribute('data-runs')", arg=last.element_handle())
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")  # prints every chunk
    assert waiting.count() == 0
    assert block.evaluate("pre => pre.textContent") == text  # highlighting changed no text
    assert block.evaluate(_CLASSES) == _expected(text, language)
