"""The directive families, in the order their directives are generated.

A family (:class:`.family.Family`) is a directive, its options, the kinds of input it
reads and its setup; :mod:`..generate`, :mod:`..scan`, :mod:`..input_guard` and
:mod:`..setup` loop over :data:`FAMILIES` and know no family by name.  A new family is
a module here that declares its ``FAMILY``, and one line below.  Families are generated
in this order: a comparison reuses the traces the site already shows.
"""

from __future__ import annotations

from . import capture, diff, trace, trend
from .base import InputKind
from .family import Family, Options

FAMILIES: tuple[Family, ...] = (trace.FAMILY, diff.FAMILY, trend.FAMILY, capture.FAMILY)

__all__ = ["FAMILIES", "Family", "InputKind", "Options"]
