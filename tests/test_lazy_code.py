"""Long code blocks highlighted past their first lines when read: the chunks' runs give back
exactly the spans the eager block has (a mirror of the page script, on real graphs and
code and on hostile text)."""

from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

import pytest

from sphinx_torchtrace.render.highlight import highlight_fast
from sphinx_torchtrace.render.lazy_code import CHUNK_LINES, LAZY_CLASS, LAZY_LINES
from sphinx_torchtrace.trace import load_trace

DATA = Path(__file__).parent / "data"
BIG = next((DATA / "corpus" / "big_training").glob("*.log.gz"))
_SPAN = re.compile(r'<span class="([a-z0-9]+)">([^<]*)</span>|([^<]+)')
_CHUNK = re.compile(rf'<span class="{LAZY_CLASS}" data-runs="([^"]*)">([^<]*)</span>')


def _classes(code_html: str) -> list[str | None]:
    """Each character of a block's text (as a script counts them) with its span's class."""
    out: list[str | None] = []
    for css_class, token, plain in _SPAN.findall(code_html):
        text = html.unescape(token or plain)
        units = len(text.encode("utf-16-le")) // 2
        out += [css_class or None] * units
    return out


def _as_script_does(code_html: str) -> str:
    """The block's HTML once the page script has highlighted every chunk (its algorithm)."""

    def one(match: re.Match[str]) -> str:
        runs, escaped = match.groups()
        units = html.unescape(escaped).encode("utf-16-le")
        parts = runs.split(",") if runs else []
        pieces, at = [], 0
        for i in range(0, len(parts) - 2, 3):
            start, end, css_class = int(parts[i]), int(parts[i + 1]), parts[i + 2]
            assert at <= start < end <= len(units) // 2
            plain = units[2 * at : 2 * start].decode("utf-16-le")
            token = units[2 * start : 2 * end].decode("utf-16-le")
            pieces.append(html.escape(plain, quote=False))
            pieces.append(f'<span class="{css_class}">{html.escape(token, quote=False)}</span>')
            at = end
        pieces.append(html.escape(units[2 * at :].decode("utf-16-le"), quote=False))
        return "".join(pieces)

    return _CHUNK.sub(one, code_html)


def _code(block: str) -> str:
    return block.split("<pre><span></span>", 1)[1].rsplit("</pre>", 1)[0]


@cache
def _big_texts() -> list[tuple[str, str]]:
    """The long graphs and code of a real training log, with their languages."""
    rank = load_trace(BIG).ranks[0]
    found = []
    for compile_ in rank.compiles:
        for artifact in compile_.artifacts:
            text = artifact.text()
            if text.count("\n") < LAZY_LINES:
                continue
            language = "python" if artifact.name == "inductor_output_code" else "torchtrace-fx"
            found.append((artifact.name, language, text))
    return [(f"{name}:{n}", lang, text) for n, (name, lang, text) in enumerate(found)][:6]  # type: ignore[misc]


def test_the_corpus_has_long_blocks() -> None:
    assert len(_big_texts()) >= 3


@pytest.mark.parametrize("index", range(6))
def test_runs_give_back_the_eager_spans(index: int) -> None:
    if index >= len(_big_texts()):
        pytest.skip("fewer long blocks")
    _name, language, text = _big_texts()[index]  # type: ignore[misc]
    eager = highlight_fast(text, language, linenos=True)
    lazy = highlight_fast(text, language, linenos=True, lazy=True)
    assert lazy != eager and f'class="{LAZY_CLASS}"' in lazy
    # fewer elements at load: one per chunk past the first chunk's tokens
    chunks = len(_CHUNK.findall(lazy))
    assert chunks == -(-(text.rstrip("\n").count("\n") + 1 - CHUNK_LINES) // CHUNK_LINES)
    assert lazy.count("<span") < eager.count("<span") / 2
    assert _classes(_as_script_does(_code(lazy))) == _classes(_code(eager))
    # the text a reader finds and copies is there from the start, line numbers alike
    plain = re.sub(r"<[^>]+>", "", _code(lazy))
    assert html.unescape(plain) == html.unescape(re.sub(r"<[^>]+>", "", _code(eager)))


def test_hostile_text_keeps_its_offsets() -> None:
    line = '    x: "𝔘<b>&amp;</b>é" = torch.ops.aten.add(a, b)  # 🙂 </pre> \x00 & more'
    text = "\n".join([line] * (LAZY_LINES + 7)) + '\n"""a string\n' + "over\n" * 450 + '"""\n'
    for language in ("torchtrace-fx", "python"):
        eager = highlight_fast(text, language, linenos=False)
        lazy = highlight_fast(text, language, linenos=False, lazy=True)
        assert "<b>" not in lazy and "</pre> " not in lazy
        assert _classes(_as_script_does(_code(lazy))) == _classes(_code(eager))


def test_short_blocks_emphasis_and_carriage_returns_stay_eager() -> None:
    short = "a = 1\n" * (LAZY_LINES - 2)
    assert highlight_fast(short, "python", False, lazy=True) == highlight_fast(
        short, "python", False
    )
    long = "a = 1\n" * (LAZY_LINES + 2)
    emphasized = highlight_fast(long, "python", False, hl_lines=[3], lazy=True)
    assert LAZY_CLASS not in emphasized
    assert LAZY_CLASS not in highlight_fast(long.replace("\n", "\r\n"), "python", False, lazy=True)
