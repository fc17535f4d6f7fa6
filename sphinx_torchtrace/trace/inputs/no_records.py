"""An input that holds no trace record: the one message every command and page gives.

An empty file, a file that is not a trace, a folder of TORCH_LOGS text logs read as
trace logs: each reads as a trace of nothing, and a report of nothing says "no
problems".  ``summary``, ``build`` and the directives refuse it instead, with these
words; a folder whose files are TORCH_LOGS text logs gets the hint to name one (a
text log is read as such only when named: a folder is read for its trace logs).
"""

from __future__ import annotations

import os

from ..diagnostics import quote
from ..folders import list_folder
from ..model import Trace
from .formats import TORCH_LOGS, detect_format

#: Files of a folder sniffed for the hint, at most (bounded work).
_MAX_SNIFFED = 200
#: Text logs the hint names, at most.
_NAMED = 3


def has_records(trace: Trace) -> bool:
    """Whether any rank of ``trace`` holds a record."""
    return any(sum(rank.stats.values()) for rank in trace.ranks)


def no_records_message(path: str, kind: str, shown: str | None = None) -> str:
    """``PATH: no TORCH_TRACE records found`` (``TORCH_LOGS lines`` for a text log), and
    for a folder holding TORCH_LOGS text logs, which to name instead; ``shown``: the path
    as the user wrote it (``path`` itself by default)."""
    what = "TORCH_LOGS lines" if kind == TORCH_LOGS else "TORCH_TRACE records"
    message = f"{path if shown is None else shown}: no {what} found"
    logs = text_logs(path) if kind != TORCH_LOGS else []
    if logs:
        named = ", ".join(quote(name, 60) for name in logs[:_NAMED])
        more = f" and {len(logs) - _NAMED} more" if len(logs) > _NAMED else ""
        message += (
            f"; it holds TORCH_LOGS text logs ({named}{more}): name one of them to read "
            "it as a text log"
        )
    return message


def text_logs(path: str) -> list[str]:
    """The names of the TORCH_LOGS text logs directly in the folder ``path`` (none for a
    file, or a folder that cannot be listed); entries leading out of it are not read."""
    if not os.path.isdir(path):
        return []
    try:
        listing = list_folder(path)
    except OSError:
        return []
    return [f.name for f in listing.files[:_MAX_SNIFFED] if detect_format(f) == TORCH_LOGS]
