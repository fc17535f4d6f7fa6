"""Fast HTML for big code blocks: escaped, highlighted like Pygments would, numbered."""

from __future__ import annotations

import html
from pathlib import Path

from sphinx_torchtrace.fastcode import highlight_fast, is_fast
from sphinx_torchtrace.trace import read_log

DATA = Path(__file__).parent / "data"


def _text(markup: str) -> str:
    """What a reader sees: the markup without tags, unescaped."""
    import re

    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_trace_text_is_escaped_and_comes_back_unchanged() -> None:
    hostile = '    x: "<script>alert(1)</script>" = torch.ops.aten.add(a, b)  # </pre> & more'
    out = highlight_fast(hostile, "torchtrace-fx", linenos=False)
    assert "<script>" not in out and "</pre> &" not in out
    assert _text(out).strip("\n") == hostile


def test_fx_graphs_get_pygments_classes_and_line_numbers() -> None:
    rank = read_log(DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log")
    graph = rank.compile("[0/0]").artifacts_named("dynamo_output_graph")[0].text()
    out = highlight_fast(graph, "torchtrace-fx", linenos=True)
    assert '<span class="nv">linear</span>' in out
    assert '<span class="nf">torch.relu</span>' in out
    assert out.count('<span class="linenos">') == len(graph.rstrip("\n").split("\n"))
    lines = [_text(line) for line in out.split("\n")[:3]]
    assert lines[0].endswith(graph.split("\n")[0])


def test_diffs_mark_added_and_removed_lines() -> None:
    out = highlight_fast("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n same", "diff", linenos=False)
    assert '<span class="gd">-old</span>' in out and '<span class="gi">+new</span>' in out


def test_what_goes_the_fast_way() -> None:
    assert is_fast("torchtrace-fx", 10) and is_fast("json", 10) and is_fast("diff", 10)
    assert not is_fast("python", 10_000) and is_fast("python", 10_000_000)
