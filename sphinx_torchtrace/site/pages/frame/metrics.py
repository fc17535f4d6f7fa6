"""The compile's metrics records: the fields a reader looks for, and the whole record."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ....trace import Metrics
from ....trace.analyses.timings import MAX_SECONDS, plausible
from ...artifacts import abridged_record, json_text, shown_record
from ...blocks import (
    Block,
    Code,
    CodeBlock,
    Download,
    Dropdown,
    Inline,
    Inlines,
    Paragraph,
    Section,
    Tab,
    Table,
    TabSet,
    WebOnly,
)
from ...words import _
from .view import FrameView, is_count, is_number, odd_number, seconds_text, truncate

METRICS_TITLES: dict[str, str] = {
    "compilation_metrics": "Forward",
    "bwd_compilation_metrics": "Backward",
    "aot_autograd_backward_compilation_metrics": "AOT backward",
    "compilation_metrics_runtime": "Runtime",
    "bwd_compilation_metrics_runtime": "Runtime backward",
}

#: The metric fields a reader looks for, in the order shown, with their labels.
METRIC_LABELS: dict[str, str] = {
    "entire_frame_compile_time_s": "Entire frame compile time",
    "dynamo_time_before_restart_s": "Dynamo time before restart",
    "backend_compile_time_s": "Backend compile time",
    "inductor_compile_time_s": "Inductor compile time",
    "code_gen_time_s": "Code generation time",
    "elapsed_time": "Elapsed time",
    "duration_us": "Duration",
    "triton_compile_time_us": "Triton compile time",
    "compile_time_autotune_time_us": "Autotuning at compile time",
    "runtime_triton_autotune_time_us": "Triton autotuning at run time",
    "runtime_cudagraphify_time_us": "CUDA graph capture at run time",
    "remote_cache_time_saved_s": "Time saved by the remote cache",
    "graph_op_count": "Graph operators",
    "graph_node_count": "Graph nodes",
    "graph_input_count": "Graph inputs",
    "guard_count": "Guards",
    "shape_env_guard_count": "Shape guards",
    "cache_size": "Cache entries of this frame",
    "accumulated_cache_size": "Cache entries, all frames of this code",
    "num_graph_breaks": "",  # torch counts on over the process: not this compile's breaks
    "has_guarded_code": "Has guarded code",
    "inductor_fx_local_cache_hit_count": "FX graph cache hits (local)",
    "inductor_fx_local_cache_miss_count": "FX graph cache misses (local)",
    "inductor_fx_remote_cache_hit_count": "FX graph cache hits (remote)",
    "inductor_fx_remote_cache_miss_count": "FX graph cache misses (remote)",
    "aotautograd_local_cache_hit_count": "AOT Autograd cache hits (local)",
    "aotautograd_local_cache_miss_count": "AOT Autograd cache misses (local)",
    "cudagraph_skip_reason": "CUDA graphs skipped because",
    "restart_reasons": "Restart reasons",
    "non_compliant_ops": "Non-compliant operators",
    "compliant_custom_ops": "Compliant custom operators",
    "fail_type": "Failure type",
    "fail_user_frame_filename": "Failed in file",
    "fail_user_frame_lineno": "Failed at line",
}

#: Metrics named after GPU work: glossed only for a compile that made a Triton kernel.
GPU_METRICS = frozenset(
    {
        "triton_compile_time_us",
        "runtime_triton_autotune_time_us",
        "runtime_cudagraphify_time_us",
        "cudagraph_skip_reason",
    }
)
#: Metrics named after a remote cache: glossed only where the run logged one.
REMOTE_CACHE_METRICS = frozenset(
    {
        "remote_cache_time_saved_s",
        "inductor_fx_remote_cache_hit_count",
        "inductor_fx_remote_cache_miss_count",
    }
)

#: Counts worth showing even at zero; other fields are left out when zero.
ZERO_MEANS_SOMETHING = frozenset(
    {
        "graph_op_count",
        "graph_node_count",
        "graph_input_count",
        "guard_count",
        "shape_env_guard_count",
        "cache_size",
        "accumulated_cache_size",
    }
)


#: Inline values (metrics, cells) are cut to this many characters: they sit in table cells.
VALUE_LIMIT = 300


def section(view: FrameView) -> Section | None:
    """The compile's metrics records, a tab each where it logged several."""
    records = view.compile.metrics
    if not records:
        return None
    if len(records) == 1:
        blocks = _metrics_blocks(view, records[0])
        return Section([_("Compilation metrics")], blocks, anchor="metrics")
    tabs = [Tab(_metrics_title(records, m), _metrics_blocks(view, m)) for m in records]
    return Section([_("Compilation metrics")], [TabSet(tabs)], anchor="metrics")


def _metrics_title(records: Sequence[Metrics], record: Metrics) -> str:
    """``Forward``, ``Backward``; numbered when a compile logged several of one kind."""
    same_kind = [m for m in records if m.event == record.event]
    title = METRICS_TITLES.get(record.event, record.event)
    if len(same_kind) > 1:
        title += f" {next(i for i, m in enumerate(same_kind) if m is record) + 1}"
    return title


def _metrics_blocks(view: FrameView, record: Metrics) -> list[Block]:
    """The fields a reader looks for as a table, and the whole record as JSON, folded."""
    gpu_work = any(k.kernel.kind == "triton" for k in view.frame.kernels) or any(
        "triton" in a.name for a in view.compile.artifacts
    )
    rows: list[list[Inlines]] = [
        [metric_label(record.data, key, label, gpu_work), metric_value(key, record.data[key])]
        for key, label in METRIC_LABELS.items()
        if _worth_showing(key, record.data.get(key))
    ]
    blocks: list[Block] = []
    if rows:
        blocks.append(Table([_("Metric"), _("Value")], rows, [2, 3]))
    else:
        blocks.append(Paragraph(["No timing, size or failure fields in this record."]))
    shown = shown_record(record.data, view.settings.no_source)
    download = view.frame.record_download(record)
    if download is None:
        title = f"The whole {record.event} record (line {record.line} of the log)"
        blocks.append(Dropdown([title], [CodeBlock(view.strip(json_text(shown)), "json")]))
        return blocks
    blocks.append(
        Paragraph(
            [
                f"The whole {record.event} record ",
                WebOnly(
                    [f"(line {record.line} of the log) is a ", Download(download, "download"), "."],
                    [f"is line {record.line} of the log."],
                ),
            ]
        )
    )
    title = f"The {record.event} record without its long values"
    shown = abridged_record(shown)
    blocks.append(Dropdown([title], [CodeBlock(view.strip(json_text(shown)), "json")]))
    return blocks


def metric_label(data: Mapping[str, Any], key: str, label: str, gpu_work: bool) -> Inlines:
    """torch's key, and plain words for it only where they apply to this run: a GPU or
    remote-cache gloss on a compile that made no Triton kernel or used no remote cache
    would state a fact the log does not (torch times these phases under these names on
    every run, and a CUDA build reports its Triton version on a CPU run too)."""
    gloss = label
    if key in GPU_METRICS and not gpu_work:
        gloss = ""
    if key in REMOTE_CACHE_METRICS and not (
        data.get("remote_cache_version") is not None
        or data.get("inductor_fx_remote_cache_backend_type")
    ):
        gloss = ""
    return [Code(key), *([f" ({gloss})"] if gloss else [])]


def _worth_showing(key: str, value: object) -> bool:
    """Left out: empty values, and zeros where zero says nothing."""
    if value is None or value == "" or value == [] or value == {}:
        return False
    return not (is_number(value) and value == 0 and key not in ZERO_MEANS_SOMETHING)


def metric_value(key: str, value: object) -> list[Inline]:
    """A metric as a reader wants it: seconds (``_us`` fields too: one unit per table),
    yes/no, or the value cut short."""
    if isinstance(value, bool):
        return ["yes" if value else "no"]
    if is_number(value):
        if key.endswith("_s") or key == "elapsed_time":
            seconds = plausible(value)
            return [seconds_text(seconds)] if seconds is not None else [odd_number(value)]
        if key.endswith("_us"):
            micros = plausible(value, MAX_SECONDS * 1e6)
            return [seconds_text(micros / 1e6)] if micros is not None else [odd_number(value)]
        return [str(value)] if is_count(value) else [odd_number(value)]
    if isinstance(value, str):
        text = value
    elif isinstance(value, Mapping):
        text = json.dumps(value, sort_keys=True, default=str)
    elif isinstance(value, (list, tuple)):
        text = ", ".join(str(v) for v in value)
    else:
        text = str(value)
    return [Code(truncate(text, VALUE_LIMIT))]
