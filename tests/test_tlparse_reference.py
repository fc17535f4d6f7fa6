"""The pinned tlparse reference values are honest: re-running tlparse 0.4.3 reproduces them.

Each ``tests/data/expected/tlparse/<path>.json`` was written by
``python tests/tools/tlparse_reference.py`` for ``tests/data/<path>`` (a log file, or a
directory of rank logs for ``--all-ranks-html``).  This test re-runs the extraction and
compares.  Skipped when the ``tlparse`` binary is missing, unless ``CI=true``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parent / "tools"
if str(TOOLS) not in sys.path:
    sys.path.insert(0, str(TOOLS))

import tlparse_reference as ref  # noqa: E402

PINNED = sorted(ref.EXPECTED_DIR.rglob("*.json")) if ref.EXPECTED_DIR.exists() else []
EXPECTED_VERSION = "tlparse 0.4.3"


def _input_for(pinned: Path) -> Path:
    rel = pinned.relative_to(ref.EXPECTED_DIR).as_posix()
    assert rel.endswith(".json")
    return ref.DATA_DIR / rel[: -len(".json")]


@pytest.fixture(scope="module")
def tlparse_ok() -> None:
    in_ci = os.environ.get("CI", "").lower() == "true"
    if shutil.which(ref.TLPARSE) is None:
        if in_ci:
            pytest.fail("tlparse binary not on PATH (required when CI=true)")
        pytest.skip("tlparse binary not on PATH")
    version = ref.tlparse_version()
    if version != EXPECTED_VERSION:
        if in_ci:
            pytest.fail(f"expected {EXPECTED_VERSION!r}, found {version!r}")
        pytest.skip(f"expected {EXPECTED_VERSION!r}, found {version!r}")


@pytest.mark.tlparse
@pytest.mark.parametrize(
    "pinned", PINNED, ids=[p.relative_to(ref.EXPECTED_DIR).as_posix()[:-5] for p in PINNED]
)
def test_pinned_tlparse_reference(pinned: Path, tlparse_ok: None) -> None:
    src = _input_for(pinned)
    assert src.exists(), f"pinned reference {pinned} has no input {src}"
    expected = json.loads(pinned.read_text(encoding="utf-8"))
    actual = json.loads(ref.dumps(ref.summarize(src)))
    if actual != expected:
        # narrow the failure message to the differing top-level keys
        diff = sorted(k for k in set(expected) | set(actual) if expected.get(k) != actual.get(k))
        pytest.fail(
            f"{pinned.name}: tlparse output changed in keys {diff}; "
            f"regenerate with: python tests/tools/tlparse_reference.py {src}"
        )


@pytest.mark.tlparse
def test_every_pinned_file_is_discovered() -> None:
    """Every pinned JSON corresponds to something discover_inputs() would process."""
    discovered = {ref.expected_path(p) for p in ref.discover_inputs()}
    stale = [p for p in PINNED if p not in discovered]
    assert not stale, f"pinned files without input: {stale}"
