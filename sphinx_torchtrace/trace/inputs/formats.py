"""Which format an input is: a TORCH_TRACE log (or folder of them), a TORCH_COMPILE_DEBUG
folder, or a TORCH_LOGS text log.

One place decides, so the directive, the scan and the command line agree; ``:format:``
overrides it.  Detection reads at most :data:`SNIFF_BYTES` of one file and lists at most a
bounded number of folder entries.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from .debug_dir import debug_dir_shape

TRACE = "trace"
DEBUG_DIR = "debug-dir"
TORCH_LOGS = "torch-logs"
#: The values of ``:format:``.
INPUT_FORMATS = (TRACE, DEBUG_DIR, TORCH_LOGS)

SNIFF_BYTES = 64 * 1024

# A TORCH_TRACE record: glog prefix then a JSON envelope on the same line.
_TRACE_LINE = re.compile(r"^[VIWEC]\d{4} [\d:.]{1,20}\s{1,8}\d{1,12} [^\]]{1,500}\] \{")
# A TORCH_LOGS line: glog prefix then text (torch 2.x), or the older bracketed form of seed
# 003 (`[2024-03-25 11:07:02,184] [4/0] torch._dynamo.output_graph: [DEBUG] ...`), either
# possibly after torchrun's `[rank0]:`.
_TEXT_LINE = re.compile(
    r"^(?:\[rank\d{1,6}\]:)?(?:[VIWEC]\d{4} [\d:.]{1,20}\s{1,8}\d{1,12} [^\]]{1,500}\] (?!\{)"
    r"|\[\d{4}-\d\d-\d\d [\d:,]{8,16}\] )"
)


def detect_format(path: str | os.PathLike[str]) -> str:
    """``debug-dir``, ``torch-logs`` or ``trace`` (the default, also for what cannot be read)."""
    p = Path(path)
    if p.is_dir():
        return DEBUG_DIR if debug_dir_shape(p) is not None else TRACE
    return file_format(p)


def file_format(p: Path) -> str:
    """``torch-logs`` or ``trace`` for a file (not a folder), by its first lines."""
    try:
        with open(p, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return TRACE
    if head[:2] == b"\x1f\x8b":  # gzip: only trace logs are read compressed
        return TRACE
    lines = head.decode("utf-8", "replace").splitlines()[:200]
    trace = sum(1 for line in lines if _TRACE_LINE.match(line))
    text = sum(1 for line in lines if _TEXT_LINE.match(line))
    return TORCH_LOGS if text > trace else TRACE
