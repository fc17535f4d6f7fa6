"""The parse of graph-break messages, pinned on real captures of torch 2.13 and on hostile text.

``tests/capture/corpus/graph_break_kinds.py`` breaks the graph in more than twenty ways;
each break's registry id, type and user line are pinned here, as the overview groups them.
"""

from __future__ import annotations

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.failures import failure_groups
from sphinx_torchtrace.trace.analyses.graph_breaks import CHAIN_MARKER, MAX_FIELD, parse_message
from sphinx_torchtrace.trace.inputs.text_log import load_text_log

from .conftest import DATA

KINDS_LOG = DATA / "corpus" / "graph_break_kinds" / "dedicated_log_torch_trace_jf2aien0.log.gz"
TEXT_LOG = DATA / "captured" / "torch_logs" / "options.log"

#: (category, registry ids of the parts, user line) of every row of the capture.
PINNED = {
    ("error", ("GB0142",), "graph_break_kinds.py:51"),
    ("error", ("GB0025", "GB7000"), "graph_break_kinds.py:200"),  # a break in a loop, chained
    # a break torch named in library code is placed at the user's line that led there
    ("graph_break", ("GB0156",), "graph_break_kinds.py:157"),
    ("graph_break", ("GB0156",), "graph_break_kinds.py:162"),
    ("graph_break", ("GB0025",), "graph_break_kinds.py:39"),  # torch._dynamo.graph_break()
    ("graph_break", ("GB0059",), "graph_break_kinds.py:45"),  # print
    ("graph_break", ("GB0059",), "graph_break_kinds.py:51"),  # open
    ("graph_break", ("GB0059",), "graph_break_kinds.py:58"),
    ("graph_break", ("GB0569",), "graph_break_kinds.py:64"),  # repr() on a tensor
    ("graph_break", ("GB0207",), "graph_break_kinds.py:69"),  # sort with non-constant keys
    ("graph_break", ("GB0170",), "graph_break_kinds.py:75"),  # data-dependent branching
    ("graph_break", ("GB0124",), "graph_break_kinds.py:82"),  # .item(), no scalar outputs
    ("graph_break", ("GB0124",), "graph_break_kinds.py:87"),
    ("graph_break", ("GB0036",), "graph_break_kinds.py:92"),  # dynamic shape operator
    ("graph_break", ("GB0109",), "graph_break_kinds.py:98"),  # tolist()
    ("graph_break", ("GB0098",), "graph_break_kinds.py:108"),  # torch.compiler.disable
    ("graph_break", ("GB0007",), "graph_break_kinds.py:113"),  # inspect (torch said inspect.py)
    ("graph_break", ("GB0007",), "graph_break_kinds.py:118"),
    ("graph_break", ("GB0007",), "graph_break_kinds.py:124"),
    ("graph_break", ("GB0007",), "graph_break_kinds.py:129"),
    ("graph_break", ("GB0007",), "graph_break_kinds.py:134"),
    ("graph_break", ("GB4198",), "graph_break_kinds.py:139"),  # deepcopy (torch said copy.py)
    ("graph_break", ("GB0291",), "graph_break_kinds.py:145"),  # logging
    ("graph_break", ("GB0007",), "graph_break_kinds.py:151"),
    ("graph_break", ("GB0007",), "graph_break_kinds.py:163"),
    ("graph_break", ("GB0059",), "graph_break_kinds.py:169"),
    ("graph_break", ("GB0294",), "graph_break_kinds.py:175"),  # numpy
    ("graph_break", ("GB0033",), "graph_break_kinds.py:180"),  # data-dependent operator
}


def test_every_kind_of_break_of_the_capture_is_read_with_its_id() -> None:
    trace = load_trace(KINDS_LOG)
    rows = {
        (
            g.category,
            tuple(p.registry_id for p in g.message.parts),
            (g.location or "").rsplit("/", 1)[-1],
        )
        for r in trace.ranks
        for g in failure_groups(r.compiles)
    }
    assert rows == PINNED
    ids = {i for _, parts, _ in rows for i in parts}
    assert len(ids) >= 15
    for r in trace.ranks:
        for g in failure_groups(r.compiles):
            first = g.message.parts[0]
            assert first.type and first.explanation and first.url, first
            assert first.url.endswith(f"/{first.registry_id.lower()}.html")  # type: ignore[union-attr]


def test_text_logs_give_the_same_structure() -> None:
    trace = load_text_log(TEXT_LOG)
    parts = [p for r in trace.ranks for g in failure_groups(r.compiles) for p in g.message.parts]
    print_break = next(p for p in parts if p.registry_id == "GB0059")
    assert print_break.type == "Failed to trace builtin operator"
    assert any("print" in h for h in print_break.hints)


def test_a_cut_or_unknown_message_is_kept() -> None:
    cut = parse_message("Graph break in user code at /x/m.py:3\nGraph Break Reason: Encount")
    assert cut.location is not None and cut.location.line == 3
    assert cut.headline  # never dropped
    unknown = parse_message("something torch said one day\nwith a second line")
    assert unknown.headline == "something torch said one day"
    assert unknown.text == "something torch said one day\nwith a second line"  # whole
    assert all(p.registry_id is None for p in unknown.parts)
    old = parse_message("Graph Break Reason: Call to `torch._dynamo.graph_break()`")  # no id
    assert old.parts[0].type == "Call to `torch._dynamo.graph_break()`"
    assert old.parts[0].registry_id is None and old.key == (old.parts[0].type,)


def test_hostile_messages_cost_bounded_work() -> None:
    """A megabyte of chain markers, hints or one endless line: fields stay bounded."""
    chained = parse_message(f"*** {CHAIN_MARKER}: ***\nT\n" * 60_000)
    assert len(chained.parts) <= 20_000
    hints = parse_message("T\n" + "Hint: " + "h" * 1_000_000)
    assert len(hints.parts[0].hints[0]) <= MAX_FIELD
    long_line = parse_message("x" * 2_000_000)
    assert len(long_line.headline) <= MAX_FIELD
