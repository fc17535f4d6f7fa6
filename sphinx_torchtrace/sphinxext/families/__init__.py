"""The directive families, in the order their directives are generated.

A family (:class:`.family.Family`) is a directive, its options, the handlers of input it
reads, its warning subtypes, its companion directives, its finishing step and its setup;
:mod:`..generate`, :mod:`..scan`, :mod:`..input_guard`, :mod:`..setup` and the docs'
table of warnings (:func:`warning_types`) loop over :data:`FAMILIES` and know no family
by name.  A new family is
a module here that declares its ``FAMILY``, and one line below.  Families are generated
in this order: a comparison reuses the traces the site already shows.
"""

from __future__ import annotations

from ..warnings import DIAGNOSTICS, EXTENSION_WARNINGS, WarningType
from . import capture, diff, trace, trend
from .base import InputHandler
from .family import Family, Options

FAMILIES: tuple[Family, ...] = (trace.FAMILY, diff.FAMILY, trend.FAMILY, capture.FAMILY)


def warning_types() -> tuple[WarningType, ...]:
    """Every ``torchtrace.*`` subtype, in the docs' order: the reader's, the extension's,
    then each family's own (a subtype two families share is listed once)."""
    every = [*DIAGNOSTICS.values(), *EXTENSION_WARNINGS]
    every += [w for family in FAMILIES for w in family.warnings]
    return tuple(dict.fromkeys(every))


__all__ = ["FAMILIES", "Family", "InputHandler", "Options", "warning_types"]
