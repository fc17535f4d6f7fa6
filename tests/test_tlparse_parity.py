"""Parity with tlparse 0.4.3 on the same logs, against its pinned outputs.

tests/data/expected/tlparse/ holds what tlparse reports for every bundled log
(pinned by tests/tools/tlparse_reference.py; test_tlparse_reference.py proves the
pins by re-running tlparse).  The model must agree on the compile ids and their
first-seen order, the artifacts of each compile id, and the status of every
compile id in the stack trie.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from sphinx_torchtrace.site.plan import plan_trace
from sphinx_torchtrace.trace import Artifact, Compile, CompileId, RankTrace, Trace, read_log
from sphinx_torchtrace.trace.analyses.status import frame_status
from sphinx_torchtrace.trace.inputs.builder import PAYLOAD_COMPILE_IDS

DATA = Path(__file__).parent / "data"
PINNED = DATA / "expected" / "tlparse"
LOGS = sorted(
    p
    for p in PINNED.rglob("*.json")
    if (DATA / str(p.relative_to(PINNED))[: -len(".json")]).is_file()
)
_OUTPUT_FILE = re.compile(r"^(.*)_(\d+)\.(?:txt|json|html)$")
#: Event kinds tlparse 0.4.3 lists in no compile directory: ``exported_program`` only
#: appears in its --export mode, ``export`` is unknown to it.
_NOT_IN_TLPARSE_DIRECTORY = {"exported_program", "export"}


def _log_and_pin(pin: Path) -> tuple[RankTrace, dict]:  # type: ignore[type-arg]
    log = DATA / str(pin.relative_to(PINNED))[: -len(".json")]
    return read_log(log), json.loads(pin.read_text())


def _tlparse_artifact(file_name: str) -> str:
    """The artifact name behind a tlparse output file (``dynamo_output_graph_12.txt``)."""
    match = _OUTPUT_FILE.match(file_name)
    if match is None:
        return file_name  # links are listed by their name
    name = match.group(1)
    if name.startswith("inductor_output_code_"):
        return "inductor_output_code"  # tlparse appends the generated file's stem
    return name


def _tlparse_sees(artifact: Artifact, rank: RankTrace, tl: dict) -> bool:  # type: ignore[type-arg]
    """Whether tlparse 0.4.3 would list this artifact in its compile directory.

    Besides kinds it does not know, tlparse drops records without a ``rank`` once
    a rank was seen (its ``other_rank``): torch logs ``torch_version`` without one.
    """
    if artifact.event in _NOT_IN_TLPARSE_DIRECTORY or not artifact.known:
        return False
    if artifact.name == "torch_version" and tl["stats"].get("other_rank"):
        return False
    return True


def _tlparse_name(artifact: Artifact) -> str:
    if artifact.event == "dump_file":  # <eval_with_key>.7 -> eval_with_key_7.html
        return re.sub(r"[<>]", "", artifact.name).split(".")[0]
    return artifact.name


def _our_artifacts(rank: RankTrace, tl: dict) -> dict[str, Counter[str]]:  # type: ignore[type-arg]
    ours: dict[str, Counter[str]] = {}
    for c in rank.compiles:  # repeated compile ids are merged, as tlparse does
        seen = [a for a in c.artifacts if _tlparse_sees(a, rank, tl)]
        # a compile worker's report names its compile in its payload: we place it there,
        # tlparse by its envelope (none: [-/-])
        moved = Counter(_tlparse_name(a) for a in seen if a.name in PAYLOAD_COMPILE_IDS)
        names = Counter(_tlparse_name(a) for a in seen if a.name not in PAYLOAD_COMPILE_IDS)
        if moved:
            ours.setdefault("[-/-]", Counter()).update(moved)
        if not names and not moved and _only_unranked(c, tl):
            continue
        ours.setdefault(str(c.id), Counter()).update(names)
        ours[str(c.id)].update(str(link.get("name")) for link in c.links)
        ours[str(c.id)].update(
            m.event
            for m in c.metrics
            if m.event
            in (
                "compilation_metrics",
                "bwd_compilation_metrics",
                "aot_autograd_backward_compilation_metrics",
            )
        )
    return ours


def _only_unranked(c: Compile, tl: dict) -> bool:  # type: ignore[type-arg]
    """A ``[-/-]`` made only of records tlparse skips as ``other_rank``."""
    return (
        bool(tl["stats"].get("other_rank"))
        and c.id.is_unknown
        and not c.metrics
        and not c.chromium_event_count
    )


ids = [str(p.relative_to(PINNED))[: -len(".json")] for p in LOGS]


@pytest.mark.parametrize("pin", LOGS, ids=ids)
def test_compile_ids_in_first_seen_order(pin: Path) -> None:
    rank, tl = _log_and_pin(pin)
    listed = _our_artifacts(rank, tl)
    ours = list(dict.fromkeys(str(c.id) for c in rank.compiles if str(c.id) in listed))
    theirs = tl["build_product_ids"]
    assert set(ours) == set(tl["compile_ids"])
    if tl["stats"].get("other_rank"):
        # [-/-] is first seen by tlparse later than by us: it skipped the unranked records.
        ours, theirs = [i for i in ours if i != "[-/-]"], [i for i in theirs if i != "[-/-]"]
    assert ours == theirs


@pytest.mark.parametrize("pin", LOGS, ids=ids)
def test_artifacts_per_compile_id(pin: Path) -> None:
    rank, tl = _log_and_pin(pin)
    theirs = {
        cid: Counter(_tlparse_artifact(f) for f in entry["artifacts"])
        for cid, entry in tl["compile_ids"].items()
    }
    assert _our_artifacts(rank, tl) == theirs


@pytest.mark.parametrize("pin", LOGS, ids=ids)
def test_stack_trie_statuses(pin: Path) -> None:
    rank, tl = _log_and_pin(pin)
    ours = {cid: frame_status(rank, CompileId.parse(cid)) for cid in tl["statuses"]}
    assert ours == tl["statuses"]
    trie_ids = set()
    stack = [rank.stack_trie]
    while stack:
        node = stack.pop()
        trie_ids.update(str(c.id.frame) for c in node.compiles)
        stack.extend(node.children)
    assert trie_ids == set(tl["statuses"])


@pytest.mark.parametrize("pin", LOGS, ids=ids)
def test_frame_badges_equal_stack_trie_statuses(pin: Path) -> None:
    """What the badge of ``[x/y]`` shows (stack trie, roles) is tlparse's status of ``[x/y]``,
    declared on the frame's first page; attempts ``[x/y_z]`` keep their own status."""
    rank, tl = _log_and_pin(pin)
    plan = plan_trace("t", Trace(ranks=[rank]), "torchtrace")
    declared = {name: status for f in plan.frames for name, status in plan.frame_objects(f)}
    repeated = {str(c.id.frame) for c in rank.compiles if c.occurrence > 1}
    for cid, status in tl["statuses"].items():
        if cid not in repeated and f"t/{cid}" in declared:  # tlparse merges repeats
            assert declared[f"t/{cid}"] == status, cid
    for f in plan.frames:
        if f.compile.id.attempt:
            assert declared[f.name] == f.compile.status


def test_every_bundled_log_is_compared() -> None:
    assert len(LOGS) >= 48
    restart_patterns = {p.parent.name for p in LOGS if "graph_break" in p.parent.name}
    assert {"ddp_graph_break", "optimizer_graph_break"} <= restart_patterns
