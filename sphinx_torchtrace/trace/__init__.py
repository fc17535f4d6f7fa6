"""The trace model: PyTorch TORCH_TRACE logs as plain Python objects.

Imports nothing of Sphinx.  ``load_trace(path)`` is the entry point.
"""

from .compile_id import CompileId
from .diagnostics import DIAGNOSTIC_SUBTYPES, Diagnostic, TraceReadError
from .inputs.loader import load_trace, read_log, resolve_logs
from .kernels import Kernel
from .model import (
    STATUS_LEGEND,
    Artifact,
    CacheEvent,
    ChromiumEvent,
    Compile,
    ExportReport,
    Failure,
    Metrics,
    RankTrace,
    StackFrame,
    StackTrieNode,
    Status,
    Trace,
)

__all__ = [
    "STATUS_LEGEND",
    "DIAGNOSTIC_SUBTYPES",
    "Artifact",
    "CacheEvent",
    "ChromiumEvent",
    "Compile",
    "CompileId",
    "Diagnostic",
    "ExportReport",
    "Failure",
    "Kernel",
    "Metrics",
    "RankTrace",
    "StackFrame",
    "StackTrieNode",
    "Status",
    "Trace",
    "TraceReadError",
    "load_trace",
    "read_log",
    "resolve_logs",
]
