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

from sphinx_torchtrace.trace import CompileId, RankTrace, read_log

DATA = Path(__file__).parent / "data"
PINNED = DATA / "expected" / "tlparse"
LOGS = sorted(
    p
    for p in PINNED.rglob("*.json")
    if (DATA / str(p.relative_to(PINNED))[: -len(".json")]).is_file()
)
_OUTPUT_FILE = re.compile(r"^(.*)_(\d+)\.(?:txt|json|html)$")
#: tlparse writes these only in its --export mode, which has no compile directory.
_EXPORT_ONLY = {"exported_program"}


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


def _our_artifacts(rank: RankTrace) -> dict[str, Counter[str]]:
    ours: dict[str, Counter[str]] = {}
    for c in rank.compiles:  # repeated compile ids are merged, as tlparse does
        names = ours.setdefault(str(c.id), Counter())
        names.update(a.name for a in c.artifacts if a.name not in _EXPORT_ONLY)
        names.update(str(link.get("name")) for link in c.links)
        names.update(
            m.kind
            for m in c.metrics
            if m.kind
            in ("compilation_metrics", "bwd_compilation_metrics",
                "aot_autograd_backward_compilation_metrics")
        )
    return ours


ids = [str(p.relative_to(PINNED))[: -len(".json")] for p in LOGS]


@pytest.mark.parametrize("pin", LOGS, ids=ids)
def test_compile_ids_in_first_seen_order(pin: Path) -> None:
    rank, tl = _log_and_pin(pin)
    ours = list(dict.fromkeys(str(c.id) for c in rank.compiles))
    assert set(ours) == set(tl["compile_ids"])
    assert ours == tl["build_product_ids"]


@pytest.mark.parametrize("pin", LOGS, ids=ids)
def test_artifacts_per_compile_id(pin: Path) -> None:
    rank, tl = _log_and_pin(pin)
    theirs = {
        cid: Counter(_tlparse_artifact(f) for f in entry["artifacts"])
        for cid, entry in tl["compile_ids"].items()
    }
    assert _our_artifacts(rank) == theirs


@pytest.mark.parametrize("pin", LOGS, ids=ids)
def test_stack_trie_statuses(pin: Path) -> None:
    rank, tl = _log_and_pin(pin)
    ours = {cid: rank.frame_status(CompileId.parse(cid)) for cid in tl["statuses"]}
    assert ours == tl["statuses"]
    trie_ids = set()
    stack = [rank.stack_trie]
    while stack:
        node = stack.pop()
        trie_ids.update(str(c.id.frame) for c in node.compiles)
        stack.extend(node.children)
    assert trie_ids == set(tl["statuses"])


def test_every_bundled_log_is_compared() -> None:
    assert len(LOGS) >= 45
