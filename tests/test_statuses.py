"""Statuses equal tlparse's (issue 9, class C) and cache hits say why graphs are missing (G).

A badge for ``[x/y]`` (stack trie, ``:torchtrace:frame:`` roles) shows the status of
``[x/y]`` over all its attempts, as tlparse 0.4.3's stack trie colors it; rows that list
attempts (``[0/0]``, ``[0/0_1]``) show each attempt's own status; ``[x/y]`` links to the
frame's first page.  Pinned on logs captured with torch 2.13 where attempt 0 restarted and
attempt 1 captured nothing (tests/capture/optimizer_graph_break.py, ddp_graph_break.py),
against tlparse's own output on the same logs (tests/data/expected/tlparse/).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

import pytest

from sphinx_torchtrace.site.blocks import (
    Badge,
    Block,
    BulletList,
    Dropdown,
    Inline,
    Lines,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Paragraph,
    Section,
    Table,
    TabSet,
    inline_text,
)
from sphinx_torchtrace.site.pages.frame import frame_page
from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.plan import FramePlan, PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.trace import CompileId, RankTrace, load_trace, read_log
from sphinx_torchtrace.trace.analyses.status import attempts_status, frame_status

from .conftest import DATA, SHARED, SiteMaker, warnings_of

CAPTURED = DATA / "captured"
PINNED = DATA / "expected" / "tlparse"
OPTIMIZER_LOG = next((CAPTURED / "optimizer_graph_break").glob("*.log"))
DDP_LOGS = sorted((CAPTURED / "ddp_graph_break").glob("*.log"))
RESTART_LOGS = [OPTIMIZER_LOG, *DDP_LOGS]

#: What tlparse 0.4.3's stack trie shows for every frame of these logs (read off its
#: index.html: tests/tools/tlparse_reference.py), written out so that a reader sees them.
TLPARSE_OPTIMIZER = {
    "[0/0]": "empty",  # attempt 0 restarted (graph break), attempt 1 captured nothing
    "[1/0]": "ok",
    "[2/0]": "empty",
    "[3/0]": "empty",
    "[4/0]": "empty",
    "[5/0]": "empty",
    "[6/0]": "ok",
    "[7/0]": "empty",  # graph_op_count null
}
TLPARSE_DDP = {
    "[0/0]": "empty",
    "[1/0]": "empty",
    "[2/0]": "empty",
    "[3/0]": "empty",
    "[4/0]": "empty",  # the DDP-wrapped forward: break first, nothing captured before it
    "[5/0]": "break",  # restarted, and its attempt 1 broke again
    "[6/0]": "ok",
}


def _pin(log: Path) -> dict[str, str]:
    pin = PINNED / (str(log.relative_to(DATA)) + ".json")
    statuses: dict[str, str] = json.loads(pin.read_text())["statuses"]
    return statuses


@cache
def _rank(log: Path) -> RankTrace:
    return read_log(log)


@cache
def _plan(log: Path) -> TracePlan:
    return plan_trace("run", load_trace(log), "torchtrace")


def _frame(plan: TracePlan, label: str) -> FramePlan:
    return next(f for f in plan.frames if f.compile.label == label)


def _walk(blocks: Sequence[Block]) -> Iterator[Block]:
    for b in blocks:
        yield b
        if isinstance(b, (Section, Dropdown)):
            yield from _walk(b.blocks)
        elif isinstance(b, TabSet):
            for tab in b.tabs:
                yield from _walk(tab.blocks)
        elif isinstance(b, BulletList):
            for it in b.items:
                yield from _walk(it)


def _section(page: Page, anchor: str) -> Section:
    return next(b for b in _walk(page.blocks) if isinstance(b, Section) and b.anchor == anchor)


def _texts(blocks: Sequence[Block]) -> str:
    parts: list[str] = []
    for b in _walk(blocks):
        if isinstance(b, Paragraph):
            parts.append(inline_text(b.content))
        elif isinstance(b, Lines):
            parts += [inline_text(line) for line in b.lines]
    return "\n".join(parts)


def _settings() -> PageSettings:
    return PageSettings()


# -- the model: frame statuses are tlparse's ------------------------------------------------


def test_pins_are_tlparse_output() -> None:
    """The statuses written out above are the ones tlparse printed for these logs."""
    assert _pin(OPTIMIZER_LOG) == TLPARSE_OPTIMIZER
    for log in DDP_LOGS:
        assert _pin(log) == TLPARSE_DDP


@pytest.mark.parametrize("log", RESTART_LOGS, ids=lambda p: p.parent.name + "/" + p.name[-12:])
def test_every_frame_status_equals_tlparse(log: Path) -> None:
    rank = _rank(log)
    ours = {cid: frame_status(rank, CompileId.parse(cid)) for cid in _pin(log)}
    assert ours == _pin(log)
    for c in rank.compiles:  # within one occurrence too
        if not c.id.is_unknown:
            assert attempts_status(rank, c) == _pin(log)[str(c.id.frame)]


def test_attempts_keep_their_own_status() -> None:
    """The pattern of issue 9: attempt 0 restarted (break), attempt 1 empty; [x/y] is empty."""
    rank = _rank(OPTIMIZER_LOG)
    first, second = rank.compile("[0/0]"), rank.compile("[0/0_1]")
    assert (first.status, first.restarted, second.status) == ("break", True, "empty")
    assert rank.first_attempt(second) is first
    assert attempts_status(rank, first) == attempts_status(rank, second) == "empty"
    ddp = _rank(DDP_LOGS[0])
    assert [ddp.compile(label).status for label in ("[5/0]", "[5/0_1]")] == ["break", "break"]


# -- pages: badges of [x/y] over all attempts, attempt rows their own ---------------------------


@pytest.mark.parametrize("log", RESTART_LOGS, ids=lambda p: p.parent.name + "/" + p.name[-12:])
def test_frame_objects_carry_tlparse_status(log: Path) -> None:
    """Every frame object: ``[x/y]`` on its first page with tlparse's status, attempts their own."""
    plan = _plan(log)
    declared: dict[str, tuple[str, str]] = {}
    for frame in plan.frames:
        page = frame_page(plan, frame, _settings())
        for b in page.blocks:
            if isinstance(b, ObjectTarget) and b.objtype == "frame":
                assert b.name not in declared
                declared[b.name] = (page.docname, b.status)
    for cid, status in _pin(log).items():
        docname, shown = declared[f"run/{cid}"]
        assert shown == status
        assert docname == _frame(plan, cid).docname  # the first page: attempt 0
    for frame in plan.frames:
        if frame.compile.id.attempt:
            assert declared[frame.name] == (frame.docname, frame.compile.status)


def test_stack_trie_badges_are_tlparse_statuses() -> None:
    """The stack trie links each [x/y] to the object whose badge shows tlparse's status."""
    plan = _plan(OPTIMIZER_LOG)
    objects = {
        b.name: b.status
        for f in plan.frames
        for b in frame_page(plan, f, _settings()).blocks
        if isinstance(b, ObjectTarget)
    }
    trie = _section(overview_page(plan, _settings()), "where-compilations-start")
    links = [
        piece
        for b in _walk(trie.blocks)
        if isinstance(b, Paragraph)
        for piece in b.content
        if isinstance(piece, ObjectLink)
    ]
    shown = {link.name.removeprefix("run/"): objects[link.name] for link in links}
    assert shown == TLPARSE_OPTIMIZER


def _directory_rows(page: Page) -> dict[str, tuple[list[Inline], str]]:
    directory = _section(page, "compile-directory")
    (table,) = [b for b in _walk(directory.blocks) if isinstance(b, Table)]
    # an ObjectLink's text is the object's name: key the rows by the compile id alone
    return {
        inline_text(row[0]).removeprefix("run/"): (list(row[0]), inline_text(row[2]))
        for row in table.rows
    }


def test_compile_directory_rows_show_each_attempts_own_status() -> None:
    plan = _plan(OPTIMIZER_LOG)
    rows = _directory_rows(overview_page(plan, _settings()))
    assert rows["[0/0]"][1] == "break" and rows["[0/0_1]"][1] == "empty"
    # no badge that contradicts the row: [0/0]'s badge would show the frame's "empty"
    (cell,) = rows["[0/0]"][0]
    assert cell == PageLink(_frame(plan, "[0/0]").docname, "[0/0]")
    assert rows["[0/0_1]"][0] == [ObjectLink("frame", "run/[0/0_1]")]
    assert rows["[1/0]"][0] == [ObjectLink("frame", "run/[1/0]")]  # one attempt: agrees


def test_frame_page_says_its_own_status_and_the_frames() -> None:
    plan = _plan(OPTIMIZER_LOG)
    first = frame_page(plan, _frame(plan, "[0/0]"), _settings())
    (status,) = [b for b in first.blocks if isinstance(b, Paragraph)][:1]
    assert status.content[0] == Badge("break")
    said = inline_text(status.content)
    assert "This attempt was restarted" in said
    assert said.endswith("Over all its attempts, [0/0] is empty.")
    second = frame_page(plan, _frame(plan, "[0/0_1]"), _settings())
    attempts = next(
        line
        for b in second.blocks
        if isinstance(b, Lines)
        for line in b.lines
        if inline_text(line).startswith("Attempts: ")
    )
    assert Badge("break") in attempts  # [0/0] listed with its own status
    assert inline_text(attempts) == "Attempts: [0/0] break → [0/0_1]"
    # a frame of one attempt: unchanged, its badge is its status
    single = frame_page(plan, _frame(plan, "[1/0]"), _settings())
    assert "Over all its attempts" not in _texts(single.blocks)


# -- a real build: roles link [x/y] to its first page, with tlparse's status ---------------------

_PAGE = """\
Optimizer
=========

.. torchtrace:: @DATA@/captured/optimizer_graph_break/{log}
   :name: run

The optimizer's frame :torchtrace:frame:`[2/0]`, its attempt :torchtrace:frame:`[2/0_1]`,
the model's :torchtrace:frame:`run/[1/0]`.
"""

_LINK = re.compile(
    r'<a class="[^"]*" href="(?P<href>[^"]*)" title="(?P<title>[^"]*)">'
    r'<span class="(?P<classes>[^"]*)">(?P<text>[^<]*)</span></a>'
)


def test_roles_in_a_real_build(make_site: SiteMaker) -> None:
    app = make_site("simple", pages={"index.rst": _PAGE.format(log=OPTIMIZER_LOG.name)})
    assert not warnings_of(app)
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    links = {m["text"]: m for m in _LINK.finditer(html)}
    whole, attempt, single = links["[2/0]"], links["[2/0_1]"], links["[1/0]"]
    assert "torchtrace-status-empty" in whole["classes"]  # tlparse: empty, attempt 0: break
    assert whole["href"].startswith("torchtrace/run/frame-2-0.html")  # the first page
    assert whole["title"] == "run/[2/0] (empty)"
    assert "torchtrace-status-empty" in attempt["classes"]
    assert attempt["href"].startswith("torchtrace/run/frame-2-0-attempt1.html")
    assert "torchtrace-status-ok" in single["classes"]
    overview = (Path(app.outdir) / "torchtrace" / "run" / "index.html").read_text("utf-8")
    trie = overview.split('id="where-compilations-start"', 1)[1].split('id="compile-directory"')[0]
    shown = {m["text"]: m["classes"] for m in _LINK.finditer(trie)}
    for cid, status in TLPARSE_OPTIMIZER.items():
        assert f"torchtrace-status-{status}" in shown[cid], cid


# -- G: cache hits say why graphs are missing; export only with export records ------------------


def _cache_plan(run: str) -> TracePlan:
    (log,) = (SHARED / "cache" / run).glob("*.log")
    return _plan(log)


def test_cache_hit_frame_says_graphs_were_not_logged() -> None:
    plan = _cache_plan("run2")  # a warm cache: FX graph and AOT autograd caches hit
    page = frame_page(plan, _frame(plan, "[0/0]"), _settings())
    said = _texts(_section(page, "artifacts").blocks)
    assert (
        "Some graphs not logged: compiled from the FX graph cache (hit) and the AOT autograd "
        "cache (hit)."
    ) in said
    assert "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1" in said
    cold = _cache_plan("run1")  # the cold run logged every graph
    for frame in cold.frames:
        assert "graphs not logged" not in _texts(frame_page(cold, frame, _settings()).blocks)


def test_capture_guide_asks_for_a_cold_cache() -> None:
    guide = (Path(__file__).parents[1] / "demo_docs" / "guide" / "capture.rst").read_text()
    assert "TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 TORCH_TRACE=" in guide


@pytest.mark.parametrize("log", [OPTIMIZER_LOG, *SHARED.glob("*/*.log")], ids=lambda p: p.stem)
def test_no_export_section_without_export_records(log: Path) -> None:
    plan = _plan(log)
    assert plan.trace.ranks[0].export.empty
    anchors = [
        b.anchor for b in _walk(overview_page(plan, _settings()).blocks) if isinstance(b, Section)
    ]
    assert "export-report" not in anchors


def test_ddp_ranks_in_a_real_build(make_site: SiteMaker) -> None:
    """The 2-rank DDP capture as one trace: each rank's stack trie shows tlparse's statuses."""
    page = "DDP\n===\n\n.. torchtrace:: @DATA@/captured/ddp_graph_break\n   :name: ddp\n"
    app = make_site("simple", pages={"index.rst": page})
    assert not warnings_of(app)
    overview = (Path(app.outdir) / "torchtrace" / "ddp" / "index.html").read_text("utf-8")
    trie = overview.split('id="where-compilations-start"', 1)[1].split('id="compile-directory"')[0]
    for rank in ("rank0", "rank1"):
        shown = {
            m["text"]: m["classes"]
            for m in _LINK.finditer(trie)
            if m["title"].startswith(f"ddp/{rank}/")
        }
        statuses = {
            text.removeprefix(f"{rank}/"): classes.split("torchtrace-status-")[1]
            for text, classes in shown.items()
        }
        assert statuses == TLPARSE_DDP
