"""What looks secret in a trace: masked wherever it is published, said in one warning.

The model finds it as each log is read (:mod:`...trace.secrets`, kept in the model's
cache); here the user's ``torchtrace_secrets_keep`` is applied, the masker of each input
is made (its environment values are masked wherever else the trace quotes them) and one
``torchtrace.secret`` warning per input names the log line of the first finding and
counts the others, never quoting a value.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..site.published import learn_environment
from ..trace.inputs.debug_dir import DebugDir
from ..trace.model import Trace
from ..trace.secrets import Secret, SecretMasker, SecretScan, unkept
from .config import TorchTraceConfig
from .masker import TraceMasker, read_again
from .warnings import SECRET, warn


def trace_masker(
    config: TorchTraceConfig,
    traces: Iterable[Trace] = (),
    logs: Sequence[str | os.PathLike[str]] = (),
) -> SecretMasker:
    """The masker of the pages of these traces: the user's keeps, the traces' findings (of
    every rank: a value one rank's guard compares is masked where another rank quotes it,
    a private key's lines wherever a page shows them).  Where a log held more findings
    than its scan keeps, its ``logs`` are read again for the values and keys past them
    (without them, the model's texts are looked at again for environment values)."""
    traces = list(traces)
    masker = TraceMasker(
        config.secrets_keep, (s for t in traces for r in t.ranks for s in r.secrets.found)
    )
    if any(r.secrets.more for t in traces for r in t.ranks):
        if logs:
            read_again(masker, logs, config.max_log_bytes)
        else:
            for trace in traces:
                learn_environment(trace, masker)
    return masker


def debug_masker(config: TorchTraceConfig, debug: DebugDir) -> SecretMasker:
    """The masker of a debug folder's pages (its files' findings)."""
    return SecretMasker(config.secrets_keep, (s for f in debug.files() for s in f.secrets.found))


def warn_trace_secrets(label: str, trace: Trace, masker: SecretMasker) -> None:
    """One ``torchtrace.secret`` warning for a trace that holds values looking secret."""
    _warn(label, ((r.path, r.secrets) for r in trace.ranks), masker)


def warn_debug_secrets(label: str, debug: DebugDir, masker: SecretMasker) -> None:
    """One ``torchtrace.secret`` warning for a debug folder whose files hold such values."""
    root = Path(debug.path)
    _warn(label, ((str(root / f.relpath), f.secrets) for f in debug.files()), masker)


def _warn(label: str, scans: Iterable[tuple[str, SecretScan]], masker: SecretMasker) -> None:
    first: tuple[str, Secret] | None = None
    count = 0
    for path, scan in scans:
        found, more = unkept(scan, masker)
        count += len(found) + more
        if first is None and found:
            first = (path, found[0])
    if first is None:
        return
    path, secret = first
    others = (
        f", and {count - 1} more value{'s' if count > 2 else ''} that look secret"
        if count > 1
        else ""
    )
    warn(
        SECRET,
        f"{label!r}: {secret.describe()} is masked on its pages and downloads (this line)"
        f"{others}; to publish a value you vouch for, give its variable's name or a pattern "
        "of it in torchtrace_secrets_keep",
        f"{path}:{secret.line}" if secret.line else f"{path}:",
    )
