"""Fast HTML for big code blocks: escaped, highlighted like Pygments would, numbered."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pygments
import pytest
from docutils import nodes
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer, TextLexer, get_lexer_by_name
from pygments.token import STANDARD_TYPES

from sphinx_torchtrace.render.highlight import highlight_fast, is_fast
from sphinx_torchtrace.sphinxext.patches.fast_code import visit_literal_block
from sphinx_torchtrace.trace import read_log

DATA = Path(__file__).parent / "data"
SIMPLE_LOG = DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log"


PYGMENTS_VERSION = tuple(int(p) for p in pygments.__version__.split(".")[:2])


def _inside(text: str, index: int, word: str) -> bool:
    start = text.rfind(word, 0, index + len(word))
    return start != -1 and index < start + len(word)


def _text(markup: str) -> str:
    """What a reader sees: the markup without tags, unescaped."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_trace_text_is_escaped_and_comes_back_unchanged() -> None:
    hostile = '    x: "<script>alert(1)</script>" = torch.ops.aten.add(a, b)  # </pre> & more'
    out = highlight_fast(hostile, "torchtrace-fx", linenos=False)
    assert "<script>" not in out and "</pre> &" not in out
    assert _text(out).strip("\n") == hostile


def _numbered(markup: str) -> tuple[list[str], str]:
    """The line-number column and the code column of a numbered block."""
    m = re.fullmatch(
        r'<div class="highlight"><table class="highlighttable"><tr>'
        r'<td class="linenos"><div class="linenodiv"><pre>([^<]*)</pre></div></td>'
        r'<td class="code"><div><pre><span></span>(.*)\n</pre></div></td></tr></table></div>\n',
        markup,
        re.S,
    )
    assert m, markup[:300]
    return m.group(1).split("\n"), m.group(2)


def test_fx_graphs_get_pygments_classes_and_line_numbers() -> None:
    rank = read_log(SIMPLE_LOG)
    graph = rank.compile("[0/0]").artifacts_named("dynamo_output_graph")[0].text()
    out = highlight_fast(graph, "torchtrace-fx", linenos=True)
    assert '<span class="nv">linear</span>' in out
    assert '<span class="nf">torch.relu</span>' in out
    numbers, code = _numbered(out)
    lines = graph.rstrip("\n").split("\n")
    assert [n.strip() for n in numbers] == [str(n) for n in range(1, len(lines) + 1)]
    assert _text(code) == "\n".join(lines)  # copying the code leaves the numbers behind


def test_diffs_mark_added_and_removed_lines() -> None:
    out = highlight_fast("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n same", "diff", linenos=False)
    assert '<span class="gd">-old</span>' in out and '<span class="gi">+new</span>' in out


def test_what_goes_the_fast_way() -> None:
    assert is_fast("torchtrace-fx", 10) and is_fast("json", 10) and is_fast("diff", 10)
    assert is_fast("python", 10) and is_fast("cpp", 10) and is_fast("pytb", 10)
    assert not is_fast("yaml", 10_000) and is_fast("yaml", 10_000_000)


# --- Python, C++ and tracebacks -----------------------------------------------------------

#: Markup in the text; strings and comments left open; plain text last, or before a
#: character no token takes (``@`` here).
HOSTILE = [
    ("python", 'x = "</pre><script>" & y  # <b>&amp;</b>\ns = a <b>@c\nz = r"open <i>\n@d <x> &'),
    ("python", "s = '''open\n<script>\n</pre> & <i>\n"),
    ("cpp", "#include <a&b>\nchar c = '<'; /* </pre>\n & */ s = \"a\\\"</pre>\na /b < <c>"),
    ("cpp", "int x = 1 < 2 && y > 3; /* open <script>\n</pre>"),
    (
        "pytb",
        'Traceback (most recent call last):\n  File "<x>", line 1, in <module>\n'
        '    x = "</pre>" & y\n        ^^^^\nValueError: can\'t <script>&amp;\n',
    ),
]


def _inner(markup: str) -> str:
    """The highlighted lines of a block, without the wrapper or the last newline."""
    head, tail = '<div class="highlight"><pre><span></span>', "\n</pre></div>\n"
    assert markup.startswith(head) and markup.endswith(tail)
    return markup[len(head) : -len(tail)]


def _output_code() -> str:
    """Inductor's generated Python for the simple MLP (with its C++ kernels in strings)."""
    return read_log(SIMPLE_LOG).compile("[0/0]").artifacts_named("inductor_output_code")[0].text()


def _cpp_kernel() -> str:
    """The C++ of a kernel, as the kernel page shows it: the string inside ``'''``."""
    code = read_log(SIMPLE_LOG).compile("[0/0]").artifacts_named("inductor_output_code")[0]
    kernel = next(k for k in code.kernels if k.name == "cpp_fused_gelu_1")
    return kernel.source.split("'''")[1]


def _classes(markup: str) -> list[str]:
    """The class of each visible character (innermost span; "" outside spans)."""
    out: list[str] = []
    stack = [""]
    for m in re.finditer(r'<span class="([^"]*)">|</span>|([^<]+)', markup):
        if m.group(1) is not None:
            stack.append(m.group(1))
        elif m.group(2) is None:
            stack.pop()
        else:
            out += [stack[-1]] * len(html.unescape(m.group(2)))
    return out


def _disagreements(text: str, language: str, kinds: set[str], same: dict[str, str]) -> list[int]:
    """Where Pygments gives a character one of ``kinds`` and we do not (``same``: synonyms)."""
    text = text.rstrip("\n")
    lexer = get_lexer_by_name(language, stripnl=False, ensurenl=False)
    theirs = [STANDARD_TYPES.get(t, "") for t, v in pygments.lex(text, lexer) for _ in v]
    ours = _classes(_inner(highlight_fast(text, language, linenos=False)))
    assert len(theirs) == len(ours) == len(text)
    return [
        i
        for i, (t, o) in enumerate(zip(theirs, ours, strict=True))
        if t in kinds and same.get(t, t) != same.get(o, o) and text[i] != "\n"
    ]


@pytest.mark.parametrize(("language", "text"), HOSTILE)
def test_hostile_text_is_escaped_and_comes_back_unchanged(language: str, text: str) -> None:
    out = highlight_fast(text, language, linenos=False)
    assert not re.search(r"<(?!/?span)", _inner(out))  # no tag but ours
    assert _text(_inner(out)) == text.rstrip("\n")


@pytest.mark.parametrize("language", ["python", "cpp", "pytb"])
def test_real_text_comes_back_unchanged_with_balanced_spans(language: str) -> None:
    text = {"python": _output_code(), "cpp": _cpp_kernel(), "pytb": HOSTILE[-1][1]}[language]
    numbers, code = _numbered(highlight_fast(text, language, linenos=True, first_line=7))
    lines = code.split("\n")
    assert len(lines) == len(text.rstrip("\n").split("\n"))
    assert code.count("<span") == code.count("</span>")
    assert '"></span>' not in code  # no empty span
    width = len(str(6 + len(lines)))
    assert numbers == [f"{n:>{width}}" for n in range(7, 7 + len(lines))]
    assert _text(code) == text.rstrip("\n")
    # Emphasis nests a span in each line: then every token's span is cut at line ends.
    every = range(1, len(lines) + 1)
    _, emphasized = _numbered(highlight_fast(text, language, True, 7, hl_lines=every[:-1:2]))
    unwrapped = emphasized.replace('<span class="hll">', "").replace("\n</span>", "\n")
    for line in unwrapped.split("\n"):
        assert line.count("<span") == line.count("</span>"), line
        assert '"></span>' not in line, line
    assert _text(emphasized) == text.rstrip("\n")


def test_a_string_over_many_lines_is_one_span() -> None:
    """One span, not one per line: spans per line were 3 % of a log of generated code."""
    code = 'kernel = """\nline one\n\nline three\n"""\n'
    assert highlight_fast(code, "python", False) == (
        '<div class="highlight"><pre><span></span>kernel = '
        '<span class="s2">"""\nline one\n\nline three\n"""</span>\n</pre></div>\n'
    )


def test_python_output_code_gets_pygments_classes() -> None:
    code = _output_code()
    out = highlight_fast(code, "python", linenos=False)
    for expected in [
        "<span class=\"c1\"># AOT ID: ['0_inference']</span>",
        '"kn">from</span> <span class="nn">ctypes</span> <span class="kn">import</span>',
        '<span class="kn">import</span> <span class="nn">torch</span>',
        '<span class="k">class</span> <span class="nc">Runner</span>:',
        '<span class="k">def</span> <span class="fm">__init__</span>(<span class="bp">self</span>,',
        '<span class="k">def</span> <span class="nf">call</span>(<span class="bp">self</span>,',
        '<span class="k">for</span> fn, c <span class="ow">in</span> <span class="nb">zip</span>(',
        '(<span class="mi">128</span>, <span class="mi">64</span>), (<span class="mi">64</span>,',
        "<span class=\"s1\">'input'</span>",
        '<span class="k">del</span> buf0  <span class="c1"># reuse</span>',
        '<span class="k">return</span> (buf8, )',
        # a kernel's source: one string over many lines, in one span
        "<span class=\"s1\">r'''\n#include &lt;torch/csrc/",
    ]:
        assert expected in out, expected
    kinds = {"k", "kn", "kc", "ow", "bp", "nb", "ne", "nf", "nc", "c1", "s1", "s2", "mi", "mf"}
    assert not _disagreements(code, "python", kinds, {})


def test_cpp_kernel_gets_pygments_classes() -> None:
    kernel = _cpp_kernel()
    out = highlight_fast(kernel, "cpp", linenos=False)
    for expected in [
        '<span class="cp">#include</span> <span class="cpf">&lt;torch/csrc/inductor/',
        '<span class="k">extern</span> <span class="s">"C"</span>  <span class="kt">void</span>',
        '<span class="k">for</span>(<span class="kt">int64_t</span> x0=<span class="k">static_cast'
        '</span>&lt;<span class="kt">int64_t</span>&gt;(<span class="mi">0L</span>);',
        '&lt;<span class="kt">float</span>&gt;(<span class="mf">0.5</span>)',
        '<span class="k">auto</span> tmp0',
        "&amp;&amp;",
        '= <span class="nb">nullptr</span>;',
    ]:
        assert expected in out, expected
    kinds = {"k", "kt", "kr", "nb", "c1", "cm", "cp", "cpf", "s", "sc", "mh", "mi", "mf"}
    # Pygments calls 16L a float, and takes the sign into -0.5: numbers are numbers.
    wrong = _disagreements(kernel, "cpp", kinds, {"mi": "m", "mf": "m"})
    if PYGMENTS_VERSION < (2, 20):  # older Pygments does not mark nullptr a builtin
        wrong = [i for i in wrong if not _inside(kernel, i, "nullptr")]
    assert not [i for i in wrong if kernel[i] != "-"]


def test_cpp_comments_strings_and_directives() -> None:
    code = (
        "#pragma omp parallel for \\\n    collapse(2)\n"
        "x = 0x1fUL + 1e-5 + 3ul + 1.0f; // done\n"
        '/* one\n\n   two */ char c = \'\\n\'; const char* s = "a\\"b";\n'
    )
    out = highlight_fast(code, "cpp", linenos=False)
    # A directive continued by a backslash, a block comment: a span on each line with text.
    assert '"cp">#pragma omp parallel for \\\n    collapse(2)</span>' in out
    assert '<span class="cm">/* one\n\n   two */</span>' in out
    for expected in ['"mh">0x1fUL<', '"mf">1e-5<', '"mi">3ul<', '"mf">1.0f<', '"c1">// done<']:
        assert expected in out
    assert "<span class=\"sc\">'\\n'</span>" in out and '<span class="s">"a\\"b"</span>' in out


def test_python_strings_numbers_and_decorators() -> None:
    code = (
        '@torch.no_grad()\ndef f(x=0x1F, y=1.5e-3, z=.5):\n    """Doc\n\n    string."""\n'
        "    return rb'\\x00' + Rf\"{x}\" + u'q' + x.type + type(x)\n"
    )
    out = highlight_fast(code, "python", linenos=False)
    assert '<span class="nd">@torch.no_grad</span>()' in out
    for expected in ['"mh">0x1F<', '"mf">1.5e-3<', '"mf">.5<', '"s2">Rf"{x}"<']:
        assert expected in out, expected
    assert "<span class=\"s1\">rb'\\x00'</span>" in out
    assert '<span class="sd">"""Doc\n\n    string."""</span>' in out
    assert 'x.type + <span class="nb">type</span>(x)' in out  # an attribute is no builtin


def test_tracebacks_get_the_traceback_lexers_classes() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "~/x.py", line 83, in forward\n'
        "    x = self.emb(idx)\n"
        "        ^^^^^^^^\n"
        "torch._dynamo.exc.Unsupported: Data-dependent branching\n"
        "  Explanation: Dynamo can't trace this if it's not in the graph.\n"
        "\n"
        "from user code:\n"
        '   File "~/model.py", line 12, in f\n'
        "    return x.item()\n"
        "Set TORCHDYNAMO_VERBOSE=1 if you're reporting a bug:\n"
        "  it's for the internal stack trace\n"
    )
    out = highlight_fast(trace, "pytb", linenos=False)
    assert '<span class="gt">Traceback (most recent call last):</span>' in out
    assert (
        '  File <span class="nb">"~/x.py"</span>, line <span class="m">83</span>,'
        ' in <span class="n">forward</span>'
    ) in out
    assert '    x = <span class="bp">self</span>.emb(idx)' in out
    assert '        <span class="pm">^^^^^^^^</span>' in out
    assert '<span class="gr">torch._dynamo.exc.Unsupported</span>: Data-dependent branching' in out
    # The message is prose: no keyword, and an apostrophe opens no string.
    assert "  Explanation: Dynamo can't trace this if it's not in the graph.\n" in out
    assert '    <span class="k">return</span> x.item()' in out  # a frame named in the message
    assert "\nSet TORCHDYNAMO_VERBOSE=1 if you're reporting a bug:\n  it's for the" in out
    alone = highlight_fast("ValueError: bad", "pytb", False)
    assert '<span class="gr">ValueError</span>: bad' in alone
    # After a frame, any name at column 0 is the exception, as in Pygments.
    failed = highlight_fast(
        trace.split("torch.")[0] + "exc.BackendCompilerFailed: x", "pytb", False
    )
    assert '<span class="gr">exc.BackendCompilerFailed</span>: x' in failed


def _pygments_table(text: str, lexer: Any, **options: Any) -> str:
    """Pygments' table layout, its line numbers without their ``normal`` spans."""
    formatter = HtmlFormatter(linenos="table", **options)
    table = pygments.highlight(text, lexer, formatter)
    return re.sub(r'<span class="normal">([^<]*)</span>', r"\1", table)


def test_emphasized_lines_are_written_as_pygments_writes_them() -> None:
    text = "".join(f"line {n} of the block\n" for n in range(12))
    for hl_lines, start in [([1, 3, 12], 1), ([2, 11], 95), ([], 1)]:
        expected = _pygments_table(text, TextLexer(), hl_lines=hl_lines, linenostart=start)
        assert highlight_fast(text, "none", True, start, hl_lines) == expected
    expected = pygments.highlight(text, TextLexer(), HtmlFormatter(hl_lines=[2]))
    assert highlight_fast(text, "none", False, 1, [2]) == expected
    # With tokens: the same structure once the token spans are taken out.
    code = 'def f(x):\n    """doc\n    more"""\n    return x  # c\n'
    theirs = _pygments_table(code, PythonLexer(), hl_lines=[2, 4])
    ours = highlight_fast(code, "python", True, 1, [2, 4])
    assert _structure(theirs) == _structure(ours)
    assert '<span class="hll">    <span class="sd">' in ours


def _structure(markup: str) -> str:
    """Markup without the token spans: line numbers, emphasis and text remain."""
    token = r'<span class="(?!linenos|hll)[^"]*">((?:(?!</?span).)*)</span>'
    while re.search(token, markup):
        markup = re.sub(token, r"\1", markup)
    return html.unescape(markup)


def test_the_translator_passes_emphasis_and_first_line() -> None:
    class Builder:
        name = "html"

    class Translator:
        body: list[str] = []
        builder = Builder()

        def starttag(self, node: nodes.Node, tag: str, suffix: str, CLASS: str) -> str:
            return f'<{tag} class="{CLASS}">'

    code = "a = 1\nb = 2\nc = 3"
    node = nodes.literal_block(code, code, language="python", linenos=True)
    node["classes"] = ["torchtrace-fast"]
    node["highlight_args"] = {"linenostart": 41, "hl_lines": [2]}
    with pytest.raises(nodes.SkipNode):
        visit_literal_block(Translator(), node)  # type: ignore[arg-type]
    out = "".join(Translator.body)
    assert out.startswith('<div class="highlight-python notranslate"><div class="highlight">')
    assert '<td class="linenos"><div class="linenodiv"><pre>41\n42\n43</pre>' in out
    assert '"hll">b = <span class="mi">2</span>\n</span>' in out
