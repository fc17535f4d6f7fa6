"""Whether two runs can be compared at all: their builds, settings and ranks.

A comparison of two unrelated programs, or of two torch builds, lists differences
that say nothing about the code; ``dynamo-diff`` calls such a pair "confounded".
Before any frame is compared, each run's PyTorch build (version and commit), Python,
compile configurations (Dynamo, Inductor, functorch) and ranks are read
(:func:`run_facts`) and what differs is said (:func:`differences`), so a reader, and
a CI job, knows whether a finding is about the code or about the setup.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from ..analyses.naming import rank_number
from ..analyses.run_info import torch_commit, torch_version
from ..model import Trace

#: The compile configurations of the compilation metrics compared between runs.
CONFIGS = ("dynamo_config", "inductor_config", "functorch_config")
#: Keys of one configuration a difference names at most.
KEYS_NAMED = 6
#: Characters of one configuration read (they are a few KB; a hostile log may say more).
MAX_CONFIG_CHARS = 1_000_000


@dataclass(frozen=True)
class RunFacts:
    """What a run was made with: read from its version record and compilation metrics."""

    torch: tuple[str, ...]  # "2.13.0+cpu (commit cf30153c4c13)", one per distinct build
    python: tuple[str, ...]  # "3.11.7", one per distinct version
    configs: dict[str, dict[str, Any]]  # dynamo_config ... -> the first logged, parsed
    ranks: tuple[int, ...]

    def config_hash(self, name: str) -> str | None:
        """A short hash of one configuration, as ``dynamo-diff`` compares them."""
        config = self.configs.get(name)
        if config is None:
            return None
        text = json.dumps(config, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]

    def describe(self) -> str:
        """``torch 2.13.0+cpu (commit cf30153c4c13), Python 3.11.7, rank 0``."""
        torch = "; ".join(self.torch) or "not logged"
        python = "; ".join(self.python) or "not logged"
        ranks = ", ".join(map(str, self.ranks))
        return f"torch {torch}, Python {python}, rank{'s' if len(self.ranks) > 1 else ''} {ranks}"


def run_facts(trace: Trace) -> RunFacts:
    """The builds, Python versions, first configurations and ranks of a run."""
    torch: list[str] = []
    python: list[str] = []
    configs: dict[str, dict[str, Any]] = {}
    for rank in trace.ranks:
        version = torch_version(rank) or "not logged"
        commit = torch_commit(rank)
        build = f"{version} (commit {commit[:12]})" if commit else version
        if build not in torch:
            torch.append(build)
        for c in rank.compiles:
            for m in c.compilation_metrics:
                data = m.data if isinstance(m.data, dict) else {}
                said = data.get("python_version")
                if isinstance(said, str) and said.split(" ", 1)[0] not in python:
                    python.append(said.split(" ", 1)[0][:40])
                for name in CONFIGS:
                    if name not in configs:
                        parsed = _config(data.get(name))
                        if parsed is not None:
                            configs[name] = parsed
    ranks = tuple(sorted({rank_number(trace, r) for r in trace.ranks}))
    return RunFacts(tuple(torch), tuple(python), configs, ranks)


def _config(raw: object) -> dict[str, Any] | None:
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str) or len(raw) > MAX_CONFIG_CHARS:
        return None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def differences(baseline: RunFacts, new: RunFacts) -> list[str]:
    """What differs between the runs' setups, one sentence each (empty: like for like)."""
    out: list[str] = []
    if baseline.torch != new.torch:
        out.append(
            f"PyTorch {'; '.join(baseline.torch) or 'not logged'} in the baseline, "
            f"{'; '.join(new.torch) or 'not logged'} in the new run"
        )
    if baseline.python and new.python and baseline.python != new.python:
        out.append(
            f"Python {'; '.join(baseline.python)} in the baseline, "
            f"{'; '.join(new.python)} in the new run"
        )
    for name in CONFIGS:
        old, now = baseline.configs.get(name), new.configs.get(name)
        if old is None or now is None or old == now:
            continue
        keys = sorted(k for k in set(old) | set(now) if old.get(k) != now.get(k))
        named = ", ".join(keys[:KEYS_NAMED]) + (
            f" and {len(keys) - KEYS_NAMED} more" if len(keys) > KEYS_NAMED else ""
        )
        out.append(
            f"{name.replace('_', ' ')} differs in {len(keys)} key(s): {named} "
            f"(hash {baseline.config_hash(name)} vs {new.config_hash(name)})"
        )
    if baseline.ranks != new.ranks:
        out.append(
            f"ranks {_ranks(baseline.ranks)} in the baseline, {_ranks(new.ranks)} in the new run"
        )
    return out


def _ranks(ranks: tuple[int, ...]) -> str:
    return ", ".join(map(str, ranks)) or "none"


def parse_rank_pairs(text: str) -> list[tuple[int, int]]:
    """``"0:2,1:3"`` -> [(0, 2), (1, 3)]: which baseline rank is compared with which new
    rank.  Raises ValueError with a sentence for anything else."""
    pairs: list[tuple[int, int]] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        old, sep, new = part.partition(":")
        if not sep or not old.strip().isdigit() or not new.strip().isdigit():
            raise ValueError(f"{part!r} is not BASELINE:NEW (two rank numbers, as 0:2)")
        pairs.append((int(old), int(new)))
    if not pairs:
        raise ValueError("no rank pair given (write BASELINE:NEW, as 0:2)")
    return pairs
