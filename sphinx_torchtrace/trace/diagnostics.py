"""Problems found while reading a trace, reported instead of raised.

A trace is untrusted, often truncated input: one bad line must never cost the
reader the rest of the log.  Each problem becomes a :class:`Diagnostic` whose
``subtype`` is stable, so a Sphinx user can silence it with
``suppress_warnings = ["torchtrace.<subtype>"]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .secrets import mask_secrets

#: The subtypes, as a type: mypy refuses a subtype that is not one (a typo is caught before a
#: user's build meets it).  Each has its meaning in :data:`DIAGNOSTIC_SUBTYPES`.
DiagnosticSubtype = Literal[
    "prefix",
    "json",
    "md5",
    "truncated",
    "encoding",
    "intern",
    "payload",
    "rank",
    "read",
    "nesting",
    "limit",
    "skipped",
    "mixed_runs",
    "text_log",
    "debug_file",
    "debug_unknown",
    "runtime",
]

#: Every diagnostic subtype, with what it means.  Names are part of the public API.
DIAGNOSTIC_SUBTYPES: dict[DiagnosticSubtype, str] = {
    "prefix": "a line is neither a glog-style record line nor a tab-indented payload line",
    "json": "the JSON envelope of a record does not parse, or is not an object",
    "md5": "a payload does not match the md5 in its envelope's has_payload",
    "truncated": "the log ends in the middle of a record",
    "encoding": "a line is not valid UTF-8 (shown with replacement characters)",
    "intern": "a stack frame refers to an interned string id that no str record defines",
    "payload": "a payload that must be JSON (metrics, mappings) does not parse, or is "
    "another JSON type than torch writes there (a list where an object belongs)",
    "rank": "a record names a different rank than the rest of its log; or two logs of a trace "
    "directory say they are the same rank (copied logs?), and their file names' ranks are used",
    "read": "a log file cannot be read at all",
    "nesting": "JSON nested too deeply to decode safely (an envelope, a payload or a JSON value "
    "inside one); that record or value is left out",
    "limit": "a log is larger than the bytes read from one log (torchtrace_max_log_bytes), so "
    "it was cut; or a record is too large to analyse and is kept unanalysed; or a trace has "
    "more compiles than get pages (torchtrace_max_frames): the rest are listed on its overview",
    "skipped": "an entry of a trace directory is not read: a link that leads out of the "
    "directory, or not a regular file (a FIFO, a device, a socket)",
    "mixed_runs": "a trace directory mixes logs of different runs (two logs of one rank, or a "
    "log without a rank beside rank logs) and the directive says neither :latest: nor :ranks:",
    "text_log": "a file read as a TORCH_LOGS text log has no line with a log prefix (torch's "
    "glog-style prefix or the older bracketed one): its lines are kept as plain text",
    "debug_file": "a file of a TORCH_COMPILE_DEBUG folder cannot be read, is binary, or is cut "
    "short (a Python file that does not parse); the rest of the folder renders",
    "debug_unknown": "a TORCH_COMPILE_DEBUG folder holds a file or folder torch does not write "
    "there; it is listed on the run's page, not shown",
    "runtime": "a runtime profile beside a trace (``runtime/profile-*.json.gz``, written by "
    "``sphinx-torchtrace run --runtime``) cannot be read or is not torch's Chrome trace; "
    "the pages show the log without it",
}

#: Characters of a log's text quoted in a diagnostic message, at most.
QUOTE_LIMIT = 60


@dataclass(frozen=True)
class Diagnostic:
    """One problem in one log, at one line (1-based; 0 when it concerns the whole file)."""

    subtype: DiagnosticSubtype
    message: str
    path: str
    line: int = 0

    @property
    def name(self) -> str:
        """The name Sphinx users write in ``suppress_warnings``."""
        return f"torchtrace.{self.subtype}"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message} [{self.name}]"


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """A short, escaped form of a log's value for a message: never the whole line, never raw.

    A message is printed in build logs, often public: a bad line may hold anything
    (an environment read through a link, a secret), so only its first characters
    show, and control characters, line breaks and lone surrogates are escaped; what looks
    secret is masked first (:mod:`.secrets`).  Strings are quoted (``'abc…'``); other
    values are written as Python does.
    """
    if isinstance(value, bytes):
        value = value[: limit * 4].decode("utf-8", "replace")
    if isinstance(value, str):
        value = mask_secrets(value[: limit * 4])
        text = repr(value[:limit])
        return text[:-1] + "…" + text[-1] if len(value) > limit else text
    try:
        text = repr(value)
    except ValueError:  # an int longer than Python converts to text
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "…"


class TraceReadError(OSError):
    """A log file could not be opened or read; the only error the reader raises."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot read trace log {path}: {reason}")
        self.path = path
        self.reason = reason
