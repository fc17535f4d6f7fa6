"""The FX-graph lexer: lossless, and it marks what readers look for."""

from __future__ import annotations

from pathlib import Path

from pygments.token import Comment, Name, String

from sphinx_torchtrace.render.fx_lexer import FxGraphLexer
from sphinx_torchtrace.trace import read_log

DATA = Path(__file__).parent / "data"


def test_every_graph_of_a_real_log_comes_back_unchanged() -> None:
    rank = read_log(DATA / "shared" / "training" / "dedicated_log_torch_trace_ukjvghtw.log")
    graphs = [a.text() for c in rank.compiles for a in c.artifacts if a.is_graph]
    assert len(graphs) > 10
    lexer = FxGraphLexer()
    for text in graphs:
        tokens = list(lexer.get_tokens_unprocessed(text))
        assert "".join(v for _, _, v in tokens) == text
        assert all(text[pos : pos + len(v)] == v for pos, _, v in tokens)


def test_node_names_operators_shapes_and_comments() -> None:
    line = (
        '        relu: "f32[8, 128][128, 1]cpu" = torch.ops.aten.relu.default(addmm);  addmm = None'
    )
    text = "class GraphModule(torch.nn.Module):\n" + line + "\n        # File: model.py:12\n"
    tokens = {(t, v) for _, t, v in FxGraphLexer().get_tokens_unprocessed(text)}
    assert (Name.Variable, "relu") in tokens
    assert (String, '"f32[8, 128][128, 1]cpu"') in tokens
    assert (Name.Function, "torch.ops.aten.relu.default") in tokens
    assert (Comment.Single, "# File: model.py:12") in tokens
