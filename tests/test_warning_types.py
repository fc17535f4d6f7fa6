"""Warning subtypes are objects mypy checks, each family declares its own, and the docs'
table lists every one with its meaning.

``warn("optoin", ...)`` was a ``KeyError`` in a user's build, invisible until then; then a
``Literal`` in one central table, which a new family had to edit.  Now a subtype is a
:class:`WarningType` constant passed to ``warn`` (``mypy --strict`` refuses anything
else), the reader's and the extension's are in :mod:`.warnings`, a family's in its
module (``Family.warnings``), and the table loops over them: a constant no table lists
would warn undocumented, so every one in the package is looked for here.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import get_args

import sphinx_torchtrace
from sphinx_torchtrace.sphinxext.families import FAMILIES, warning_types
from sphinx_torchtrace.sphinxext.families.diff import REGRESSIONS
from sphinx_torchtrace.sphinxext.families.trace import LOAD_NOTES
from sphinx_torchtrace.sphinxext.warnings import DIAGNOSTICS, EXTENSION_WARNINGS, WarningType
from sphinx_torchtrace.trace.comparing.regressions import REGRESSION_KINDS
from sphinx_torchtrace.trace.diagnostics import DIAGNOSTIC_SUBTYPES, DiagnosticSubtype
from sphinx_torchtrace.trace.inputs.loading import LoadNote

#: The names users write in ``suppress_warnings`` (``torchtrace.<name>``): public, so none
#: is lost or renamed (a new family adds its own after them).
DOCUMENTED = [
    *DIAGNOSTIC_SUBTYPES,
    *"option config label duplicate ambiguous provenance page user_files".split(),
    *"input_sources moved path secret unmatched divergence comparability".split(),
    *(f"regression_{kind}" for kind in REGRESSION_KINDS),
    "capture",
]


def test_the_table_lists_every_documented_subtype_once() -> None:
    names = [w.name for w in warning_types()]
    assert [n for n in names if n in DOCUMENTED] == DOCUMENTED
    assert len(set(names)) == len(names)
    assert all(w.meaning.strip() for w in warning_types())


def test_every_warning_type_in_the_package_is_in_the_table() -> None:
    """A constant a module warns with but no family declares would have no row."""
    listed = set(warning_types())
    found: dict[str, WarningType] = {}
    for info in pkgutil.walk_packages(sphinx_torchtrace.__path__, "sphinx_torchtrace."):
        if ".cli" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for attr, value in vars(module).items():
            if isinstance(value, WarningType):
                found[f"{info.name}.{attr}"] = value
            elif isinstance(value, dict) and all(
                isinstance(v, WarningType) for v in value.values()
            ):
                found.update({f"{info.name}.{attr}[{k}]": v for k, v in value.items()})
    assert len(found) > 40  # the search sees the families' modules
    assert {where: w.name for where, w in found.items() if w not in listed} == {}


def test_subtypes_that_arrive_as_names_all_have_their_type() -> None:
    """The reader's diagnostics, the loading notes and the regression kinds are named in
    lower layers (which know nothing of Sphinx): each name has its subtype."""
    assert list(DIAGNOSTICS) == list(get_args(DiagnosticSubtype)) == list(DIAGNOSTIC_SUBTYPES)
    assert set(LOAD_NOTES) == set(get_args(LoadNote))
    assert list(REGRESSIONS) == list(REGRESSION_KINDS)
    assert all(w.name == f"regression_{k}" for k, w in REGRESSIONS.items())


def test_a_family_declares_its_own_and_no_other() -> None:
    shared = set(DIAGNOSTICS.values()) | set(EXTENSION_WARNINGS)
    owners: dict[str, str] = {}
    for family in FAMILIES:
        for w in family.warnings:
            assert w not in shared, f"{family.name} declares {w.name}, the extension's"
            assert owners.setdefault(w.name, family.name) == family.name
    assert owners["capture"] == "torchtrace-capture"
    assert owners["divergence"] == "torchtrace"
    assert owners["regression_error"] == "torchtrace-diff"
