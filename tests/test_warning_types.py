"""Warning subtypes are types mypy checks, and each has its documented meaning.

``warn("optoin", ...)`` was a ``KeyError`` in a user's build, invisible until then; now
the subtype is a ``Literal`` that ``mypy --strict`` (run by ``nox -s types`` and CI)
refuses at the call.  The types and the registries the docs' table is made from must
name the same subtypes, or a subtype would be accepted without a meaning.
"""

from __future__ import annotations

from typing import get_args

import pytest

from sphinx_torchtrace.sphinxext.warnings import (
    SPHINX_KINDS,
    WARNINGS,
    SphinxKind,
    Subtype,
    subtype_of,
)
from sphinx_torchtrace.trace.diagnostics import DIAGNOSTIC_KINDS, DiagnosticKind


def test_the_types_and_the_registry_name_the_same_subtypes() -> None:
    assert list(get_args(DiagnosticKind)) == list(DIAGNOSTIC_KINDS)
    assert list(get_args(SphinxKind)) == list(SPHINX_KINDS)
    every = {name for part in get_args(Subtype) for name in get_args(part)}
    assert every == set(WARNINGS)


def test_a_subtype_that_arrives_as_data_is_checked() -> None:
    assert subtype_of("md5") == "md5"
    with pytest.raises(KeyError, match="unregistered torchtrace warning subtype 'optoin'"):
        subtype_of("optoin")
