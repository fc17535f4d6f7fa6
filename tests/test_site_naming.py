"""Page names say what a page shows, never where its record sat in the log.

A URL or a cross-reference taken from one build must still lead to the same
graph after the program is traced again: records added or dropped elsewhere
in the log leave a page's docname and object name alone.  Names read from an
untrusted log can neither collide with generated ones nor make file names that
clash (also on case-insensitive file systems) or grow without bound.

Every case edits a real bundled log the way a recapture would differ.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from sphinx_torchtrace.site.plan import GraphPlan, TracePlan, plan_trace
from sphinx_torchtrace.trace import Trace, load_trace

from .conftest import DATA, SHARED, SIMPLE_LOG

TRAINING_LOG = next((SHARED / "training").glob("*.log"))
GLOO = DATA / "captured" / "multi_rank_gloo"
RANK0_LOG = next(GLOO.glob("*rank_0_*.log"))
RANK1_LOG = next(GLOO.glob("*rank_1_*.log"))

SEGMENT = re.compile(r"[a-z0-9-]+")
RAW_FILE = re.compile(r"[a-z0-9-]+\.(?:txt|py|json|cpp)")
FIXED_SEGMENTS = {"torchtrace", "_raw"}  # ours, the same in every site
MAX_SEGMENT = 80

PageKey = tuple[str, ...]


# -- editing real logs ---------------------------------------------------------------------


def records(log: Path) -> list[bytes]:
    """A log's records, each its envelope line and its TAB-indented payload lines."""
    out: list[bytes] = []
    for line in log.read_bytes().splitlines(keepends=True):
        if line.startswith(b"\t") and out:
            out[-1] += line
        else:
            out.append(line)
    return out


def envelope(record: bytes) -> dict[str, Any]:
    head = record.split(b"\n", 1)[0]
    value = json.loads(head.split(b"] ", 1)[1])
    assert isinstance(value, dict)
    return value


def record(kind: str, name: str, payload: str, **ids: int) -> bytes:
    """One record as torch writes it, with the md5 of its payload."""
    fields: dict[str, Any] = {kind: {"name": name}, **ids}
    fields["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    body = "".join(f"\n\t{line}" for line in payload.split("\n"))
    head = "V1121 11:50:48.850000 5896 torch/_logging/structured.py:28] "
    return (head + json.dumps(fields) + body + "\n").encode()


def graph_record(name: str, frame_id: int, compile_id: int = 0, text: str = "") -> bytes:
    """A ``graph_dump`` record: it always gets a page."""
    payload = text or f"graph {name!r}\n    x = torch.ops.aten.add(a, b)"
    return record("graph_dump", name, payload, frame_id=frame_id, frame_compile_id=compile_id)


def of_compile(rec: bytes, frame_id: int, compile_id: int, attempt: int = 0) -> bool:
    env = envelope(rec)
    ids = (env.get("frame_id"), env.get("frame_compile_id"), env.get("attempt", 0))
    return ids == (frame_id, compile_id, attempt)


def after_first(recs: list[bytes], new: bytes, *compile_id: int) -> list[bytes]:
    """``new`` just after the compile's first record, ahead of all its artifacts."""
    at = next(i for i, r in enumerate(recs) if of_compile(r, *compile_id))
    return [*recs[: at + 1], new, *recs[at + 1 :]]


def rank_claim(rank: int) -> bytes:
    """A first record that makes the log claim ``rank``."""
    fields = {"str": ["/claim.py", 987654], "rank": rank}
    head = "V1121 11:50:48.850000 5896 torch/_logging/structured.py:28] "
    return (head + json.dumps(fields) + "\n").encode()


def write(tmp_path: Path, recs: list[bytes], name: str = "edited.log") -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(recs))
    return path


def plan_of(logs: Path | list[Path], label: str = "t") -> TracePlan:
    trace: Trace = load_trace(logs)
    assert not [d for d in trace.diagnostics if d.subtype == "md5"], "an edit broke a payload"
    return plan_trace(label, trace, "torchtrace", fold_bytes=0)


# -- what a page is, whatever its name -----------------------------------------------------


def fingerprint(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def pages(plan: TracePlan) -> dict[PageKey, list[tuple[str, str]]]:
    """(docname, object name) of every frame, graph and kernel page, keyed by its content."""
    found: dict[PageKey, list[tuple[str, str]]] = defaultdict(list)
    rank_name = {id(r.rank): r.name for r in plan.ranks}
    for frame in plan.frames:
        where = (rank_name[id(frame.rank)], frame.compile.label)
        found[where + ("frame",)].append((frame.docname, frame.name))
        for g in frame.graphs:
            text = fingerprint(g.artifact.text())
            found[where + ("graph", g.artifact.name, text)].append((g.docname, g.name))
        for k in frame.kernels:
            code = fingerprint(k.kernel.source)
            found[where + ("kernel", k.kernel.name, code)].append((k.docname, k.name))
    return dict(found)


def all_names(plan: TracePlan) -> tuple[list[str], list[str], list[str]]:
    """Every docname, every (typed) object name and every raw download of a plan."""
    docnames = plan.docnames
    objects = [f"frame {f.name}" for f in plan.frames]
    objects += [f"graph {g.name}" for f in plan.frames for g in f.graphs]
    objects += [f"kernel {k.name}" for f in plan.frames for k in f.kernels]
    raws = [g.raw_path for f in plan.frames for g in f.graphs if g.same_as is None]
    raws += [r.events_path for r in plan.ranks]
    return docnames, objects, raws


def assert_distinct_files(paths: list[str]) -> None:
    """No two pages share a file, not even on a case-insensitive file system."""
    assert len({p.casefold() for p in paths}) == len(paths)


def assert_bounded(path: str) -> None:
    *folders, last = path.split("/")
    for segment in folders:
        assert segment in FIXED_SEGMENTS or SEGMENT.fullmatch(segment), path
        assert len(segment) <= MAX_SEGMENT, path
    assert SEGMENT.fullmatch(last) or RAW_FILE.fullmatch(last), path
    assert len(last) <= MAX_SEGMENT, path
    assert len(path) <= 5 * MAX_SEGMENT, path


def graph_named(plan: TracePlan, object_name: str) -> GraphPlan:
    return next(g for f in plan.frames for g in f.graphs if g.name == object_name)


# -- readable names ------------------------------------------------------------------------


def test_names_say_what_the_page_shows() -> None:
    plan = plan_of(TRAINING_LOG, "train")
    first = graph_named(plan, "train/[0/0]/inductor_output_code")
    second = graph_named(plan, "train/[0/0]/inductor_output_code#2")  # the backward's code
    assert first.docname == "torchtrace/train/frame-0-0/graph-inductor-output-code"
    assert second.docname == "torchtrace/train/frame-0-0/graph-inductor-output-code--2"
    assert second.raw_path == "torchtrace/train/_raw/frame-0-0/graph-inductor-output-code--2.py"
    assert first.artifact.line < second.artifact.line
    assert "torchtrace/train/frame-1-0-attempt1" in plan.docnames
    assert "torchtrace/train/frame-none" in plan.docnames
    for path in [*plan.docnames, *all_names(plan)[2]]:
        assert_bounded(path)


# -- stable names --------------------------------------------------------------------------


def test_dropping_a_compile_renames_no_other_page(tmp_path: Path) -> None:
    before = plan_of(TRAINING_LOG)
    kept = [r for r in records(TRAINING_LOG) if not of_compile(r, 0, 0)]
    after = plan_of(write(tmp_path, kept))

    old, new = pages(before), pages(after)
    survivors = {key: names for key, names in old.items() if key[1] != "[0/0]"}
    assert new == survivors
    # Every artifact after [0/0] moved in the log: the names did not follow.
    moved = [g.artifact.ordinal for f in after.frames for g in f.graphs]
    was = [g.artifact.ordinal for f in before.frames[1:] for g in f.graphs]
    assert len(moved) == len(was) > 0 and all(m < w for m, w in zip(moved, was, strict=True))


def test_inserting_artifacts_renames_no_other_page(tmp_path: Path) -> None:
    before = plan_of(TRAINING_LOG)
    recs = records(TRAINING_LOG)
    # A new name ahead of every artifact of [0/0], and into [1/0_1] a name [0/0] already has.
    recs = after_first(recs, graph_record("inserted_graph", 0), 0, 0)
    code = "# a recapture's output code"
    ids = {"frame_id": 1, "frame_compile_id": 0, "attempt": 1}
    recs = after_first(recs, record("inductor_output_code", "", code, **ids), 1, 0, 1)
    after = plan_of(write(tmp_path, recs))

    new = pages(after)
    added = {k: v for k, v in new.items() if k not in pages(before)}
    assert sorted(v[0] for v in added.values()) == [
        ("torchtrace/t/frame-0-0/graph-inserted-graph", "t/[0/0]/inserted_graph"),
        (
            "torchtrace/t/frame-1-0-attempt1/graph-inductor-output-code",
            "t/[1/0_1]/inductor_output_code",
        ),
    ]
    assert {k: v for k, v in new.items() if k not in added} == pages(before)


def test_a_reset_repeat_keeps_its_own_names() -> None:
    """The same compile id after ``torch._dynamo.reset()``: a frame of its own, named apart."""
    plan = plan_of(SHARED / "graph_breaks")
    repeats = [f for f in plan.frames if f.compile.occurrence > 1]
    assert repeats
    for frame in repeats:
        assert frame.name.endswith(f"#{frame.compile.occurrence}")
        assert frame.docname.endswith(f"-occurrence{frame.compile.occurrence}")
    docnames, objects, raws = all_names(plan)
    assert_distinct_files(docnames + raws)
    assert len(set(objects)) == len(objects)


# -- names from the log never collide ------------------------------------------------------


COLLIDING = ["q", "q#2", "q", "Q", "a_b", "a-b", "a.b", "A_B", "a__b", "a_b_", "q--2"]


def test_logged_names_never_equal_numbered_ones(tmp_path: Path) -> None:
    recs = records(SIMPLE_LOG)
    for name in reversed(COLLIDING):
        recs = after_first(recs, graph_record(name, 0, text=f"the {name!r} graph"), 0, 0)
    plan = plan_of(write(tmp_path, recs))

    docnames, objects, raws = all_names(plan)
    assert len(set(objects)) == len(objects)
    assert_distinct_files(docnames)
    assert_distinct_files(raws)
    # A cross-reference to `q#2` is the second `q`; the artifact logged as `q#2` is `q##2`.
    frame = plan.frames[0]
    second_q = [a for a in frame.compile.artifacts if a.name == "q"][1]
    assert graph_named(plan, "t/[0/0]/q#2").artifact is second_q
    assert graph_named(plan, "t/[0/0]/q##2").artifact.name == "q#2"
    assert graph_named(plan, "t/[0/0]/Q").docname != graph_named(plan, "t/[0/0]/q").docname
    for path in docnames + raws:
        assert_bounded(path)


def test_two_logs_of_one_rank_stay_apart(tmp_path: Path) -> None:
    copy = tmp_path / RANK1_LOG.name
    copy.write_bytes(RANK1_LOG.read_bytes())
    plan = plan_of([RANK0_LOG, RANK1_LOG, copy], "job")
    assert [r.name for r in plan.ranks] == ["rank0", "rank1", "rank1-2"]
    assert [r.folder for r in plan.ranks] == [
        "torchtrace/job/rank0",
        "torchtrace/job/rank1",
        "torchtrace/job/rank1-2",
    ]
    frames = {f.name for f in plan.frames}
    assert {"job/rank1/[0/0]", "job/rank1-2/[0/0]"} <= frames
    docnames, objects, raws = all_names(plan)
    assert len(set(objects)) == len(objects)
    assert_distinct_files(docnames + raws)


# -- bounded file names --------------------------------------------------------------------


def test_huge_names_and_numbers_give_short_distinct_files(tmp_path: Path) -> None:
    big = 10**299  # a 300-digit frame id
    long_a, long_b = "n" * 300, "n" * 299 + "m"
    recs = records(SIMPLE_LOG)
    recs.append(graph_record(long_a, 0, text="long a"))
    recs.append(graph_record(long_b, 0, text="long b"))
    recs.append(graph_record("dynamo_output_graph", big))
    recs.append(graph_record("dynamo_output_graph", big + 1))
    recs.append(graph_record(long_a, -1, compile_id=-2))
    plan = plan_of(write(tmp_path, recs), "l" * 300)

    docnames, objects, raws = all_names(plan)
    for path in docnames + raws:
        assert_bounded(path)
    assert len(set(objects)) == len(objects)
    assert_distinct_files(docnames + raws)
    assert f"graph {'l' * 300}/[{big}/0]/dynamo_output_graph" in objects
    assert f"graph {'l' * 300}/[0/0]/{long_b}" in objects
    assert any(d.endswith("/frame-m1-m2") for d in docnames)


@pytest.mark.parametrize("same", [False, True], ids=["two ranks", "one rank twice"])
def test_huge_rank_numbers_give_short_distinct_folders(tmp_path: Path, same: bool) -> None:
    big = 10**399  # a 400-digit rank
    logs = []
    for i, log in enumerate([RANK0_LOG, RANK1_LOG]):
        claim = rank_claim(big + (0 if same else i))
        logs.append(write(tmp_path, [claim, *records(log)], f"rank{i}.log"))
    plan = plan_of(logs, "job")

    names = [r.name for r in plan.ranks]
    assert names == ([f"rank{big}", f"rank{big}-2"] if same else [f"rank{big}", f"rank{big + 1}"])
    folders = [r.folder for r in plan.ranks]
    assert len(set(folders)) == 2
    docnames, objects, raws = all_names(plan)
    for path in docnames + raws:
        assert_bounded(path)
    assert len(set(objects)) == len(objects)
    assert_distinct_files(docnames + raws)
