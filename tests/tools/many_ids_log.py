"""A real log repeated under many compile ids: the input of the frame cap and of its benchmark.

:func:`write_many_ids_log` keeps the bundled ``simple`` log's preamble (torch
version, interned strings) and copies its one compile ``n`` times, as frames
``0 .. n-1``, each with its own function name and start time.  ``kinds`` picks
the compile's records that are copied: by default only its start and its
metrics ("one-line compiles", the shape of a program that compiles thousands of
tiny functions); add graph kinds to give each frame pages of its own.  Payload
md5s are recomputed, so the result is a valid log.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from .hostile_log import DATA, SIMPLE_LOG, LogRecord, format_record, read_records

#: The records of a compile that make it a "one-line compile".
ONE_LINE_KINDS = ("dynamo_start", "compilation_metrics")
#: Adds a graph page and generated code (with its kernel) to every frame.
WITH_GRAPHS = (*ONE_LINE_KINDS, "dynamo_output_graph", "inductor_output_code")

#: Metrics values longer than this (as JSON) are left out.
LONG_VALUE = 400


def write_many_ids_log(path: Path, n: int, kinds: Iterable[str] = ONE_LINE_KINDS) -> Path:
    """Write a log of ``n`` compiles (frames 0 .. n-1, in order) at ``path``."""
    wanted = set(kinds)
    records = read_records(SIMPLE_LOG)
    preamble = [r for r in records if r.frame == (None, None) and r.kind != "chromium_event"]
    compile_ = [r for r in records if r.frame == (0, 0) and r.kind in wanted]
    lines = [format_record(r) for r in preamble]
    for i in range(n):
        lines.extend(format_record(_renumbered(r, i)) for r in compile_)
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _renumbered(record: LogRecord, frame: int) -> LogRecord:
    out = copy.deepcopy(record)
    out.envelope["frame_id"] = frame
    out.envelope["frame_compile_id"] = 0
    metrics = out.envelope.get("compilation_metrics")
    if isinstance(metrics, dict):
        for key in [k for k, v in metrics.items() if len(json.dumps(v)) > LONG_VALUE]:
            del metrics[key]  # config dumps and node shapes: a one-line compile stays short
        metrics["compile_id"] = f"{frame}/0"
        metrics["co_name"] = f"forward_{frame}"
        if isinstance(metrics.get("start_time"), float):
            metrics["start_time"] += frame * 0.5
    return out


TEXT_LOG = DATA / "captured" / "torch_logs" / "options.log"
LINES_PER_ID = 2
_TEXT_ID = re.compile(r"\] \[0/0(_1)?\] ")


def write_many_ids_text_log(path: Path, n: int) -> Path:
    """A TORCH_LOGS text log of ``n`` frames, each ``[i/0]`` restarted as ``[i/0_1]`` (a
    graph break): the first lines of ``[0/0]`` and ``[0/0_1]`` of the captured
    ``options.log``, repeated under new frame ids."""
    lines: list[str] = []
    seen: dict[str, int] = {}
    for line in TEXT_LOG.read_text(encoding="utf-8").splitlines():
        found = _TEXT_ID.search(line)
        if found is not None and seen.get(found[0], 0) < LINES_PER_ID:  # short ids, as in
            seen[found[0]] = seen.get(found[0], 0) + 1  # the report: 8,000 in 359 KB
            lines.append(line)
    out = []
    for i in range(n):
        out.extend(_TEXT_ID.sub(lambda m, i=i: f"] [{i}/0{m[1] or ''}] ", line) for line in lines)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


DEBUG_RUN = (
    DATA
    / "captured"
    / "debug_dir"
    / "inference"
    / "torch_compile_debug"
    / "run_2026_01_01_00_00_00_000000-pid_1"
)


def write_many_graphs_debug_dir(path: Path, n: int) -> Path:
    """A TORCH_COMPILE_DEBUG folder of one run with ``n`` graph folders: the captured
    inference run's one graph folder, copied as ``model__<i>_inference_<i>.<i>``."""
    run = path / DEBUG_RUN.name
    shutil.copytree(DEBUG_RUN / "torchdynamo", run / "torchdynamo")
    graph = next((DEBUG_RUN / "torchinductor").glob("model__*"))
    for i in range(n):
        shutil.copytree(graph, run / "torchinductor" / f"model__{i}_inference_{i}.{i}")
    return path
