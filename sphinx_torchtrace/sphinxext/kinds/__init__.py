"""The kinds of input the directives read, in the order they are asked.

A new kind is a module here with a class of the :class:`.base.InputKind` shape and
one line below; :mod:`..generate`, :mod:`..page` and the directives know no kind by
name.  For one directive the first kind that accepts an input reads it (so the
catch-all trace kind comes last); the directives are generated in the order they
first appear (a comparison reuses the traces the site already shows).
"""

from __future__ import annotations

from .base import InputKind
from .capture import CaptureKind
from .debug_dir import DebugDirKind
from .diff import DiffKind
from .trace import TraceKind
from .trend import TrendKind

KINDS: tuple[InputKind, ...] = (
    DebugDirKind(), TraceKind(), DiffKind(), TrendKind(), CaptureKind()
)

__all__ = ["KINDS", "InputKind"]
