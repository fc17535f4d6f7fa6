"""The model of every bundled log, pinned: compile ids, statuses, artifacts, kernels, diagnostics.

The pinned files were reviewed against tlparse 0.4.3 (see test_tlparse_parity.py);
regenerate them with ``python tests/tools/model_summary.py --update`` and read the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tools.model_summary import DATA, bundled_logs, current, expected_path

LOGS = bundled_logs()


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(DATA)) for p in LOGS])
def test_model_matches_pinned_summary(log: Path) -> None:
    pinned = json.loads(expected_path(log).read_text())
    assert current(log) == pinned
