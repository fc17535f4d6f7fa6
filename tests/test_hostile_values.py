"""Hostile values never break the analyses or the page views (issue 9, part A).

A log is untrusted input, read all the way: model → plan → every page view (the
blocks the Sphinx layer turns into nodes) and every chart drawn from them.
Decisions pinned here:

* A number no compile could have measured (infinite, NaN, subnormal, ``1e308``,
  400 digits, negative, a string) counts as **not logged**: a dash where a fact
  or a sum would show it, the value as the log has it (text) in the frame's
  metric table.  The record's other metrics still show.
* A chromium event whose ``pid``, ``tid`` or ``name`` is a list or an object is
  still read (one corrupt thread), never a TypeError; its bad times are dropped.
* Values of the wrong shape (a list for an object, a string for a number and the
  reverse) and names that are lone surrogates, 300 characters long or full of
  line separators reach the blocks as text: every text slot of every block holds
  a ``str``, and every docname segment stays short (issue 5).
* Stacks: 100 frames build every page and the overview's trie nests at most 4
  lists; 3,000 frames cost seconds and megabytes, not minutes and gigabytes.
* Every regular expression run over trace text is linear: the **linear-time
  robustness tests** below give each 1 MB adversarial strings under a generous
  10 s bound, in a child process so that a quadratic pattern (hours on 1 MB)
  fails the test instead of hanging the suite.  They are no timing benchmark.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sphinx_torchtrace.render.charts import draw
from sphinx_torchtrace.render.paths import SITE_PACKAGES, PathRewriter
from sphinx_torchtrace.site.blocks import (
    Admonition,
    AnchorLink,
    ApiLink,
    Badge,
    Block,
    BulletList,
    Chart,
    Code,
    CodeBlock,
    Download,
    Dropdown,
    Emphasis,
    Inline,
    Lines,
    Link,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Paragraph,
    Provenance,
    Section,
    Strong,
    Table,
    TabSet,
    Target,
    Toctree,
    WebOnly,
)
from sphinx_torchtrace.site.pages import build_page
from sphinx_torchtrace.site.plan import PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.site.source import _without_graph_code
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.guards import GUARD_COMMENT

from .conftest import DATA, SHARED, SIMPLE_LOG

INPUTS = SHARED / "tlparse-inputs" / "inputs"
BUNDLED_LOGS = sorted(p for p in DATA.rglob("*.log*") if "expected" not in p.parts)

# -- writing logs -----------------------------------------------------------------------------

PREFIX = "V1121 11:50:48.850000 5896 torch/_dynamo/utils.py:2350] "


def record(envelope: dict[str, Any], payload: str | None = None) -> str:
    """One record as torch writes it: glog prefix, JSON envelope, TAB-indented payload lines.

    ``json.dumps`` writes lone surrogates as ``\\ud800`` escapes (legal JSON) and
    infinities and NaN as ``Infinity`` and ``NaN``, which torch's json also reads.
    """
    if payload is not None:
        envelope = {**envelope, "has_payload": hashlib.md5(payload.encode()).hexdigest()}
    text = PREFIX + json.dumps(envelope) + "\n"
    if payload is not None:
        text += "".join(f"\t{line}\n" for line in payload.split("\n"))
    return text


def ids(frame: Any = 0, compile_: Any = 0, attempt: Any = 0) -> dict[str, Any]:
    return {"frame_id": frame, "frame_compile_id": compile_, "attempt": attempt}


def chromium(name: Any, ph: Any, ts: Any, *, pid: Any = 0, tid: Any = 0, **extra: Any) -> str:
    event = {"name": name, "ph": ph, "ts": ts, "pid": pid, "tid": tid, "args": {}, **extra}
    return record({"chromium_event": {}, **ids()}, json.dumps(event, indent=1))


def metrics(frame: int = 0, compile_: int = 0, **values: Any) -> str:
    data = {
        "co_name": "forward",
        "co_filename": "/home/user/project/model.py",
        "co_firstlineno": 12,
        "entire_frame_compile_time_s": 2.5,
        "backend_compile_time_s": 1.25,
        "inductor_compile_time_s": 1.0,
        "guard_count": 7,
        "graph_op_count": 3,
        **values,
    }
    return record({"compilation_metrics": data, **ids(frame, compile_)})


def stack(depth: int, name: str = "f") -> list[dict[str, Any]]:
    return [
        {
            "line": i + 1,
            "name": f"{name}{i}",
            "filename": f"/home/user/project/m{i % 5}.py",
            "loc": f"x = {name}{i + 1}(x)",
        }
        for i in range(depth)
    ]


def write(directory: Path, text: str, name: str = "hostile.log") -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


# -- reading every page -----------------------------------------------------------------------


def inline_strings(content: Sequence[Inline]) -> Iterator[str]:
    """The text of inline content as one string, asserting each piece holds a ``str``
    (what a ``nodes.Text`` needs)."""
    out = []
    for piece in content:
        if isinstance(piece, str):
            out.append(piece)
        elif isinstance(piece, (Code, Strong, Emphasis, Link, PageLink, AnchorLink, Download)):
            assert isinstance(piece.text, str), piece
            out.append(piece.text)
        elif isinstance(piece, ObjectLink):
            assert isinstance(piece.name, str) and isinstance(piece.text, (str, type(None)))
            out.append(piece.text or piece.name)
        elif isinstance(piece, ApiLink):
            assert isinstance(piece.target, str) and isinstance(piece.text, str), piece
            out.append(piece.text)
        elif isinstance(piece, WebOnly):  # both wordings: the web's and the printed one
            out.extend(inline_strings([*piece.web, *piece.printed]))
        else:
            assert isinstance(piece, Badge) and isinstance(piece.status, str), piece
            out.append(piece.status)
    yield "".join(out)


def block_strings(block: Block) -> Iterator[str]:
    """Every text a block shows; charts are drawn (as the HTML builder would) on the way."""
    if isinstance(block, Paragraph):
        yield from inline_strings(block.content)
    elif isinstance(block, Lines):
        for line in block.lines:
            yield from inline_strings(line)
    elif isinstance(block, BulletList):
        for entry in block.items:
            for child in entry:
                yield from block_strings(child)
    elif isinstance(block, Table):
        assert all(isinstance(h, str) for h in block.header), block.header
        yield from block.header
        for row in block.rows:
            for cell in row:
                yield from inline_strings(cell)
    elif isinstance(block, CodeBlock):
        assert isinstance(block.text, str)
        yield block.text
    elif isinstance(block, (Dropdown, Section)):
        yield from inline_strings(block.title)
        for child in block.blocks:
            yield from block_strings(child)
    elif isinstance(block, TabSet):
        for tab in block.tabs:
            assert isinstance(tab.title, str)
            yield tab.title
            for child in tab.blocks:
                yield from block_strings(child)
    elif isinstance(block, Admonition):
        for child in block.blocks:
            yield from block_strings(child)
    elif isinstance(block, Chart):
        svg = draw(block.kind, block.data, block.title)
        assert svg.startswith("<svg")
        for child in block.fallback:
            yield from block_strings(child)
    else:
        assert isinstance(block, (Target, ObjectTarget, Provenance, Toctree)), block


def page_text(page: Page) -> str:
    parts = list(inline_strings(page.title))
    for block in page.blocks:
        parts.extend(block_strings(block))
    return "\n".join(parts)


def every_page(path: Path, settings: PageSettings | None = None) -> dict[str, str]:
    """Model → plan → every page view of a log: ``{docname: the text the page shows}``."""
    plan = plan_trace("hostile", load_trace(path), "torchtrace")
    return pages_of(plan, settings or PageSettings())


def pages_of(plan: TracePlan, settings: PageSettings) -> dict[str, str]:
    pages = {}
    for docname in plan.docnames:
        page = build_page(plan, docname, settings)
        assert page.docname == docname
        pages[docname] = page_text(page)
    return pages


def frame_page_text(pages: dict[str, str], frame_segment: str = "frame-0-0") -> str:
    return next(text for name, text in pages.items() if name.endswith(f"/{frame_segment}"))


# -- values of the wrong size -----------------------------------------------------------------

ABSURD_NUMBERS: list[Any] = [
    math.inf,
    -math.inf,
    math.nan,
    5e-324,
    1e308,
    -1e308,
    10**400,
    -(10**400),
    -1,
    -0.5,
]
WRONG_TYPES: list[Any] = ["12.5", "inf", "", [1, 2], {"s": 1}, True, None]


def short_id(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 12 else f"{type(value).__name__}-of-{len(text)}-chars"


@pytest.mark.parametrize("value", ABSURD_NUMBERS + WRONG_TYPES, ids=short_id)
def test_one_absurd_metric_leaves_the_others_shown(value: Any, tmp_path: Path) -> None:
    text = record({"dynamo_start": {"stack": stack(3)}, **ids()}) + metrics(
        entire_frame_compile_time_s=value, code_gen_time_s=value, graph_node_count=value
    )
    pages = every_page(write(tmp_path, text))
    frame = frame_page_text(pages)
    # the metric table's other rows
    assert "backend_compile_time_s (Backend compile time)\n1.250 s" in frame
    assert "guard_count (Guards)\n7" in frame and "graph_op_count (Graph operators)\n3" in frame
    assert "Graph: 3 operators" in frame  # the facts line keeps the sane counts
    overview = pages["torchtrace/hostile/index"]
    assert "Compile time charts" in overview
    assert "Compile time: " not in frame  # no "Compile time: inf s" among the facts
    assert "inf s" not in overview and "nan s" not in overview
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        logged = str(value) if len(str(value)) <= 40 else str(value)[:37] + "..."
        label = "entire_frame_compile_time_s (Entire frame compile time)"
        assert f"{label}\n{logged}\n" in frame  # as text, as logged


@pytest.mark.parametrize("value", ABSURD_NUMBERS + WRONG_TYPES, ids=short_id)
def test_absurd_event_times(value: Any, tmp_path: Path) -> None:
    text = (
        record({"dynamo_start": {"stack": stack(2)}, **ids()})
        + chromium("entire_frame_compile", "B", 1_000_000)
        + chromium("entire_frame_compile", "E", 3_000_000)
        + chromium("backend_compile", "B", value)
        + chromium("backend_compile", "E", 2_500_000)
        + chromium("inductor_compile", "X", value, dur=value)
        + chromium("code_gen", "X", 1_500_000, dur=value)
        + metrics(
            entire_frame_compile_time_s=None,
            backend_compile_time_s=None,
            inductor_compile_time_s=None,
        )
    )
    overview = every_page(write(tmp_path, text))["torchtrace/hostile/index"]
    # the sane pair still times the frame, in the charts' table and among the timers
    assert "entire_frame_compile\n2.000 s\n1" in overview
    assert "[0/0]\nforward\n2.000" in overview


@pytest.mark.parametrize("bad", [[1, 2], {"x": [1]}, [], {}], ids=repr)
def test_unhashable_chromium_ids(bad: Any, tmp_path: Path) -> None:
    text = (
        record({"dynamo_start": {"stack": stack(2)}, **ids()})
        + chromium("entire_frame_compile", "B", 1_000_000)
        + chromium("dynamo", "B", 1_000_000, pid=bad)
        + chromium("dynamo", "E", 1_500_000, tid=bad)
        + chromium(bad, "B", 1_000_000)
        + chromium(bad, "E", 1_200_000, pid=bad, tid=bad)
        + chromium("entire_frame_compile", "E", 3_000_000)
        + metrics()
    )
    pages = every_page(write(tmp_path, text))
    assert "entire_frame_compile\n2.000 s\n1" in pages["torchtrace/hostile/index"]


def test_wrong_shapes_everywhere(tmp_path: Path) -> None:
    """Lists for objects, strings for numbers and the reverse, in every record kind read."""
    text = "".join(
        [
            record({"str": {"not": "a pair"}}),
            record({"str": ["/home/user/project/x.py", "7"]}),
            record({"dynamo_start": {"stack": {"not": "a list"}}, **ids()}),
            record({"dynamo_start": [1, 2], **ids(1)}),
            record(
                {
                    "dynamo_start": {
                        "stack": [
                            {"line": "12", "name": 5, "filename": 2.5, "loc": ["x"]},
                            {"line": 10**300, "name": None, "filename": 7, "loc": 3},
                            "not a frame",
                        ]
                    },
                    **ids(2),
                }
            ),
            record({"compilation_metrics": [1, 2, 3], **ids()}),
            record({"compilation_metrics": "text", **ids(1)}),
            metrics(
                2,
                co_name=5,
                co_filename=["a"],
                co_firstlineno="x",
                fail_type=[1],
                fail_reason={"a": 1},
                restart_reasons="not a list",
                fail_user_frame_filename=3,
                fail_user_frame_lineno=[1],
                dynamo_config="{not json",
                inductor_config=[1, {"a": 2}],
                non_compliant_ops={"a": 1},
                cudagraph_skip_reason=12,
            ),
            metrics(
                2,
                1,
                dynamo_config=json.dumps({"recompile_limit": "8", "cache_size_limit": 10**400}),
            ),
            record({"bwd_compilation_metrics": {"inductor_compile_time_s": "1"}, **ids(2)}),
            record({"artifact": ["name"], **ids(2)}, "payload"),
            record({"artifact": {"name": 5, "encoding": 3}, **ids(2)}, "{}"),
            record(
                {"artifact": {"name": "recompile_reasons", "encoding": "json"}, **ids(2, 1)},
                json.dumps([{"a": 1}, 5, None, "0/0: x.size()[0] == 3  # s = x.size()"]),
            ),
            record(
                {"artifact": {"name": "torch_version", "encoding": "json"}},
                json.dumps({"pytorch_version": {"major": 2}}),
            ),
            record(
                {"artifact": {"name": "fx_graph_cache_hit", "encoding": "json"}, **ids(2)}, "[]"
            ),
            record({"create_symbol": [1], **ids(2)}),
            record(
                {
                    "create_symbol": {
                        "symbol": ["s0"],
                        "val": {"a": 1},
                        "vr": 5,
                        "user_stack": {"a": 1},
                    },
                    **ids(2),
                }
            ),
            record(
                {
                    "guard_added": {"expr": 5, "prefix": "eval", "user_stack": [1, "x", None]},
                    **ids(2),
                }
            ),
            record(
                {
                    "propagate_real_tensors_provenance": {
                        "expr": [1],
                        "result": {"a": 1},
                        "user_stack": "x",
                    }
                }
            ),
            record({"missing_fake_kernel": {"op": {"a": 1}, "reason": [1]}}),
            record(
                {
                    "create_unbacked_symbol": {
                        "symbol": None,
                        "vr": [1],
                        "user_stack": [{"filename": [1]}],
                    }
                }
            ),
            record({"link": [1, 2], **ids(2)}),
            record({"link": {"name": 5, "url": ["x"]}, **ids(2)}),
            record({"dynamo_guards": {}, **ids(2)}, "[1, 2"),
            record({"chromium_event": [], **ids(2)}, json.dumps([1, 2])),
            record({"chromium_event": {}, **ids(2)}, json.dumps({"name": 5, "ph": ["B"]})),
        ]
    )
    for no_source in (False, True):
        pages = every_page(write(tmp_path, text), PageSettings(no_source=no_source))
        frame = frame_page_text(pages, "frame-2-0")  # the compile whose metrics are odd
        assert "fail_type (Failure type)\n1\n" in frame and "guard_count (Guards)\n7" in frame
        assert "Compile directory" in pages["torchtrace/hostile/index"]


# -- deep stacks --------------------------------------------------------------------------------


def nesting(blocks: Sequence[Block]) -> int:
    """How many bullet lists nest inside each other, at most, among these blocks."""
    deepest = 0
    for block in blocks:
        if isinstance(block, BulletList):
            inner = max((nesting(entry) for entry in block.items), default=0)
            deepest = max(deepest, 1 + inner)
        elif isinstance(block, (Section, Dropdown, Admonition)):
            deepest = max(deepest, nesting(block.blocks))
        elif isinstance(block, TabSet):
            deepest = max(deepest, *(nesting(tab.blocks) for tab in block.tabs))
    return deepest


def deep_stack_log(directory: Path, depth: int) -> Path:
    frames = stack(depth)
    text = (
        record({"dynamo_start": {"stack": frames}, **ids()})
        + metrics()
        + record({"dynamo_start": {"stack": frames[: depth // 2] + stack(3, "g")}, **ids(1)})
        + metrics(1)
    )
    return write(directory, text)


def test_a_stack_of_100_frames(tmp_path: Path) -> None:
    plan = plan_trace("deep", load_trace(deep_stack_log(tmp_path, 100)), "torchtrace")
    pages = pages_of(plan, PageSettings())
    overview = build_page(plan, plan.index_docname, PageSettings())
    assert nesting(overview.blocks) <= 4  # docutils recursion, LaTeX's 4 nested lists
    assert "(depth 100) " in pages[plan.index_docname]  # the deepest frame, listed flat
    frame = frame_page_text(pages)
    assert all(f"\nf{i}\n" in frame for i in range(100))  # the stack table, every frame


def test_a_stack_of_3000_frames_costs_seconds_and_megabytes(tmp_path: Path) -> None:
    path = deep_stack_log(tmp_path, 3000)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        pages = every_page(path)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 30 and peak < 512 << 20, (seconds, peak)  # measured: 1 s, 10 MB
    assert "(depth 3000) " in pages["torchtrace/hostile/index"]


# -- names: lone surrogates, 300 characters, line separators ------------------------------------

HOSTILE_NAMES = {
    "surrogate": "\ud800",
    "surrogates": "x\udfff\ud800y",
    "long": "n" * 300,
    "line-separators": "a\u2028b\u2029c\x85d\re\nf\x0bg\x1ch",
    "controls": "\x00\x1b[31m\x7f\x9f",
    "digits": "9" * 300,
}


def named_log(name: str) -> str:
    """A compile whose every name-like field the views read is ``name``."""
    frame = {"line": 3, "name": name, "filename": 0, "loc": name}
    graph = "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = x + 1\n"
    return "".join(
        [
            record({"str": [name, 0]}),
            record(
                {"artifact": {"name": "torch_version", "encoding": "json"}},
                json.dumps({"pytorch_version": name}),
            ),
            record({"dynamo_start": {"stack": [frame, {**frame, "line": 4}]}, **ids()}),
            chromium(name, "B", 1_000_000, pid=name, tid=name),
            chromium(name, "E", 2_000_000, pid=name, tid=name),
            record({"dynamo_output_graph": {"sizes": {name: [1]}}, **ids()}, graph),
            record({"artifact": {"name": name, "encoding": "string"}, **ids()}, "content"),
            record(
                {"artifact": {"name": f"fx_graph_cache_{name}_hit", "encoding": "json"}, **ids()},
                "{}",
            ),
            record({"graph_dump": {"name": name}, **ids()}, graph),
            record(
                {
                    "create_symbol": {
                        "symbol": name,
                        "val": name,
                        "vr": name,
                        "source": name,
                        "user_stack": [frame],
                    },
                    **ids(),
                }
            ),
            record({"link": {"name": name, "url": name}, **ids()}),
            metrics(
                co_name=name,
                co_filename=name,
                fail_type=name,
                fail_reason=name,
                fail_user_frame_filename=name,
                restart_reasons=[name],
                cudagraph_skip_reason=name,
                dynamo_config=json.dumps({"recompile_limit": name, name: name}),
            ),
            record({"dynamo_start": {"stack": [frame]}, **ids(0, 1)}),
            record(
                {"artifact": {"name": "recompile_reasons", "encoding": "json"}, **ids(0, 1)},
                json.dumps([f"0/0: {name}  # {name}", name]),
            ),
            record({"guard_added": {"expr": name, "prefix": "eval", "user_stack": [frame]}}),
            record({"create_unbacked_symbol": {"symbol": name, "vr": name, "user_stack": [frame]}}),
            record({"missing_fake_kernel": {"op": name, "reason": name}}),
            record(
                {
                    "propagate_real_tensors_provenance": {
                        "expr": name,
                        "result": name,
                        "user_stack": [frame],
                    }
                }
            ),
        ]
    )


@pytest.mark.parametrize("name", HOSTILE_NAMES.values(), ids=HOSTILE_NAMES.keys())
@pytest.mark.parametrize("no_source", [False, True], ids=["source", "no-source"])
def test_hostile_names_in_every_field(name: str, no_source: bool, tmp_path: Path) -> None:
    path = write(tmp_path, named_log(name))  # json.dumps escapes what UTF-8 cannot hold
    plan = plan_trace("hostile", load_trace(path), "torchtrace")
    pages = pages_of(plan, PageSettings(no_source=no_source))
    for docname in pages:  # issue 5: a page's file name stays short whatever the name
        assert all(len(segment) <= 64 for segment in docname.split("/")), docname
    assert name in frame_page_text(pages)  # the function's name, as text
    assert name in pages[plan.index_docname]  # in the trie, the directory, the failures ...


def test_a_300_digit_frame_id_and_rank(tmp_path: Path) -> None:
    huge = 10**300
    text = record(
        {"dynamo_start": {"stack": stack(2)}, **ids(huge, huge, huge), "rank": huge}
    ) + metrics(frame=huge, compile_=huge)
    pages = every_page(write(tmp_path, text))
    for docname in pages:
        assert all(len(segment) <= 64 for segment in docname.split("/")), docname


def surrogate_text(value: Any) -> Any:
    """Every string of a JSON value, and every number, made hostile (shape kept)."""
    if isinstance(value, dict):
        return {k: surrogate_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [surrogate_text(v) for v in value]
    if isinstance(value, str):
        return value + "\ud800" + "\u2028" + "n" * 300
    if isinstance(value, bool) or value is None:
        return value
    return 10**400 if isinstance(value, int) else math.inf


@pytest.mark.parametrize(
    "log", [SIMPLE_LOG, INPUTS / "export.log", INPUTS / "comp_failure.log"], ids=lambda p: p.stem
)
def test_every_string_and_number_of_a_real_log_made_hostile(log: Path, tmp_path: Path) -> None:
    hostile = []
    for envelope, lines, has_payload in parse_log(log.read_bytes()):
        try:  # JSON payloads too: chromium events, metrics artifacts, the torch version
            lines = json.dumps(surrogate_text(json.loads(b"\n".join(lines)))).encode().split(b"\n")
        except ValueError:
            pass
        hostile.append((surrogate_text(envelope), lines, has_payload))
    pages = every_page(write(tmp_path, serialize(hostile)))
    overview = pages.pop("torchtrace/hostile/index")
    assert "Compile directory" in overview and pages  # the compiles and their pages remain


# -- property: mutants of real logs, through every page view ----------------------------------


def parse_log(data: bytes) -> list[tuple[dict[str, Any], list[bytes], bool]]:
    """(envelope, payload lines, had a payload) of each record of a clean log."""
    out: list[tuple[dict[str, Any], list[bytes], bool]] = []
    for line in data.split(b"\n"):
        if line.startswith(b"\t"):
            out[-1][1].append(line[1:])
        elif line:
            envelope = json.loads(line[line.index(b"] {") + 2 :])
            out.append((envelope, [], "has_payload" in envelope))
    return out


def serialize(records: Sequence[tuple[Any, Sequence[bytes], bool]]) -> str:
    text = []
    for envelope, lines, has_payload in records:
        body = b"\n".join(lines).decode("utf-8", "replace")
        if isinstance(envelope, dict):
            envelope = {k: v for k, v in envelope.items() if k != "has_payload"}
            text.append(record(envelope, body if has_payload else None))
        else:  # an envelope that is no object at all
            text.append(PREFIX + json.dumps(envelope) + "\n")
    return "".join(text)


def _slice(path: Path, size: int) -> bytes:
    data = path.read_bytes()
    return data[: data.index(b"\nV", size) + 1] if len(data) > size else data


MUTATION_SEEDS = [
    parse_log(_slice(SIMPLE_LOG, 60_000)),
    parse_log((INPUTS / "comp_metrics.log").read_bytes()),
    parse_log((INPUTS / "chromium_events.log").read_bytes()),
    parse_log((INPUTS / "export.log").read_bytes()),
    parse_log((INPUTS / "comp_failure.log").read_bytes()),
    parse_log((INPUTS / "cache_hit_miss.log").read_bytes()),
]

HOSTILE_VALUES = st.sampled_from(
    [
        None,
        True,
        0,
        -1,
        5e-324,
        1e308,
        -1e308,
        math.inf,
        -math.inf,
        math.nan,
        10**400,
        "",
        "\ud800",
        "n" * 300,
        "a\u2028b\x85c\nd",
        [],
        [1, [2]],
        {},
        {"a": [1]},
        "1.5",
        "[" * 3000 + "]" * 3000,
        json.dumps({"recompile_limit": 10**400}),
    ]
)
#: Mostly the values above (each breaks something somewhere), some drawn freely.
hostile_values = st.one_of(
    HOSTILE_VALUES, HOSTILE_VALUES, HOSTILE_VALUES, st.text(max_size=20), st.integers(), st.floats()
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*path, index))


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(value[path[0]], path[1:], new)
    return copy


@st.composite
def mutants(draw_: st.DrawFn) -> str:
    """A real log with some JSON values (in envelopes or JSON payloads) made hostile,
    or whole records duplicated, dropped or swapped; payload md5s stay right."""
    records = list(draw_(st.sampled_from(MUTATION_SEEDS)))
    for _ in range(draw_(st.integers(1, 12))):
        i = draw_(st.integers(0, len(records) - 1))
        envelope, lines, has_payload = records[i]
        op = draw_(st.sampled_from(["envelope", "envelope", "payload", "payload", "dup", "swap"]))
        if op == "dup":
            records.insert(i, records[i])
        elif op == "swap":
            j = draw_(st.integers(0, len(records) - 1))
            records[i], records[j] = records[j], records[i]
        elif op == "payload" and lines:
            try:
                body = json.loads(b"\n".join(lines))
            except (ValueError, RecursionError):
                continue
            path = draw_(st.sampled_from(list(_paths(body))))
            body = _replaced(body, path, draw_(hostile_values))
            records[i] = (envelope, json.dumps(body, indent=1).encode().split(b"\n"), True)
        elif isinstance(envelope, dict):
            path = draw_(st.sampled_from(list(_paths(envelope))[1:] or [()]))
            records[i] = (_replaced(envelope, path, draw_(hostile_values)), lines, has_payload)
    return serialize(records)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutants(), no_source=st.booleans())
def test_mutants_of_real_logs_build_every_page(text: str, no_source: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        pages = every_page(write(Path(tmp), text), PageSettings(no_source=no_source))
    assert "torchtrace/hostile/index" in pages


# -- linear time: the regular expressions that see trace text ---------------------------------

#: A generous bound for some forty 1 MB texts: the linear patterns take a few seconds in all
#: (more on a loaded CI machine), a quadratic one hours.
LINEAR_BOUND_S = 30.0

#: Adversarial texts of about 1 MB each (Python expressions; MB is 2**20): runs of the
#: characters the patterns quantify over, and the literals they look for, repeated.
ADVERSARIAL = [
    '"/" * MB',
    '" " * MB',
    '"\\n" * MB',
    '"\\t" * MB',
    '"a" * MB',
    '":" * MB',
    '"0" * MB',
    '"#" * MB',
    '"\\"" * MB',
    '"=" * MB',
    '"a " * (MB // 2)',
    '"a" + " " * MB + "#"',
    '"/a" * (MB // 2)',
    '"/home/" * (MB // 6)',
    '"/home/" + "a" * MB',
    '"site-packages/" * (MB // 14)',
    '"/x/site-packages" * (MB // 17)',
    '"-packages/" * (MB // 10)',
    '"# File: " * (MB // 8)',
    '"# File: " + ", code" * (MB // 6)',
    '"  # " * (MB // 4)',
    '"File \\"" * (MB // 6)',
    '" \\n" * (MB // 2)',
    '"extern \\"C\\" " + " " * MB',
    '"0/0: " + " " * MB + "x"',
    '"Hint:" * (MB // 5)',
    '"https://pytorch.github.io/compile-graph-break-site/gb/gb" * 20000',
]


def run_bounded(setup: str, call: str) -> None:
    """``call`` (on ``text``) for every adversarial text, in a child process under the bound."""
    texts = ", ".join(ADVERSARIAL)
    code = f"MB = 1 << 20\n{setup}\nfor text in [{texts}]:\n    {call}\n"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=LINEAR_BOUND_S
        )
    except subprocess.TimeoutExpired:  # the child is killed
        done = None
    if done is None:
        pytest.fail(f"over {LINEAR_BOUND_S} s on 1 MB texts: super-linear ({call})")
    assert done.returncode == 0, done.stderr[-3000:]


#: (what, setup, the call on ``text``): every pattern of this change, through its public use.
OWN_PATTERNS = [
    (
        "default path rewrites",
        "from sphinx_torchtrace.render.paths import PathRewriter; f = PathRewriter()",
        "f(text)",
    ),
    (":no-source:", "from sphinx_torchtrace.site.source import strip_source as f", "f(text)"),
    (
        "guard failures",
        "from sphinx_torchtrace.trace.analyses.recompiles import recompiled_functions\n"
        "from sphinx_torchtrace.trace.model import Compile, RankTrace\n"
        "from sphinx_torchtrace.trace.compile_id import CompileId\n"
        "rank = RankTrace('x', None, 0)\n"
        "c = Compile(CompileId(None, 0, 1, 0), 1, 1)\n"
        "rank.compiles.append(c)",
        "c.recompile_reasons[:] = [text, '0/0:' + text]; recompiled_functions(rank)",
    ),
    (
        "failure reasons",
        "from sphinx_torchtrace.trace.analyses.failures import failure_groups\n"
        "from sphinx_torchtrace.trace.model import Compile, Failure\n"
        "from sphinx_torchtrace.trace.compile_id import CompileId\n"
        "c = Compile(CompileId(None, 0, 0, 0), 1, 1)",
        "c.failures[:] = [Failure('graph_break', text, 1)]; failure_groups([c])",
    ),
]


class TestLinearTime:
    """Robustness, not a benchmark: each regex over trace text finishes 1 MB in seconds."""

    @pytest.mark.parametrize(
        "setup,call", [p[1:] for p in OWN_PATTERNS], ids=[p[0] for p in OWN_PATTERNS]
    )
    def test_own_patterns(self, setup: str, call: str) -> None:
        run_bounded(setup, call)

    @pytest.mark.parametrize(
        "module,name,method",
        [
            ("trace.kernels", "_SOURCE_NODES", "match"),
            ("trace.kernels", "_ASYNC_DEF", "match"),
            ("trace.kernels", "_AOTI_TRITON_DEF", "match"),
            ("trace.kernels", "_HEURISTIC", "search"),
            ("trace.kernels", "_METHOD_CALL", "match"),
            ("trace.kernels", "_AOTI_EXTERN", "search"),
            ("trace.analyses.compare", "_REASON_ENTRY", "match"),
            ("trace.inputs.builder", "_USER_LOCATION", "search"),
            ("site.naming", "_UNSAFE", "sub"),
            ("site.naming", "_PLAIN", "match"),
            ("site.naming", "_NOT_IN_NAME", "sub"),
            ("site.naming", "_NOT_IN_LABEL", "sub"),
            ("site.naming", "_NAME_ESCAPE", "sub"),
            ("site.characters", "_UNPRINTABLE_OR_CR", "sub"),
            ("site.characters", "_LINE_BREAKS", "sub"),
            ("render.highlight_regex", "PYTHON", "sub"),
            ("render.highlight_regex", "CPP", "sub"),
            ("render.highlight_regex", "_BLANKS", "split"),
            ("render.highlight_regex", "_PYTB_LINE", "fullmatch"),
            ("render.highlight_regex", "_PYTB_RAISED", "fullmatch"),
            ("render.highlight", "_FX_TOKENS", "sub"),
            ("render.fx_lexer", "_TOKENS", "sub"),
            ("render.xml", "_UNSAFE", "sub"),
            pytest.param("trace.kernels", "_AOTI_EXTERN_C_DEF", "match"),
            pytest.param("trace.kernels", "_PLAIN_CALL", "match"),
            pytest.param("trace.kernels", "_PY_EXTERN", "match"),
            pytest.param("trace.analyses.provenance", "_XNUMEL_DECL", "match"),
            pytest.param("trace.analyses.provenance", "_TRACE_FRAME", "finditer"),
        ],
    )
    def test_other_patterns(self, module: str, name: str, method: str) -> None:
        setup = f"from sphinx_torchtrace.{module} import {name} as pattern"
        if method == "sub":
            call = "pattern.sub(lambda m: m.group(0), text)"
        elif method in ("split", "finditer"):
            call = f"list(pattern.{method}(text))"
        else:
            call = f"pattern.{method}(text)"
        run_bounded(setup, call)

    @pytest.mark.parametrize(
        "module,name",
        [
            ("trace.reader", "_PREFIX"),
            ("trace.reader", "_RECORD_START"),
            ("trace.inputs.loader", "_STR_RECORD"),
            ("trace.inputs.loader", "_PID"),
            ("trace.inputs.builder", "_NODE_LINE"),
        ],
    )
    def test_byte_patterns(self, module: str, name: str) -> None:
        setup = f"from sphinx_torchtrace.{module} import {name} as pattern"
        run_bounded(setup, "list(pattern.finditer(text.encode()))")


# -- same results as before on real logs ------------------------------------------------------

#: The patterns the linear code replaces: references for their results, fast on real text.
QUADRATIC_SITE_PACKAGES = re.compile(r"/[^\s\"'<>]*?/(?:site|dist)-packages/")
QUADRATIC_GRAPH_CODE = re.compile(r"(# File: [^\n]*?), code: [^\n]*")
QUADRATIC_GUARD_COMMENT = re.compile(r"\s{2,}#\s")


def graph_code_as_before(line: str) -> bool:
    """Whether the linear cut of ``# File: ..., code: ...`` equals the old pattern's on
    ``line``; lines quoting the other forms (``# File "f.py", ...``), which the old pattern
    never cut, are left out."""
    if '# File "' in line or '# File \\"' in line:
        return True
    return _without_graph_code(line) == QUADRATIC_GRAPH_CODE.sub(r"\1", line)


def bundled_text(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        import gzip

        data = gzip.decompress(data)
    return data.decode("utf-8", "replace")


@pytest.mark.parametrize("log", BUNDLED_LOGS, ids=lambda p: str(p.relative_to(DATA)))
def test_linear_patterns_give_the_same_results_on_bundled_logs(log: Path) -> None:
    site_packages = re.compile(SITE_PACKAGES)
    text = bundled_text(log)
    for line in text.split("\n"):
        expected = QUADRATIC_SITE_PACKAGES.sub("<site-packages>/", line)
        assert site_packages.sub(r"\g<1><site-packages>/", line) == expected
    assert all(graph_code_as_before(line) for line in text.split("\n"))


PIECES = [
    "/",
    "site-packages/",
    "dist-packages/",
    "/site-packages/",
    "a",
    " ",
    '"',
    "<",
    "'",
    "\n",
    "x-packages/",
    "site",
    "-packages",
    "# File: ",
    ", code: ",
    "  # ",
    "File ",
    "    ",
    "\t",
    "#",
    "  #",
]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16).map("".join))
def test_linear_patterns_agree_with_the_old_ones_on_any_text(text: str) -> None:
    expected = QUADRATIC_SITE_PACKAGES.sub("<site-packages>/", text)
    assert re.sub(SITE_PACKAGES, r"\g<1><site-packages>/", text) == expected
    assert all(graph_code_as_before(line) for line in text.split("\n"))
    line = text.replace("\n", " ")  # a guard is one line
    expected_guard = QUADRATIC_GUARD_COMMENT.split(line, maxsplit=1)[0]
    assert GUARD_COMMENT.split(line, maxsplit=1)[0] == expected_guard


def test_default_rewrites_still_hide_paths() -> None:
    rewrite = PathRewriter()
    line = 'File "/home/ann/.venv/lib/python3.11/site-packages/torch/x.py", /root/a /home/b/c'
    assert rewrite(line) == 'File "<site-packages>/torch/x.py", ~/a ~/c'
