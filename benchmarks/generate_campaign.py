"""Inputs written from scratch, every record kind with hostile values, through every view and build.

    python benchmarks/generate_campaign.py [--inputs 10000] [--builds 90] [--seed 0]
    nox -s generate -- --inputs 500 --builds 9        # a quick run
    python benchmarks/generate_campaign.py --only 1234 --keep /tmp/case   # one input again
    # one campaign in parts, run apart (another day, another machine), figures as one:
    python benchmarks/generate_campaign.py --inputs 100000 --range 0:20000 --save a.json
    python benchmarks/generate_campaign.py --merge a.json b.json ...

A part saved holds its figures and the commit of the code it ran (``+dirty`` when the
checkout had changes): parts merge only when they ran the same clean commit, so run a
campaign in parts from a worktree of that commit (``git worktree add``), not from a
checkout being edited.

Where the mutation campaign (``mutation_campaign.py``) changes real logs, this one writes
its inputs from nothing, knowing the format: a small program (frames, their compile ids,
attempts and recompiles, compiled autograd, ranks) becomes the records torch writes for
it, of every kind torch's ``trace_structured`` call sites name (the event and artifact
names of torch 2.13's call sites, :data:`TORCH_EVENTS` and :data:`TORCH_ARTIFACTS`, and
every name this project's reader knows:
:data:`~sphinx_torchtrace.trace.inputs.builder.KNOWN_EVENTS`,
the JSON, graph and schedule artifacts), each with the fields torch logs.  Then it turns hostile:
any value of an envelope, of a record's metadata or of a JSON payload may become another
JSON type (a list or an object where a scalar was, ``null``, a bool), ``NaN`` or
``Infinity``, a 400-digit integer, nesting just under, at and past the reader's depth
limit, a megabyte of text, markup of every language the pages are written in, control
characters, lone surrogates; a JSON payload may be a list, a string or a number instead
of an object; text payloads get markup, controls and invalid UTF-8.  Orders go odd:
payload lines before their envelope, compile ids repeated, out of order and interleaved,
attempts backwards, metrics before their ``dynamo_start``, records duplicated; ranks mix
in one log and in folders (duplicate ranks, logs without a rank, links out of the folder).

Every input kind is written: TORCH_TRACE logs (plain, gzip, CRLF, cut short) and folders
of rank logs, TORCH_LOGS text logs (glog and the older bracketed prefix, torchrun's rank
prefixes), TORCH_COMPILE_DEBUG folders (graph folders, node mappings and sdsc JSON with
hostile values), pairs of runs for ``torchtrace-diff``, capture cache entries (a
``record.json`` with hostile values beside a generated trace) and model cache files (the
cache of a generated log with hostile values put in).

Each input goes through its reader, its site plan and every page view (as the mutation
campaign does; one input in four also through the command line's ``summary``, or ``diff``
of a pair in each format in turn); any exception is a finding.  Then ``--builds`` of
them are built by Sphinx, the builders in turn (html, dirhtml, singlehtml, text, epub,
latex, man, json, pickle), a quarter of them built again after the build's own state
(model cache, downloads stamps, manifest, capture records) was overwritten with hostile
JSON; an exception or a warning
that is not a ``torchtrace.*`` one is a finding (but Sphinx's own refusal, in any
incremental json or pickle build, to copy its environment over the last one).  The
report: inputs per kind, record kinds written, builds per builder, distinct findings
(type and place, with the first traceback and the input's number, which ``--only``
writes again), the slowest input, peak memory.  Exit status 1 if anything was found.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import math
import random
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import tracemalloc
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import mutation_campaign as mc  # noqa: E402

from sphinx_torchtrace import cli  # noqa: E402
from sphinx_torchtrace.render.diff_formats import FORMATS  # noqa: E402
from sphinx_torchtrace.site.pages import build_page  # noqa: E402
from sphinx_torchtrace.site.plan import PageSettings, plan_trace  # noqa: E402
from sphinx_torchtrace.trace import Trace, load_trace  # noqa: E402
from sphinx_torchtrace.trace.analyses.rank_groups import SCHEDULE_ARTIFACTS  # noqa: E402
from sphinx_torchtrace.trace.inputs.builder import (  # noqa: E402
    GRAPH_ARTIFACTS,
    JSON_ARTIFACTS,
    KNOWN_EVENTS,
    METRICS_EVENTS,
)
from sphinx_torchtrace.trace.inputs.cache import cache_path  # noqa: E402
from sphinx_torchtrace.trace.inputs.capture import (  # noqa: E402
    RECORD,
    TRACE,
    CaptureCache,
    CaptureSpec,
    local_imports,
)
from sphinx_torchtrace.trace.inputs.loader import read_log  # noqa: E402
from sphinx_torchtrace.trace.inputs.text_log import load_text_log  # noqa: E402
from sphinx_torchtrace.trace.reader import MAX_JSON_DEPTH, file_digest  # noqa: E402

#: How often each kind of input is written.
KIND_WEIGHTS = {
    "trace": 0.36,
    "rank folder": 0.12,
    "text log": 0.14,
    "debug folder": 0.1,
    "diff pair": 0.11,
    "capture cache": 0.08,
    "model cache": 0.09,
}
#: The builders a sample of the inputs is built with, in turn.
BUILDERS = ("html", "dirhtml", "singlehtml", "text", "epub", "latex", "man", "json", "pickle")
TIME_LIMIT = mc.TIME_LIMIT

# -- what torch writes ------------------------------------------------------------------------

#: Event names of torch 2.13's ``trace_structured`` / ``dtrace_structured`` call sites.
TORCH_EVENTS = (
    "aot_backward_graph",
    "aot_forward_graph",
    "aot_inference_graph",
    "aot_joint_graph",
    "aot_forward_graph_pre_saved_tensors_hooks",
    "aot_saved_tensors_hooks_pack fw_hook",
    "chromium_event",
    "compilation_metrics",
    "bwd_compilation_metrics",
    "compilation_metrics_runtime",
    "bwd_compilation_metrics_runtime",
    "aot_autograd_backward_compilation_metrics",
    "compiled_autograd_graph",
    "create_symbol",
    "create_unbacked_symbol",
    "describe_source",
    "describe_storage",
    "describe_tensor",
    "dump_file",
    "dynamo_cpp_guards_str",
    "dynamo_guards",
    "dynamo_output_graph",
    "dynamo_start",
    "export",
    "exported_program",
    "expression_created",
    "guard_added",
    "guard_added_fast",
    "guard_on_data_dependent_error",
    "inductor_output_code",
    "inductor_post_grad_graph",
    "inductor_pre_grad_graph",
    "link",
    "mismatched_fake_kernel",
    "missing_fake_kernel",
    "optimize_ddp_split_child",
    "optimize_ddp_split_graph",
    "propagate_real_tensors",
    "propagate_real_tensors_provenance",
    "str",
    "symbolic_shape_specialization",
    "artifact",
    "graph_dump",
)
#: Artifact names (``{"artifact": {"name", "encoding"}}``) and their encodings.
TORCH_ARTIFACTS: dict[str, str] = {
    "forward_ORIGINAL_BYTECODE": "string",
    "forward_MODIFIED_BYTECODE": "string",
    "fx_graph_cache_hit": "json",
    "fx_graph_cache_miss": "json",
    "fx_graph_cache_bypass": "json",
    "fx_graph_bundled_cache_hit": "json",
    "aotautograd_cache_hit": "json",
    "aotautograd_cache_miss": "json",
    "aotautograd_cache_bypass": "json",
    "get_local_code_state": "string",
    "get_remote_code_state": "string",
    "put_remote_code_state": "string",
    "put_local_code_state": "string",
    "get_extra_remote_code_state": "string",
    "pattern_matcher_post_grad": "string",
    "optimus_BatchLinearFusion": "string",
    "forward_fused": "string",
    "fx_collectives_analytical_estimation": "string",
    "runtime_wrapper_orchestration": "string",
    "compiled_fn_wrapper": "string",
    "after_joint_graph": "string",
    "after_pre_grad_graph": "string",
    "aot_forward_graph_fw_metadata": "string",
    "aot_inference_graph_after_hop_passes": "string",
    "aot_joint_graph_sync_decision_cross_ranks": "string",
    "aotautograd_cache_pickle_failure": "json",
    "before_joint_graph": "string",
    "before_post_grad_graph": "string",
    "before_pre_grad_graph": "string",
    "compiled_autograd_compile_reasons": "json",
    "compiled_autograd_graph_pre_reordering": "string",
    "compiler_collective": "string",
    "dynamo_cache_bypass": "json",
    "dynamo_cache_entries": "json",
    "dynamo_cache_exception": "json",
    "dynamo_error": "string",
    "dynamo_graph_break_reason": "string",
    "dynamo_side_effects": "string",
    "eager_compile_backwards_failure": "string",
    "fx_graph_runnable": "string",
    "fx_interpreter_error": "string",
    "fx_net_acc_splitter_finder_events": "json",
    "graph_execution": "json",
    "inductor_collective_schedule": "json",
    "inductor_post_grad_graph": "string",
    "inductor_provenance_tracking_kernel_stack_traces": "json",
    "inductor_provenance_tracking_node_mappings": "json",
    "inductor_runtime_and_tensor_meta": "json",
    "invoke_subgraph_backward_duplicate": "json",
    "make_fx_fail_partial": "string",
    "min_cut_information": "json",
    "min_cut_failed_fx_graph": "string",
    "overlap_scheduling_graph_after": "string",
    "pge_profile_vs_analytical": "json",
    "pre_bucketing_collective_sizes": "json",
    "precompile_cache_bypass": "json",
    "recompile_reasons": "json",
    "torch._functorch.config": "string",
    "torch_version": "json",
    "triton_kernel_info": "json",
    "inductor_spmd_graph_mismatch": "string",
}
#: Every name this project's reader knows, beside torch's: none goes unwritten.
for _name in sorted(JSON_ARTIFACTS | set(SCHEDULE_ARTIFACTS)):
    TORCH_ARTIFACTS.setdefault(_name, "json")
for _name in sorted(GRAPH_ARTIFACTS):
    TORCH_ARTIFACTS.setdefault(_name, "string")
EVENTS = tuple(dict.fromkeys((*TORCH_EVENTS, *sorted(KNOWN_EVENTS), *sorted(METRICS_EVENTS))))

#: Fields of ``compilation_metrics`` (torch 2.13) and a plausible value of each.
METRICS_FIELDS: dict[str, Callable[[random.Random], Any]] = {
    "compile_id": lambda r: "0/0",
    "frame_key": lambda r: str(r.randrange(9)),
    "co_name": lambda r: r.choice(("forward", "f", "<lambda>", "torch_dynamo_resume_in_f_at_17")),
    "co_filename": lambda r: r.choice(("/home/user/project/model.py", "model.py", "")),
    "co_firstlineno": lambda r: r.randrange(1, 400),
    "cache_size": lambda r: r.randrange(8),
    "accumulated_cache_size": lambda r: r.randrange(8),
    "guard_count": lambda r: r.randrange(90),
    "shape_env_guard_count": lambda r: r.randrange(9),
    "graph_op_count": lambda r: r.randrange(20),
    "graph_node_count": lambda r: r.randrange(40),
    "graph_input_count": lambda r: r.randrange(9),
    "start_time": lambda r: 1795261896.3 + r.random(),
    "entire_frame_compile_time_s": lambda r: r.random() * 20,
    "backend_compile_time_s": lambda r: r.random() * 10,
    "inductor_compile_time_s": lambda r: r.random() * 5,
    "code_gen_time_s": lambda r: r.random(),
    "fail_type": lambda r: None,
    "fail_reason": lambda r: None,
    "fail_user_frame_filename": lambda r: None,
    "fail_user_frame_lineno": lambda r: None,
    "non_compliant_ops": lambda r: [],
    "compliant_custom_ops": lambda r: [],
    "restart_reasons": lambda r: [],
    "dynamo_time_before_restart_s": lambda r: r.random(),
    "has_guarded_code": lambda r: True,
    "remote_cache_time_saved_s": lambda r: None,
    "structured_logging_overhead_s": lambda r: r.random() / 10,
    "config_suppress_errors": lambda r: False,
    "config_inline_inbuilt_nn_modules": lambda r: True,
    "specialize_float": lambda r: False,
    "is_forward": lambda r: True,
    "is_runtime": lambda r: False,
    "dynamo_config": lambda r: json.dumps({"cache_size_limit": 8, "verbose": False}),
    "inductor_config": lambda r: json.dumps({"max_autotune": False, "TYPE_CHECKING": False}),
    "functorch_config": lambda r: json.dumps({"activation_memory_budget": 1.0}),
    "compiler_config": lambda r: json.dumps({"cache_key_tag": ""}),
    "cuda_version": lambda r: None,
    "triton_version": lambda r: "",
    "feature_usage": lambda r: {"fx_cache": True},
    "num_graph_breaks": lambda r: r.randrange(3),
    "triton_compile_time_us": lambda r: r.randrange(10**7),
    "duration_us": lambda r: r.randrange(10**7),
    "start_time_us": lambda r: 1795261896303797,
    "end_time_us": lambda r: 1795261913173716,
    "dynamo_cumulative_compile_time_us": lambda r: r.randrange(10**7),
    "aot_autograd_cumulative_compile_time_us": lambda r: r.randrange(10**7),
    "inductor_cumulative_compile_time_us": lambda r: r.randrange(10**7),
    "inductor_code_gen_cumulative_compile_time_us": lambda r: r.randrange(10**7),
    "backward_cumulative_compile_time_us": lambda r: None,
    "inductor_fx_local_cache_hit_count": lambda r: r.randrange(2),
    "inductor_fx_local_cache_miss_count": lambda r: r.randrange(2),
    "aotautograd_local_cache_miss_count": lambda r: 1,
    "gc_time_us": lambda r: 1011,
    "guard_latency_us": lambda r: 82,
    "recompile_reason": lambda r: None,
    "cudagraph_skip_reason": lambda r: r.choice((None, "skipping cudagraphs due to cpu device")),
    "runtime_cudagraphify_time_us": lambda r: r.choice((None, 1200)),
    "runtime_triton_autotune_time_us": lambda r: None,
    "python_version": lambda r: "3.11.7",
    "pytorch_version": lambda r: "2.13.0+cpu",
    "log_format_version": lambda r: 3,
    "graph_node_shapes": lambda r: "{'l_x_': [16, 16]}",
    "stack_trace": lambda r: ["Line: 15, Name: f, Filename: /home/user/project/model.py"],
    "exception_stack_trace": lambda r: None,
    "tensorify_float_attempt": lambda r: None,
    "param_numel": lambda r: None,
    "param_bytes": lambda r: None,
    "param_count": lambda r: None,
    "recompile_user_contexts": lambda r: None,
    "ir_count": lambda r: None,
    "post_grad_pass_time_us": lambda r: 248698,
    "pre_grad_pass_time_us": lambda r: 8256,
    "joint_graph_pass_time_us": lambda r: 259555,
}

#: Chromium event names (``dynamo_timed``), the stages the timings read first.
CHROMIUM_NAMES = (
    "dynamo",
    "entire_frame_compile",
    "backend_compile",
    "inductor_compile",
    "compile_fx_inner",
    "code_gen",
    "compile_file",
    "gc",
    "fx_graph_cache_miss",
    "autograd_cache_miss",
    "compile_attempt_0",
    "cudagraphify",
    "entire_backward_compile",
    "pgo.dynamic_whitelist",
    "GraphLowering.run",
)
CHROMIUM_ARGS: dict[str, Callable[[random.Random], Any]] = {
    "compile_id": lambda r: "0/0",
    "cache_state": lambda r: r.choice(("miss", "hit", "bypass")),
    "key": lambda r: "aehsoeifejfsjyor5tdtoan2djmp5sp3bb36j5a7wr5lg7fvh3t6",
    "is_backward": lambda r: r.random() < 0.3,
    "fn_name": lambda r: "_compile.compile_inner",
    "cache_event_time": lambda r: 1795261896963333905,
    "components": lambda r: [],
    "time_taken_ns": lambda r: r.randrange(10**10),
    "reason": lambda r: "size change",
    "name": lambda r: "L['x']",
    "dim_changed": lambda r: 1,
    "cached": lambda r: "5",
    "new": lambda r: "7",
    "cache_bypass_reason": lambda r: None,
    "cache_bypass_traceback": lambda r: ["Traceback (most recent call last):"],
    "restart_reasons": lambda r: [],
    "graph_op_count": lambda r: 2,
    "requires_subclass_dispatch": lambda r: False,
    "dispatch_mode": lambda r: "inference",
}

#: Hostile strings, beside the mutation campaign's raw JSON texts.
HOSTILE_STRINGS = (
    "",
    " ",
    "\n",
    "\t\t",
    "\x00",
    "\x1b[2J\x1b[31mred\x1b[0m",
    "\r\rcarriage",
    "\u202eevil",
    "\u200b\ufeff",
    "\u2028\u2029",
    "<script>alert(1)</script>",
    "</div></body>",
    "<!--",
    "]]>",
    "&amp;&lt;",
    ".. raw:: html\n\n   <b>x</b>",
    "`link <javascript:alert(1)>`_",
    ":ref:`x`",
    "|sub|",
    "*emph* **strong** ``lit``",
    "{{ x }}",
    "{% raw %}",
    "$$x$$",
    "\\end{document}\\input{/etc/passwd}",
    "%comment",
    "#define",
    "\\\\",
    "\\n\\t",
    "../../../../etc/passwd",
    "/home/user/.ssh/id_rsa",
    "C:\\Users\\x\\secret",
    "a" * 300,
    "x/" * 3000,
    "[0/0]",
    "!0/1/0_1",
    "-/-",
    "0/0_1",
    "[[",
    "]]",
    "{",
    "}",
    "file.py:12",
    'File "/home/user/project/model.py", line 21, in forward',
    "Graph break in user code at /home/user/x.py:9",
    "WON'T CONVERT",
    "\ud800",
    "a\udfffb",
    "NaN",
    "Infinity",
    "1e999",
    "-0",
    "0x10",
    "12",
    "\x7f\x80\x9f",
    "é" * 50,
    "𝕏" * 20,
    ".. include:: /etc/passwd",
    "<img src=x onerror=alert(1)>",
    "javascript:alert(1)",
    "%(x)s {0} {}",
    "\\x00",
    "```{eval-rst}\n.. raw:: html\n```",
    "\x0b\x0c",
)


@dataclass(frozen=True)
class Raw:
    """A JSON text put in as it is (NaN, a 400-digit integer, a lone surrogate, deep nesting)."""

    text: str


def hostile(r: random.Random, big: bool = True) -> Any:
    """A hostile JSON value of any type."""
    roll = r.random()
    if roll < 0.3:
        kind, make = r.choice(mc.HOSTILE_VALUES)
        if not big and kind in ("long string", "deep list", "deep object"):
            return r.choice(HOSTILE_STRINGS)
        return Raw(mc._closed(kind, make(r)))
    if roll < 0.45:
        return r.choice(HOSTILE_STRINGS)
    if roll < 0.55:  # nesting just under, at and past the reader's limit
        depth = r.choice(
            (MAX_JSON_DEPTH - 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 3)
        )
        if r.random() < 0.5:
            return Raw("[" * depth + "]" * depth)
        return Raw('{"a":' * depth + "1" + "}" * depth)
    if roll < 0.7:
        return r.choice(
            (
                0,
                -1,
                1,
                2**31,
                2**53 + 1,
                2**63,
                2**64 + 1,
                -(2**63) - 1,
                10**30,
                0.5,
                -0.0,
                1e308,
                5e-324,
                math.nan,
                math.inf,
                -math.inf,
            )
        )
    if roll < 0.8:
        return r.choice((None, True, False))
    if roll < 0.9:
        return [hostile(r, False) for _ in range(r.choice((0, 1, 3)))]
    return {
        r.choice(HOSTILE_STRINGS + ("name", "0", "args")): hostile(r, False)
        for _ in range(r.choice((0, 1, 3)))
    }


def dumps(value: Any, indent: bool = False) -> str:
    """JSON text of ``value`` with :class:`Raw` texts in place, as torch writes JSON (one
    line, or ``indent=0`` for a payload); NaN and infinities as Python writes them."""
    raws: dict[str, str] = {}

    def default(obj: object) -> str:
        if not isinstance(obj, Raw):
            raise TypeError(type(obj).__name__)
        mark = f"\x00raw{len(raws)}\x00"
        raws[json.dumps(mark)] = obj.text
        return mark

    text = json.dumps(value, default=default, indent=0 if indent else None)
    for mark, raw in raws.items():
        text = text.replace(mark, raw, 1)
    return text


def hostilize(value: Any, r: random.Random, rate: float, depth: int = 0) -> Any:
    """Replace, drop or add values inside ``value``, each with probability ``rate``."""
    if depth > 6 or rate <= 0:
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            roll = r.random()
            if roll < rate:
                out[k] = hostile(r, big=r.random() < 0.2)
            elif roll < rate * 1.3:
                continue  # the field left out
            else:
                out[k] = hostilize(v, r, rate, depth + 1)
        if r.random() < rate:
            out[r.choice(HOSTILE_STRINGS)] = hostile(r, False)
        return out
    if isinstance(value, list):
        items = [
            hostile(r, False) if r.random() < rate else hostilize(v, r, rate, depth + 1)
            for v in value
        ]
        if items and r.random() < rate:
            items.insert(r.randrange(len(items) + 1), hostile(r, False))
        return items
    return value


def hostile_text(r: random.Random) -> str:
    return r.choice(HOSTILE_STRINGS) if r.random() < 0.9 else "y" * r.choice((70_000, 1 << 20))


# -- a program and its records ----------------------------------------------------------------


@dataclass
class Rec:
    """One record before it is written: its event, metadata, context and payload."""

    kind: str
    inner: Any
    context: dict[str, Any] = field(default_factory=dict)
    payload: bytes | None = None
    md5: str = "right"  # right, wrong, missing (a payload without has_payload), orphan
    payload_first: bool = False  # its payload lines come before its envelope line
    envelope: Any = None  # a whole envelope written instead (not an object, a reserved key first)


@dataclass
class Compile:
    frame: int
    number: int
    attempt: int = 0
    ca: int | None = None
    broke: bool = False
    failed: bool = False
    function: str = "forward"
    line: int = 15


def program(r: random.Random) -> list[Compile]:
    """Frames, their compile ids and attempts: what one run compiled."""
    out: list[Compile] = []
    for frame in range(r.choice((1, 1, 1, 2, 3))):
        function = r.choice(("forward", "f", "g", "torch_dynamo_resume_in_f_at_17", "<lambda>"))
        for number in range(r.choice((1, 1, 1, 2, 3))):
            broke = r.random() < 0.3
            out.append(
                Compile(frame, number, 0, None, broke, r.random() < 0.15, function, 10 + frame * 20)
            )
            if broke and r.random() < 0.5:
                out.append(Compile(frame, number, 1, None, False, False, function, 10 + frame * 20))
    if r.random() < 0.15:
        out.append(Compile(0, 0, 0, 0, False, False, "backward"))  # compiled autograd
    if r.random() < 0.1:  # the same id again, as after torch._dynamo.reset()
        out.append(Compile(0, 0, 0, None, False, False, "h", 77))
    return out


FILES = [
    "/home/user/.venv/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py",
    "/home/user/project/model.py",
    "/usr/lib/python3.11/runpy.py",
    "<frozen runpy>",
]


def graph_text(r: random.Random, c: Compile, collectives: bool = False) -> str:
    nodes = r.choice((1, 3, 8))
    lines = [
        "class GraphModule(torch.nn.Module):",
        '    def forward(self, L_x_: "f32[8, 64][64, 1]cpu", L_y_: "f32[8][1]cpu"):',
        "        l_x_ = L_x_",
    ]
    for i in range(nodes):
        lines.append(
            f"        # File: /home/user/project/model.py:{c.line + i} in "
            f"{c.function}, code: x = x.sin()"
        )
        lines.append(f'        sin_{i}: "f32[8, 64][64, 1]cpu" = torch.ops.aten.sin.default(l_x_)')
    if collectives:
        lines.append(
            '        all_reduce: "f32[8, 4][4, 1]cpu" = torch.ops._c10d_functional.'
            "all_reduce_.default(sin_0, 'sum', '0')"
        )
        lines.append(
            '        wait_tensor: "f32[8, 4][4, 1]cpu" = torch.ops._c10d_functional.'
            "wait_tensor.default(all_reduce)"
        )
    lines.append(f"        return (sin_{nodes - 1},)")
    return "\n".join(lines)


def output_code(r: random.Random) -> str:
    kernels = r.choice((1, 2, 4))
    parts = [
        "# AOT ID: ['0_inference']",
        "from ctypes import c_void_p",
        "import torch",
        "from torch._inductor.async_compile import AsyncCompile",
        "async_compile = AsyncCompile()",
        "",
    ]
    names = []
    for i in range(kernels):
        if r.random() < 0.5:
            name = f"triton_poi_fused_sin_{i}"
            parts += [
                f"# Topologically Sorted Source Nodes: [sin_{i}], Original ATen: [aten.sin]",
                f"{name} = async_compile.triton('{name}', '''",
                "import triton",
                "@triton_heuristics.pointwise(size_hints={'x': 512})",
                "@triton.jit",
                f"def {name}(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):",
                "    xoffset = tl.program_id(0) * XBLOCK",
                "''', device_str='cuda')",
                "",
            ]
        else:
            name = f"cpp_fused_sin_{i}"
            parts += [
                f"# Topologically Sorted Source Nodes: [sin_{i}], Original ATen: [aten.sin]",
                f"{name} = async_compile.cpp_pybinding(['const float*', 'float*'], '''",
                '#include "/tmp/torchinductor_user/pi/cpi.h"',
                'extern "C"  void kernel(const float* in_ptr0, float* out_ptr0)',
                "{",
                "}",
                "''')",
                "",
            ]
        names.append(name)
    parts += ["", "def call(args):", "    arg0_1, = args", "    args.clear()"]
    for i, name in enumerate(names):
        parts += [
            f"        # [Provenance debug handles] {name}:{i + 1}",
            f"        {name}(arg0_1, buf{i})",
        ]
    parts += [
        "        buf9 = empty_strided_cpu((8, 64), (64, 1), torch.float32)",
        "        extern_kernels.addmm(arg0_1, arg0_1, arg0_1, alpha=1, beta=1, out=buf9)",
        "    return (buf0, )",
        "",
    ]
    return "\n".join(parts)


def json_payload(name: str, r: random.Random, c: Compile) -> Any:
    """A plausible JSON payload of an artifact, by its name."""
    kernel = f"triton_poi_fused_sin_{r.randrange(3)}:{r.randrange(1, 4)}"
    if name == "torch_version":
        return {"pytorch_version": "2.13.0+cpu", "commit": "0" * 40, "oss": True}
    if name == "recompile_reasons":
        reason = "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16"
        return [reason] * r.choice((1, 2))
    if name == "inductor_provenance_tracking_node_mappings":
        return {
            "preToPost": {"sin": ["sin_0"]},
            "postToPre": {"sin_0": ["sin"]},
            "cppCodeToPost": {kernel: ["sin_0"]},
            "postToCppCode": {"sin_0": [kernel]},
            "version": 2.0,
        }
    if name == "inductor_provenance_tracking_kernel_stack_traces":
        return {
            kernel: [
                '  File "/home/user/project/model.py", line 21, in forward\n'
                "    x = torch.relu(self.fc1(x))\n"
            ]
        }
    if name == "inductor_runtime_and_tensor_meta":
        return {
            "ops": [
                {
                    "name": f"op{i}",
                    "type": "compute",
                    "estimated_runtime_ns": r.choice((1200, 3.5, 0)),
                    "outputs": [{"shape": [8, 64], "dtype": "torch.float32", "stride": [64, 1]}],
                }
                for i in range(r.choice((1, 3)))
            ]
        }
    if name == "inductor_collective_schedule":
        return ["torch.ops._c10d_functional.all_reduce_.default"] * r.choice((0, 1, 2))
    if name == "graph_execution":
        return {"graph_execution_order": [{"compile_id": f"{c.frame}/{c.number}"}]}
    if "_cache_" in name:
        return {
            "key": "f" * 52,
            "components": ["[abc] example_inputs: TensorMetadata(...)"],
            "cache_event_time": 1795261896963333905,
            "cache_state": name.rsplit("_", 1)[1],
            "time_taken_ns": 123456,
        }
    if name == "triton_kernel_info":
        return {"triton_poi_fused_sin_0": {"num_warps": 4, "num_stages": 1}}
    return {"reason": "example", "entries": [1, 2, 3], "nested": {"a": [{"b": None}]}}


def text_payload(name: str, r: random.Random, c: Compile) -> str:
    if name == "dynamo_graph_break_reason":
        return (
            "Graph Break Reason: Call to `torch._dynamo.graph_break()`\n"
            "  Explanation: User-inserted graph break.\n"
            f"Graph break in user code at /home/user/project/model.py:{c.line + 2}\n"
            "User code traceback:\n"
            f'  File "/home/user/project/model.py", line {c.line + 2}, in {c.function}\n'
            "    torch._dynamo.graph_break()\n"
        )
    if name in ("dynamo_error", "fx_interpreter_error", "eager_compile_backwards_failure"):
        return (
            "Traceback (most recent call last):\n"
            '  File "/home/user/project/model.py", line 30, in forward\n'
            "    return x.item()\n"
            "torch._dynamo.exc.Unsupported: Tensor.item\n"
        )
    if name.endswith("BYTECODE"):
        return "  15           0 RESUME                   0\n\n 16           2 LOAD_FAST   0 (x)"
    if name in GRAPH_ARTIFACTS or name.endswith("_graph"):
        return graph_text(r, c)
    return f"{name} text\nline two: {r.randrange(100)}"


def chromium(r: random.Random, c: Compile | None, phase: str, name: str) -> Any:
    args = {k: make(r) for k, make in r.sample(list(CHROMIUM_ARGS.items()), 4)}
    if c is not None:
        args["compile_id"] = f"{c.frame}/{c.number}"
    event: dict[str, Any] = {
        "name": name,
        "ts": 1795261896303797.0 + r.random() * 1e6,
        "args": args,
        "ph": phase,
        "cat": "dynamo_timed",
        "tid": 0,
        "pid": 0,
    }
    if phase == "i":
        event["s"] = "p"
    if phase == "X":
        event["dur"] = r.random() * 1e6
    return event


def context(c: Compile | None) -> dict[str, Any]:
    if c is None:
        return {}
    out: dict[str, Any] = {}
    if c.ca is not None:
        out["compiled_autograd_id"] = c.ca
    out.update({"frame_id": c.frame, "frame_compile_id": c.number, "attempt": c.attempt})
    return out


def _json_bytes(value: Any, r: random.Random) -> bytes:
    text = dumps(value, indent=r.random() < 0.5)
    return text.encode("utf-8", "surrogatepass")


def records(r: random.Random, compiles: list[Compile], rank: int | None) -> list[Rec]:
    """The records torch writes for ``compiles`` (every kind, each once at least over a run)."""
    out: list[Rec] = [
        Rec(
            "artifact",
            {"name": "torch_version", "encoding": "json"},
            payload=_json_bytes(json_payload("torch_version", r, compiles[0]), r),
        )
    ]
    interned: dict[str, int] = {}

    def stack(c: Compile) -> list[dict[str, Any]]:
        frames = []
        for i, name in enumerate(FILES[: r.choice((1, 2, 4))]):
            if name not in interned:
                interned[name] = len(interned)
                out.append(Rec("str", [name, interned[name]]))
            frames.append(
                {
                    "line": c.line + i,
                    "name": c.function,
                    "filename": interned[name],
                    "loc": "x = torch.sin(x)",
                }
            )
        return frames

    pool = list(EVENTS)
    artifacts = list(TORCH_ARTIFACTS)
    for c in compiles:
        ctx = context(c)
        if rank is not None:
            ctx = {"rank": rank, **ctx}
        if c.number > 0:
            out.append(
                Rec(
                    "artifact",
                    {"name": "recompile_reasons", "encoding": "json"},
                    ctx,
                    _json_bytes(json_payload("recompile_reasons", r, c), r),
                )
            )
        out.append(Rec("dynamo_start", {"stack": stack(c)}, ctx))
        out.append(Rec("chromium_event", {}, ctx, _json_bytes(chromium(r, c, "B", "dynamo"), r)))
        for kind in ("describe_storage", "describe_tensor", "describe_source"):
            out.append(
                Rec(
                    kind,
                    {
                        "id": 0,
                        "describer_id": 0,
                        "size": [8, 64],
                        "stride": [64, 1],
                        "dtype": "torch.float32",
                        "source": "L['x']",
                        "view_func": "<built-in method at 0x7ff3814a4690>",
                    },
                    ctx,
                )
            )
        out.append(
            Rec(
                "create_symbol",
                {
                    "symbol": "s0",
                    "val": 8,
                    "vr": "[2, int_oo]",
                    "source": "L['x'].size()[0]",
                    "user_stack": stack(c),
                    "stack": stack(c),
                },
                ctx,
            )
        )
        out.append(
            Rec(
                "guard_added_fast",
                {"expr": "Eq(s0, 8)", "user_stack": stack(c), "stack": stack(c)},
                ctx,
            )
        )
        out.append(
            Rec(
                "dynamo_output_graph",
                {"sizes": {"l_x_": [8, 64], "sin": ["s0", 64]}},
                ctx,
                graph_text(r, c, collectives=rank is not None).encode(),
            )
        )
        for name in r.sample(artifacts, r.choice((2, 4, 8))):
            encoding = TORCH_ARTIFACTS[name]
            body = (
                _json_bytes(json_payload(name, r, c), r)
                if encoding == "json"
                else text_payload(name, r, c).encode()
            )
            out.append(Rec("artifact", {"name": name, "encoding": encoding}, ctx, body))
        for kind in r.sample(pool, r.choice((1, 3, 6))):
            out.append(event_record(kind, r, c, ctx, stack))
        out.append(
            Rec(
                "inductor_output_code",
                {
                    "filename": "/tmp/torchinductor_user/vk/c.py",
                    "file_path": "/tmp/torchinductor_user/vk/c.py",
                },
                ctx,
                output_code(r).encode(),
            )
        )
        for name in (
            "inductor_runtime_and_tensor_meta",
            "inductor_collective_schedule",
            "graph_execution",
            "inductor_provenance_tracking_node_mappings",
            "inductor_provenance_tracking_kernel_stack_traces",
        ):
            if r.random() < 0.6:
                out.append(
                    Rec(
                        "artifact",
                        {"name": name, "encoding": "json"},
                        ctx,
                        _json_bytes(json_payload(name, r, c), r),
                    )
                )
        out.append(
            Rec(
                "dynamo_cpp_guards_str",
                {},
                ctx,
                b"TREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- TENSOR_MATCH: L['x']",
            )
        )
        if c.broke:
            out.append(
                Rec(
                    "artifact",
                    {"name": "dynamo_graph_break_reason", "encoding": "string"},
                    ctx,
                    text_payload("dynamo_graph_break_reason", r, c).encode(),
                )
            )
        out.append(Rec("chromium_event", {}, ctx, _json_bytes(chromium(r, c, "E", "dynamo"), r)))
        for name in ("entire_frame_compile", "backend_compile", "inductor_compile"):
            if r.random() < 0.5:
                phase = r.choice(("B", "E", "X", "i"))
                event = _json_bytes(chromium(r, c, phase, name), r)
                out.append(Rec("chromium_event", {}, ctx, event))
        out.append(metrics_record("compilation_metrics", r, c, ctx))
        if r.random() < 0.3:
            out.append(metrics_record(r.choice(sorted(METRICS_EVENTS)), r, c, ctx))
    for kind in r.sample(pool, r.choice((1, 3))):  # records of no compile id
        out.append(event_record(kind, r, None, {"rank": rank} if rank is not None else {}, stack))
    return out


def metrics_record(kind: str, r: random.Random, c: Compile, ctx: dict[str, Any]) -> Rec:
    data = {k: make(r) for k, make in METRICS_FIELDS.items()}
    data["compile_id"] = f"{c.frame}/{c.number}" + (f"_{c.attempt}" if c.attempt else "")
    data["co_name"], data["co_firstlineno"] = c.function, c.line
    if c.failed:
        data.update(
            fail_type="torch._dynamo.exc.Unsupported",
            fail_reason="Tensor.item",
            fail_user_frame_filename="/home/user/project/model.py",
            fail_user_frame_lineno=c.line + 3,
            has_guarded_code=False,
        )
    if c.broke:
        data["restart_reasons"] = ["Graph break: call_function graph_break in skip_files"]
    if "bwd" in kind:
        data["is_forward"] = False
    return Rec(kind, data, ctx)


def event_record(
    kind: str,
    r: random.Random,
    c: Compile | None,
    ctx: dict[str, Any],
    stack: Callable[[Compile], list[dict[str, Any]]],
) -> Rec:
    """A record of any event kind, with the metadata and payload torch gives it."""
    here = c or Compile(0, 0)
    if kind == "str":
        return Rec("str", [r.choice(FILES), r.randrange(8)])
    if kind == "chromium_event":
        event = chromium(r, c, r.choice("BEiX"), r.choice(CHROMIUM_NAMES))
        return Rec(kind, {}, ctx, _json_bytes(event, r))
    if kind in METRICS_EVENTS:
        return metrics_record(kind, r, here, ctx)
    if kind == "artifact":
        name = r.choice(list(TORCH_ARTIFACTS))
        body = (
            _json_bytes(json_payload(name, r, here), r)
            if TORCH_ARTIFACTS[name] == "json"
            else text_payload(name, r, here).encode()
        )
        return Rec(kind, {"name": name, "encoding": TORCH_ARTIFACTS[name]}, ctx, body)
    if kind == "graph_dump":
        name = r.choice(
            ("inductor_aot_wrapper_code", "inductor_aot_kernel_code", "inductor_aot_header_code")
        )
        return Rec(
            kind,
            {"name": name, "type": "cpp", "filename": "/tmp/x.cpp"},
            ctx,
            output_code(r).encode(),
        )
    if kind == "dynamo_start":
        return Rec(kind, {"stack": stack(here)}, ctx)
    if kind == "dump_file":
        return Rec(kind, {"name": "<eval_with_key>.7"}, ctx, b"def forward(self, x):\n    return x")
    if kind == "link":
        return Rec(kind, {"name": "cprofile", "url": "https://example.com/profile"}, ctx)
    if kind in (
        "create_symbol",
        "create_unbacked_symbol",
        "guard_added_fast",
        "guard_added",
        "symbolic_shape_specialization",
        "propagate_real_tensors",
        "expression_created",
        "guard_on_data_dependent_error",
        "propagate_real_tensors_provenance",
    ):
        return Rec(
            kind,
            {
                "symbol": "u0",
                "expr": "Eq(u0, 1)",
                "result": "False",
                "prefix": r.choice(("eval", "runtime_assert")),
                "vr": "[-int_oo, int_oo]",
                "user_stack": stack(here),
                "stack": stack(here),
                "reason": "x",
            },
            ctx,
        )
    if kind in ("missing_fake_kernel", "mismatched_fake_kernel"):
        return Rec(kind, {"op": "mylib.foo.default", "reason": "no fake kernel"}, ctx)
    if kind in ("describe_storage", "describe_tensor", "describe_source"):
        return Rec(kind, {"id": 1, "describer_id": 0, "ndim": 2, "size": [2, 2]}, ctx)
    if kind == "optimize_ddp_split_child":
        return Rec(kind, {"name": "submod_0"}, ctx, graph_text(r, here).encode())
    if kind in ("export", "exported_program"):
        return Rec(kind, {}, ctx, b"ExportedProgram:\n    class GraphModule(torch.nn.Module):")
    payload = graph_text(r, here).encode() if "graph" in kind else b"payload of " + kind.encode()
    return Rec(kind, {}, ctx, payload)


# -- hostile passes over records ------------------------------------------------------------


def make_hostile(recs: list[Rec], r: random.Random, rate: float) -> list[str]:
    """Hostile values and odd orders in place; returns what was done, for the report."""
    done: list[str] = []
    for rec in recs:
        if r.random() < rate * 3:
            rec.inner = hostilize(rec.inner, r, max(rate, 0.2)) if r.random() < 0.8 else hostile(r)
            done.append(f"metadata of {rec.kind}")
        if r.random() < rate:
            rec.context = hostilize(rec.context, r, 0.5)
            if r.random() < 0.5:
                key = r.choice(
                    (
                        "rank",
                        "frame_id",
                        "frame_compile_id",
                        "attempt",
                        "compiled_autograd_id",
                        "subgraph_name",
                        "stack",
                    )
                )
                rec.context[key] = hostile(r)
            done.append(f"context of {rec.kind}")
        if rec.payload is not None and r.random() < rate * 3:
            rec.payload = hostile_payload(rec.payload, r)
            done.append(f"payload of {rec.kind}")
        if r.random() < rate / 2:
            rec.md5 = r.choice(("wrong", "missing", "orphan"))
        if r.random() < rate / 3:
            rec.payload_first = True
            done.append("payload before envelope")
        if r.random() < rate / 4:
            rec.envelope = r.choice(
                (
                    hostile(r),
                    [rec.kind],
                    {"rank": 0, rec.kind: {}},
                    {},
                    {rec.kind: rec.inner, rec.kind + "_": 1},
                )
            )
            done.append("envelope replaced")
    if r.random() < rate * 4:
        done.append(reorder(recs, r))
    return done


def hostile_payload(payload: bytes, r: random.Random) -> bytes:
    """A payload's JSON with hostile values, or another JSON type, or hostile text."""
    try:
        value = json.loads(payload)
    except ValueError:
        value = None
        text = payload.decode("utf-8", "replace")
    if value is not None and r.random() < 0.6:
        if r.random() < 0.4:  # not the type torch writes: a list, a string, a number ...
            return dumps(
                r.choice(([1, 2], "x", 3, None, True, [], {}, [{"ops": 1}], hostile(r)))
            ).encode("utf-8", "surrogatepass")
        return dumps(hostilize(value, r, 0.3), indent=r.random() < 0.5).encode(
            "utf-8", "surrogatepass"
        )
    if value is None:
        lines = text.split("\n")
        for _ in range(r.choice((1, 3))):
            lines.insert(r.randrange(len(lines) + 1), hostile_text(r))
        data = "\n".join(lines).encode("utf-8", "surrogatepass")
    else:
        data = hostile_text(r).encode("utf-8", "surrogatepass")
    if r.random() < 0.2:
        data += bytes([0xFF, 0xFE, 0xC3, 0x28, 0xED, 0xA0, 0x80])  # not UTF-8
    return data


def reorder(recs: list[Rec], r: random.Random) -> str:
    how = r.choice(("shuffle", "reverse", "duplicate", "swap", "metrics first", "rotate"))
    if how == "shuffle" and len(recs) > 2:
        a = r.randrange(len(recs))
        window = recs[a : a + r.choice((3, 10, 40))]
        r.shuffle(window)
        recs[a : a + len(window)] = window
    elif how == "reverse":
        recs.reverse()
    elif how == "duplicate":
        for _ in range(r.choice((1, 5))):
            recs.insert(r.randrange(len(recs) + 1), r.choice(recs))
    elif how == "swap":
        for _ in range(r.choice((1, 5))):
            i, j = r.randrange(len(recs)), r.randrange(len(recs))
            recs[i], recs[j] = recs[j], recs[i]
    elif how == "metrics first":
        metrics = [x for x in recs if x.kind in METRICS_EVENTS]
        rest = [x for x in recs if x.kind not in METRICS_EVENTS]
        recs[:] = metrics + rest
    else:
        k = r.randrange(len(recs))
        recs[:] = recs[k:] + recs[:k]
    return f"records: {how}"


# -- writing ----------------------------------------------------------------------------------


def prefix(r: random.Random, n: int, ranked: int | None) -> bytes:
    level = "V" if r.random() < 0.97 else r.choice("IWEC")
    head = f"[rank{ranked}]:" if ranked is not None and r.random() < 0.05 else ""
    path = "torch/_dynamo/utils.py" if r.random() < 0.98 else r.choice(("a b/c.py", "x" * 300))
    return (
        f"{head}{level}1121 11:50:{48 + n // 1000 % 10:02d}.{n % 1000:03d}000 5896 "
        f"{path}:{2350 + n % 7}] "
    ).encode()


#: Record kinds written so far in this process (events, and artifacts by name): the
#: report says how many of the kinds torch names were written.
WRITTEN: set[str] = set()


def write_log(recs: list[Rec], r: random.Random, rank: int | None = None) -> bytes:
    """The log's bytes: envelope lines, TAB payload lines, md5s as torch computes them."""
    out: list[bytes] = []
    for n, rec in enumerate(recs):
        WRITTEN.add(rec.kind)
        if rec.kind == "artifact" and isinstance(rec.inner, dict):
            WRITTEN.add(f"artifact {rec.inner.get('name')}")
        if rec.envelope is not None:
            envelope = dumps(rec.envelope)
        else:
            meta: dict[str, Any] = {rec.kind: rec.inner, **rec.context}
            if rec.payload is not None and rec.md5 != "missing":
                digest = hashlib.md5(rec.payload).hexdigest()
                meta["has_payload"] = digest if rec.md5 == "right" else "0" * 32
            elif rec.payload is None and rec.md5 == "orphan":
                meta["has_payload"] = "d41d8cd98f00b204e9800998ecf8427e"
            envelope = dumps(meta)
        line = prefix(r, n, rank) + envelope.encode("utf-8", "surrogatepass")
        body = (
            b""
            if rec.payload is None
            else b"".join(b"\t" + p + b"\n" for p in rec.payload.split(b"\n"))
        )
        out.append(body + line + b"\n" if rec.payload_first else line + b"\n" + body)
        if r.random() < 0.01:
            out.append(r.choice((b"\n", b"garbage line\n", b"\t\n", b"V1121 broken\n")))
    data = b"".join(out)
    if r.random() < 0.05:
        data = data.replace(b"\n", b"\r\n")
    if r.random() < 0.05:
        data = data[: r.randrange(len(data) + 1)]  # cut short, as a crash leaves it
    return data


def trace_log(
    r: random.Random,
    rank: int | None = None,
    rate: float | None = None,
    compiles: list[Compile] | None = None,
) -> tuple[bytes, list[str]]:
    compiles = compiles if compiles is not None else program(r)
    recs = records(r, compiles, rank)
    rate = rate if rate is not None else r.choice((0.0, 0.01, 0.03, 0.08, 0.2))
    done = make_hostile(recs, r, rate)
    if rank is not None and r.random() < 0.1:  # another rank's records in this log
        other = records(r, program(r), rank + 1)
        at = r.randrange(len(recs) + 1)
        recs[at:at] = other[: r.choice((1, 5, 50))]
        done.append("ranks mixed in one log")
    return write_log(recs, r, rank), [f"rate {rate}"] + done[:6]


def write_trace(r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    rank = r.choice((None, None, 0, 3))
    data, done = trace_log(r, rank)
    name = (
        f"dedicated_log_torch_trace_rank_{rank}_ab{n}.log"
        if rank is not None
        else f"dedicated_log_torch_trace_{n}.log"
    )
    if r.random() < 0.1:
        data = gzip.compress(data, compresslevel=1)
        name += ".gz"
        if r.random() < 0.2:
            data = data[: r.randrange(len(data) + 1)]
    path = work / name
    path.write_bytes(data)
    return path, "; ".join(done)


def write_rank_folder(r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    folder = work / f"ranks-{n}"
    folder.mkdir()
    base = program(r)
    count = r.choice((2, 2, 2, 3, 4))
    done = []
    for rank in range(count):
        same = r.random() < 0.6
        data, steps = trace_log(r, rank, r.choice((0.0, 0.02, 0.1)), base if same else None)
        number = rank if r.random() < 0.95 else 0  # two logs of one rank, sometimes
        (folder / f"dedicated_log_torch_trace_rank_{number}_{rank}x{n}.log").write_bytes(data)
        done.append(f"rank {rank}: " + "; ".join(steps[:3]))
    extra = r.random()
    if extra < 0.1:
        (folder / f"dedicated_log_torch_trace_{n}.log").write_bytes(trace_log(r)[0])
        done.append("a log without a rank")
    elif extra < 0.15:
        outside = work / f"outside-{n}.log"
        outside.write_bytes(trace_log(r)[0])
        (folder / "dedicated_log_torch_trace_rank_9_link.log").symlink_to(outside)
        done.append("a link out of the folder")
    elif extra < 0.2:
        (folder / "notes.txt").write_text("not a log", encoding="utf-8")
        (folder / "sub").mkdir()
    return folder, " | ".join(done)


TEXT_TAGS = (
    "graph_code",
    "graph_code_verbose",
    "aot_graphs",
    "aot_joint_graph",
    "post_grad_graphs",
    "pre_grad_graphs",
    "guards",
    "verbose_guards",
    "graph_breaks",
    "recompiles",
    "output_code",
    "cudagraphs",
    "trace_source",
    "trace_bytecode",
    "dynamic",
    "schedule",
    "",
)


def text_messages(r: random.Random, c: Compile) -> list[tuple[str, list[str]]]:
    """(tag, lines) of the messages TORCH_LOGS prints for one compile."""
    graph = graph_text(r, c).split("\n")
    out = [
        ("", [f"torchdynamo start compiling {c.function} /home/user/project/model.py:{c.line}"]),
        ("graph_code", ["TRACED GRAPH", " ===== __compiled_fn_1 =====", *graph]),
        ("aot_graphs", ["TRACED GRAPH", " ===== Forward graph 0 =====", *graph]),
        ("guards", ["GUARDS:", "+- TENSOR_MATCH: L['x']"]),
        ("output_code", ["Output code: ", *output_code(r).split("\n")]),
    ]
    if c.broke:
        out.append(
            (
                "graph_breaks",
                [
                    f"Graph break in user code at /home/user/project/model.py:{c.line + 2}",
                    "Graph Break Reason: Call to `torch._dynamo.graph_break()`",
                ],
            )
        )
    if c.number:
        out.append(
            (
                "recompiles",
                [
                    f"Recompiling function {c.function} in /home/user/project/model.py:{c.line}",
                    "    triggered by the following guard failure(s):",
                    "    - 0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16",
                ],
            )
        )
    if c.failed:
        out.append(
            (
                "",
                [
                    f"WON'T CONVERT {c.function} /home/user/project/model.py line {c.line}",
                    "Traceback (most recent call last):",
                    '  File "/home/user/project/model.py", line 3, in f',
                    "torch._dynamo.exc.Unsupported: Tensor.item",
                ],
            )
        )
    out.append(("cudagraphs", ["skipping cudagraphs due to cpu device (arg0_1)"]))
    return out


def write_text_log(r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    rate = r.choice((0.0, 0.02, 0.1, 0.3))
    old = r.random() < 0.15
    ranks = r.random() < 0.2
    lines: list[str] = []
    messages = []
    for c in program(r):
        messages += [(c, tag, body) for tag, body in text_messages(r, c)]
    if r.random() < rate * 3:
        r.shuffle(messages)
    for i, (c, tag, body) in enumerate(messages):
        cid = f"[{'!0/' if c.ca is not None else ''}{c.frame}/{c.number}" + (
            f"_{c.attempt}]" if c.attempt else "]"
        )
        if r.random() < rate:
            cid = r.choice(("[x/y]", "[99999999999/0]", "[-/-]", "", "[" + "9" * 40 + "]"))
        if r.random() < rate:
            tag = r.choice(TEXT_TAGS)
        if r.random() < rate:
            body = [hostile_text(r) if r.random() < 0.5 else b for b in body]
        rank = f"[rank{r.choice((0, 1, 1000000))}]:" if ranks else ""
        for text in body:
            if old:
                logger = "torch._dynamo.output_graph" + (f".__{tag}" if tag else "")
                lines.append(
                    f"{rank}[2024-03-25 11:07:02,{i % 1000:03d}] {cid} {logger}: "
                    f"[{r.choice(('DEBUG', 'INFO', 'WARNING', 'ERROR'))}] {text}"
                )
            else:
                head = f"{r.choice('VIWE')}1123 21:34:12.{i:06d} 18715 torch/_dynamo/x.py:{i % 99}]"
                lines.append(f"{rank}{head} {cid} " + (f"[__{tag}] " if tag else "") + text)
        if r.random() < 0.05:
            lines.append("/home/user/.venv/lib/python3.11/site-packages/x.py:3: UserWarning: hi")
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    if r.random() < 0.1:
        data += b"\n\xff\xfe bad bytes\n"
    path = work / f"torch_logs-{n}.log"
    path.write_bytes(data)
    return path, f"rate {rate}" + (", old format" if old else "") + (", ranks" if ranks else "")


def write_debug_folder(r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    root = work / f"debug-{n}" / "torch_compile_debug"
    run = root / "run_2026_01_01_00_00_00_000000-pid_1"
    (run / "torchdynamo").mkdir(parents=True)
    rate = r.choice((0.0, 0.05, 0.2, 0.5))
    (run / "torchdynamo" / "debug.log").write_text(
        "Step 1: torchdynamo start tracing f\n", encoding="utf-8"
    )
    inductor = run / "torchinductor"
    inductor.mkdir()
    (inductor / "aot_model___0_debug.log").write_text("aot graph\n", encoding="utf-8")
    done = [f"rate {rate}"]
    for g in range(r.choice((1, 2, 3))):
        c = Compile(0, g)
        folder = inductor / f"model__{g}_{r.choice(('inference', 'forward', 'backward'))}_{g}.0"
        folder.mkdir()
        code = output_code(r)
        files: dict[str, bytes] = {
            "fx_graph_readable.py": graph_text(r, c).encode(),
            "fx_graph_transformed.py": graph_text(r, c).encode(),
            "fx_graph_runnable.py": b"import torch\n" + graph_text(r, c).encode(),
            "ir_pre_fusion.txt": b"op0: SchedulerNode(ComputedBuffer)\n  buf0: ComputedBuffer\n"
            b"op1: SchedulerNode(ComputedBuffer)\n",
            "ir_post_fusion.txt": b"op0_op1: FusedSchedulerNode(NoneType)\n"
            b"op0_op1.snodes[0] =\nop0: SchedulerNode(ComputedBuffer)\n",
            "output_code.py": code.encode(),
        }
        mapping = json_payload("inductor_provenance_tracking_node_mappings", r, c)
        sdsc = {
            "0_mul": {
                "debug_handle_": {"aten_op": "aten.mul", "ir_chain": ["a", "b"]},
                "numCoresUsed_": 4,
                "numWkSlicesPerDim_": {"mb": 2},
                "coreIdToWkSlice_": {"0": {"mb": 0}},
                "dscs_": [
                    {
                        "mul": {
                            "N_": {"mb": 8, "name_": "n"},
                            "labeledDs_": [
                                {
                                    "dsName_": "in0",
                                    "dsType_": "INPUT",
                                    "dataFormat_": "SEN169_FP16",
                                    "memOrg_": {"hbm": {"isPresent": 1}},
                                }
                            ],
                            "scheduleTree_": [
                                {
                                    "nodeType_": "allocate",
                                    "name_": "a",
                                    "component_": "hbm",
                                    "layoutDimOrder_": ["mb"],
                                }
                            ],
                            "computeOp_": [
                                {
                                    "exUnit": "sfp",
                                    "opFuncName": "mul",
                                    "inputLabeledDs": ["in0"],
                                    "outputLabeledDs": ["out"],
                                }
                            ],
                        }
                    }
                ],
            }
        }
        for name, value in (
            ("inductor_provenance_tracking_node_mappings.json", mapping),
            ("sdsc_0.json", sdsc),
        ):
            if r.random() < rate * 2:
                value = hostilize(value, r, 0.3) if r.random() < 0.7 else hostile(r)
                done.append(f"{folder.name}/{name}")
            files[name] = dumps(value).encode("utf-8", "surrogatepass")
        for name in list(files):
            roll = r.random()
            if roll < rate / 3:
                del files[name]
            elif roll < rate:
                files[name] = files[name] + hostile_text(r).encode("utf-8", "surrogatepass")
                done.append(f"{folder.name}/{name}: text")
            elif roll < rate * 1.2:
                files[name] = b"\x00\x01binary"
        for name, data in files.items():
            (folder / name).write_bytes(data)
        if r.random() < rate:
            (folder / r.choice(("unknown.txt", "sdsc_x.json", "\u202ename.py"))).write_bytes(b"x")
            (folder / "subfolder").mkdir()
    if r.random() < 0.5:  # the trace log torch 2.13 writes beside the runs
        (root / "tlparse").mkdir()
        (root / "tlparse" / f"dedicated_log_torch_trace_{n}.log").write_bytes(trace_log(r)[0])
    if r.random() < rate:
        (root / "stray.txt").write_text("x", encoding="utf-8")
        (inductor / "link_out").symlink_to(work)
        done.append("a link out")
    shape = r.random()
    if shape < 0.15:
        return run, "run folder; " + "; ".join(done[:6])
    if shape < 0.25:
        graph = next(p for p in inductor.iterdir() if p.is_dir() and p.name.startswith("model__"))
        return graph, "graph folder; " + "; ".join(done[:6])
    return root, "; ".join(done[:6])


def write_pair(r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    pair = work / f"pair-{n}"
    base = program(r)
    changed = [
        Compile(
            c.frame,
            c.number,
            c.attempt,
            c.ca,
            r.random() < 0.3 or c.broke,
            r.random() < 0.1,
            c.function,
            c.line,
        )
        for c in base
    ]
    if r.random() < 0.5:
        changed.append(Compile(len(base), 0, function="new_fn", line=99))
    done = []
    for side, compiles in (("baseline", base), ("new", changed)):
        (pair / side).mkdir(parents=True)
        data, steps = trace_log(r, None, r.choice((0.0, 0.02, 0.1)), compiles)
        (pair / side / f"dedicated_log_torch_trace_{side}.log").write_bytes(data)
        done.append(f"{side}: " + "; ".join(steps[:3]))
    return pair, " | ".join(done)


def capture_record(r: random.Random, key: str, source_key: str, rate: float) -> Any:
    record: dict[str, Any] = {
        "key": key,
        "script": "scripts/prog.py",
        "started": 1795261896.3,
        "duration": 3.25,
        "status": r.choice(("ok", "failed", "timeout")),
        "returncode": r.choice((0, 1, None)),
        "stderr_tail": "Traceback (most recent call last):\nRuntimeError: boom",
        "torch_version": "2.13.0+cpu",
        "source_key": source_key,
        "python": "3.11.7",
        "format": 1,
    }
    if r.random() < 0.15:
        return hostile(r)
    for k in list(record):
        if k not in ("key", "source_key") and r.random() < rate:
            record[k] = hostile(r, big=False)
    if r.random() < rate / 3:
        record[r.choice(HOSTILE_STRINGS)] = 1  # a field no record has
    return record


def capture_site(srcdir: Path) -> tuple[Path, str]:
    """A source folder with a capture script; (script, its source key)."""
    script = srcdir / "scripts" / "prog.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text("print('captured')\n", encoding="utf-8")
    root = srcdir.resolve()
    spec = CaptureSpec(
        script=script.resolve(), root=root, depends=tuple(local_imports(script, root))
    )
    return script, spec.source_key()


def write_capture(r: random.Random, work: Path, n: int, source_key: str = "") -> tuple[Path, str]:
    """A capture cache holding one entry: a record (hostile values) and a generated trace."""
    cache = work / f"captures-{n}"
    key = hashlib.sha256(f"{n}".encode()).hexdigest()
    entry = cache / key
    (entry / TRACE).mkdir(parents=True)
    rate = r.choice((0.0, 0.2, 0.5, 1.0))
    record = capture_record(r, key, source_key, rate)
    text = dumps(record) if r.random() < 0.95 else "{not json"
    (entry / RECORD).write_text(text, encoding="utf-8", errors="surrogatepass")
    data, steps = trace_log(r, None, r.choice((0.0, 0.03)))
    (entry / TRACE / f"dedicated_log_torch_trace_{n}.log").write_bytes(data)
    return cache, f"record rate {rate}; " + "; ".join(steps[:3])


def write_model_cache(r: random.Random, work: Path, n: int) -> tuple[Path, str]:
    """A log and its model cache, the cache file then given hostile values."""
    folder = work / f"model-cache-{n}"
    cache = folder / "cache"
    cache.mkdir(parents=True)
    data, steps = trace_log(r, None, r.choice((0.0, 0.02)))
    log = folder / "dedicated_log_torch_trace_m.log"
    log.write_bytes(data)
    read_log(log, cache_dir=cache)
    digest = file_digest(log)
    target = cache_path(cache, digest.sha256, compressed=digest.compressed)
    done = ["; ".join(steps[:2])]
    if target.is_file():
        raw = target.read_bytes()
        raw, step = mc.swap_json_file_value(raw, r)
        for _ in range(r.choice((0, 1, 3))):
            raw, more = mc.swap_json_file_value(raw, r)
            step += f", {more}"
        target.write_bytes(raw)
        done.append(step)
    return folder, " | ".join(done)


WRITERS: dict[str, Callable[[random.Random, Path, int], tuple[Path, str]]] = {
    "trace": write_trace,
    "rank folder": write_rank_folder,
    "text log": write_text_log,
    "debug folder": write_debug_folder,
    "diff pair": write_pair,
    "capture cache": write_capture,
    "model cache": write_model_cache,
}


# -- running ----------------------------------------------------------------------------------


def _quiet() -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
    stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
    return stack


def command_line(*argv: str) -> None:
    """One ``sphinx-torchtrace`` command in process: only its own refusals are expected."""
    args = cli._parser().parse_args(list(argv))
    with _quiet():
        try:
            args.run(args)
        except cli.InputError:
            pass


def check(kind: str, path: Path) -> tuple[int, int]:
    """The input through its reader, the command line and every page: (diagnostics, pages)."""
    turn = zlib.crc32(path.name.encode())
    if kind == "capture cache":
        return _capture_pages(path, turn)
    if kind == "model cache":  # the model as the hostile cache file gives it (or a fresh one)
        log = path / "dedicated_log_torch_trace_m.log"
        return trace_pages(load_trace(log, cache_dir=path / "cache"), turn)
    # the command line reads the input again: one input in four (its formats in turn)
    if kind == "diff pair" and turn % 4 == 0:
        fmt = FORMATS[turn // 4 % len(FORMATS)]
        command_line("diff", str(path / "baseline"), str(path / "new"), "--format", fmt)
    elif kind in ("trace", "rank folder") and turn % 4 == 0:
        command_line("summary", *(["--json"] if turn // 4 % 2 else []), str(path))
    if kind in ("trace", "rank folder"):
        return trace_pages(load_trace(path), turn)
    if kind == "text log":
        return trace_pages(load_text_log(path), turn)
    return mc.model_and_pages(path)  # debug folders, pairs: every page, with and without source


def trace_pages(trace: Trace, turn: int) -> tuple[int, int]:
    """A trace's plan and every page view: with the source shown or not (in turn; both for
    one input in eight): (diagnostics, pages)."""
    plan = plan_trace("run", trace, "torchtrace")
    for no_source in (False, True) if turn % 8 == 0 else (bool(turn // 8 % 2),):
        settings = PageSettings(no_source=no_source)
        for docname in plan.docnames:
            build_page(plan, docname, settings)
    found = len(trace.diagnostics) + sum(len(r.diagnostics) for r in trace.ranks)
    return found, len(plan.docnames)


def _capture_pages(cache_dir: Path, turn: int) -> tuple[int, int]:
    """What the capture directive does with a cache entry: look it up, say how it was made,
    show its trace."""
    from sphinx_torchtrace.sphinxext.families.capture import CapturedTrace, status_text

    cache = CaptureCache(cache_dir)
    entries = [e.name for e in cache_dir.iterdir() if not e.name.startswith(".")]
    capture = cache.lookup(entries[0]) or cache.lookup_source("")
    if capture is None:
        return 0, 0
    status_text(capture)
    CapturedTrace(capture.record.script, capture, None).blocks()
    cache.prune()
    return trace_pages(load_trace(capture.trace_dir), turn)


_STATE_NAMES = ("torchtrace-cache", "torchtrace-captures")


def corrupt_state(app_dirs: list[Path], r: random.Random) -> int:
    """Overwrite the extension's own state files (model cache, stamps, manifest, capture
    records) with hostile JSON; returns how many."""
    hit = 0
    for root in app_dirs:
        for path in sorted(root.rglob("*")):
            name = path.name
            state = (
                (
                    name.endswith((".json", ".json.gz"))
                    and (
                        any(s in path.parts for s in _STATE_NAMES) or name.startswith("downloads-")
                    )
                )
                or name.startswith(".torchtrace")
                or name == RECORD
            )
            if not path.is_file() or not state or r.random() < 0.3:
                continue
            raw = path.read_bytes()
            if raw[:2] == b"\x1f\x8b":
                raw = gzip.decompress(raw)
            if r.random() < 0.5:
                raw, _ = mc.swap_json_file_value(raw, r)
            else:
                raw = dumps(hostile(r)).encode("utf-8", "surrogatepass")
            path.write_bytes(raw)
            hit += 1
    return hit


def sphinx_build(
    kind: str, path: Path, work: Path, builder: str, r: random.Random, again: bool
) -> tuple[str, BaseException | None]:
    """A real build of a page showing the input (and, with ``again``, a second build after
    its state was overwritten): (warnings, exception)."""
    from sphinx.testing.util import SphinxTestApp

    src = work / "site"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir()
    conf = [
        'extensions = ["sphinx_torchtrace"]',
        'project = "generated"',
        'copyright = "2026, us"',
        'version = "1"',
        "show_warning_types = True",
    ]  # Sphinx 7.3 names a warning's type only when asked
    if kind == "capture cache":
        _, source_key = capture_site(src)
        cache = src / "_captures"
        shutil.copytree(path, cache, symlinks=True)
        _retarget_capture(cache, source_key)
        conf += ["torchtrace_capture = 'never'", f"torchtrace_capture_cache = {str(cache)!r}"]
        directive = ".. torchtrace-capture:: scripts/prog.py\n   :name: run\n"
    elif kind == "diff pair":
        shutil.copytree(path, src / "pair", symlinks=True)
        directive = ".. torchtrace-diff:: pair/baseline pair/new\n   :name: run\n"
    else:
        target = path / "dedicated_log_torch_trace_m.log" if kind == "model cache" else path
        name = target.name
        if target.is_dir():
            shutil.copytree(target, src / name, symlinks=True)
        else:
            shutil.copy(target, src / name)
        directive = f".. torchtrace:: {name}\n   :name: run\n"
    (src / "conf.py").write_text("\n".join(conf) + "\n", encoding="utf-8")
    (src / "index.rst").write_text(f"Generated\n=========\n\n{directive}", encoding="utf-8")
    warnings = io.StringIO()
    for round_ in (1, 2) if again else (1,):
        app = None
        try:
            app = SphinxTestApp(
                builder, srcdir=src, status=io.StringIO(), warning=warnings, freshenv=round_ == 1
            )
            app.build()
        except Exception as err:  # every exception is a finding
            return warnings.getvalue(), err
        finally:
            if app is not None:
                doctrees, outdir = Path(app.doctreedir), Path(app.outdir)
                app.cleanup()
        if round_ == 1 and again:
            corrupt_state([doctrees, src, outdir], r)
    return warnings.getvalue(), None


def _retarget_capture(cache: Path, source_key: str) -> None:
    """Give the entry's record the source key of the site it is built in (a hostile record
    keeps its hostile values): the build then finds it under ``'never'``."""
    for entry in cache.iterdir():
        record = entry / RECORD
        try:
            text = record.read_text(encoding="utf-8", errors="surrogatepass")
        except OSError:
            continue
        record.write_text(
            text.replace('"source_key": ""', f'"source_key": "{source_key}"'),
            encoding="utf-8",
            errors="surrogatepass",
        )


@dataclass
class Report(mc.Report):
    builders: dict[str, int] = field(default_factory=dict)
    rebuilt: int = 0
    seconds: dict[str, float] = field(default_factory=dict)  # per kind
    written: set[str] = field(default_factory=set)  # record kinds written (see WRITTEN)
    #: the inputs of the campaign this report holds, as [start, stop) ranges, and the
    #: campaign's identity: parts saved apart merge only into their own campaign
    covered: list[tuple[int, int]] = field(default_factory=list)
    campaign: tuple[int, int, int] = (0, 0, 0)  # seed, inputs, builds
    code: str = ""  # the commit the part ran (see code_version)
    elapsed: float = 0.0  # wall seconds, summed over parts run one after another
    rss_mib: float = 0.0  # the highest max RSS of the processes of the parts merged

    def merge(self, other: Report) -> None:
        self.written |= other.written
        self.covered = sorted({*self.covered, *other.covered})
        self.elapsed += other.elapsed
        self.rss_mib = max(self.rss_mib, other.rss_mib)
        self.tried += other.tried
        self.built += other.built
        self.rebuilt += other.rebuilt
        self.diagnostics += other.diagnostics
        self.pages += other.pages
        for mine, theirs in (
            (self.kinds, other.kinds),
            (self.builders, other.builders),
            (self.seconds, other.seconds),
        ):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        for k, (tb, case, count) in other.findings.items():
            old = self.findings.get(k)
            self.findings[k] = (old[0], old[1], old[2] + count) if old else (tb, case, count)
        self.slowest = max(self.slowest, other.slowest)
        self.slowest_build = max(self.slowest_build, other.slowest_build)
        self.traced_peak = max(self.traced_peak, other.traced_peak)


def input_rng(seed: int, n: int) -> random.Random:
    """Input ``n``'s own generator: an input is written again from its number alone."""
    return random.Random(f"{seed}-{n}")


def pick_kind(r: random.Random, kinds: list[str]) -> str:
    weights = [KIND_WEIGHTS[k] for k in kinds]
    return r.choices(kinds, weights=weights)[0]


#: Sphinx's own warning on any incremental json or pickle build (Sphinx 9 copies its
#: environment and page sources into the output again, refusing to overwrite them): not
#: the extension's, and no input changes it.
_SPHINX_OWN = re.compile(
    r"Aborted attempted copy from \S+ to \S+(?:/environment\.pickle|"
    r"/_sources/\S+\.txt) \(the destination path has existing data\)"
)


def run_one(
    n: int,
    args: argparse.Namespace,
    report: Report,
    work: Path,
    build: str | None,
    keep: Path | None = None,
) -> None:
    r = input_rng(args.seed, n)
    kind = pick_kind(r, args.kinds)
    path, steps = WRITERS[kind](r, work, n)
    case = f"#{n} {kind}: {steps[:300]}"
    if keep is not None:
        shutil.copytree(work, keep, symlinks=True, dirs_exist_ok=True)
        print(f"input #{n} ({kind}) written to {keep / path.relative_to(work)}")
    report.kinds[kind] = report.kinds.get(kind, 0) + 1
    sample = n % 25 == 0
    if sample:
        tracemalloc.start()
    t = time.perf_counter()
    signal.alarm(TIME_LIMIT)
    try:
        diagnostics, pages = check(kind, path)
        report.diagnostics += diagnostics
        report.pages += pages
    except Exception as err:  # every exception is a finding
        report.found(err, case, traceback.format_exc())
    finally:
        signal.alarm(0)
    seconds = time.perf_counter() - t
    report.seconds[kind] = report.seconds.get(kind, 0.0) + seconds
    if sample:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        report.traced_peak = max(report.traced_peak, (peak, case))
    report.slowest = max(report.slowest, (seconds, case))
    report.tried += 1
    if build is not None:
        again = r.random() < 0.25
        t = time.perf_counter()
        signal.alarm(TIME_LIMIT * 10)
        failure: BaseException | None
        try:
            warnings, failure = sphinx_build(kind, path, work, build, r, again)
        except mc.Timeout as timeout:
            warnings, failure = "", timeout
        finally:
            signal.alarm(0)
        seconds = time.perf_counter() - t
        report.built += 1
        report.rebuilt += again
        report.builders[build] = report.builders.get(build, 0) + 1
        report.slowest_build = max(report.slowest_build, (seconds, f"{case} ({build})"))
        if failure is not None:
            report.found(failure, f"{case} ({build})", "".join(traceback.format_exception(failure)))
        for foreign in mc._FOREIGN.findall(warnings):
            if not _SPHINX_OWN.search(foreign):
                report.found(f"Sphinx warning: {foreign[:120]}", f"{case} ({build})", foreign)


def run_share(args: argparse.Namespace, worker: int) -> Report:
    """Inputs ``worker``, ``worker + workers`` ... of the campaign."""
    report = Report()
    signal.signal(signal.SIGALRM, mc._alarm)
    import sphinx_torchtrace.sphinxext.families.capture  # noqa: F401 - not timed as an input's

    # the inputs built, spread over the campaign (and so over the workers), builders in turn
    chosen = sorted(
        random.Random(args.seed).sample(range(args.inputs), min(args.builds, args.inputs))
    )
    builders = {n: args.builders[i % len(args.builders)] for i, n in enumerate(chosen)}
    started = time.perf_counter()
    numbers = range(args.start + worker, args.stop, args.workers)
    for i, n in enumerate(numbers):
        build = builders.get(n)
        with tempfile.TemporaryDirectory(prefix="torchtrace-generated-") as tmp:
            try:
                run_one(n, args, report, Path(tmp), build)
            except Exception as err:  # a writer's own failure: still a finding, said so
                report.found(err, f"#{n} (writing the input)", traceback.format_exc())
        if args.progress and (i + 1) % args.progress == 0:
            print(
                f"  [{worker}] {i + 1} inputs, {report.built} builds, {len(report.findings)} "
                f"kinds of finding, {time.perf_counter() - started:.0f} s",
                flush=True,
            )
    report.written = set(WRITTEN)
    return report


def print_report(report: Report, seconds: float, workers: int) -> None:
    seed, inputs, builds = report.campaign
    ranges = ", ".join(f"{a}-{b - 1}" for a, b in _joined(report.covered))
    print(
        f"campaign: seed {seed}, {inputs} inputs, {builds} of them built; run here: "
        f"inputs {ranges or 'none'}; code {report.code or code_version()}"
    )
    print(
        f"inputs generated: {report.tried} (reader + command line + plan + every page view), "
        f"Sphinx builds: {report.built} ({report.rebuilt} built again after their state was "
        f"overwritten), in {seconds:.0f} s on {workers} worker(s)"
    )
    kinds = ", ".join(
        f"{n} {kind} ({report.seconds.get(kind, 0) / max(n, 1) * 1000:.0f} ms each)"
        for kind, n in sorted(report.kinds.items())
    )
    print(f"inputs per kind: {kinds}")
    events = [e for e in EVENTS if e in report.written]
    names = [a for a in TORCH_ARTIFACTS if f"artifact {a}" in report.written]
    print(
        f"record kinds written: {len(events)} of {len(EVENTS)} event kinds, {len(names)} of "
        f"{len(TORCH_ARTIFACTS)} artifact names (torch's and the reader's)"
    )
    builders = ", ".join(f"{n} {b}" for b, n in sorted(report.builders.items()))
    print(f"builds per builder: {builders}")
    print(f"diagnostics given: {report.diagnostics}, pages rendered: {report.pages}")
    print(f"slowest input: {report.slowest[0]:.2f} s ({report.slowest[1]})")
    print(f"slowest build: {report.slowest_build[0]:.2f} s ({report.slowest_build[1]})")
    print(
        f"peak memory: max RSS {max(report.rss_mib, _max_rss()):.0f} MiB; tracemalloc peak "
        f"of one input (1 in 25 sampled) {report.traced_peak[0] / 2**20:.1f} MiB "
        f"({report.traced_peak[1]})"
    )
    print(f"findings (distinct exceptions and foreign warnings): {len(report.findings)}")
    for key, (tb, case, count) in sorted(report.findings.items()):
        print(f"\n== {key}: {count} input(s); first: {case}\n{tb}")


def _max_rss() -> float:
    """MiB: the most this process or any of its workers held."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024


def _joined(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Adjacent or overlapping [start, stop) ranges as one."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def code_version() -> str:
    """The commit of the code being run, ``+dirty`` when the checkout has changes."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "HEAD") or "unknown"
    return commit + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def save_part(report: Report, workers: int, path: Path) -> None:
    """A part's figures as JSON (record kinds: only those the report counts)."""
    counted = {*EVENTS, *(f"artifact {a}" for a in TORCH_ARTIFACTS)}
    data = {
        "campaign": list(report.campaign),
        "code": report.code,
        "covered": report.covered,
        "workers": workers,
        "elapsed": report.elapsed,
        "rss_mib": report.rss_mib,
        "tried": report.tried,
        "built": report.built,
        "rebuilt": report.rebuilt,
        "kinds": report.kinds,
        "builders": report.builders,
        "seconds": report.seconds,
        "written": sorted(report.written & counted),
        "findings": report.findings,
        "slowest": report.slowest,
        "slowest_build": report.slowest_build,
        "traced_peak": report.traced_peak,
        "diagnostics": report.diagnostics,
        "pages": report.pages,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def load_part(path: Path) -> tuple[Report, int]:
    data = json.loads(path.read_text(encoding="utf-8"))
    report = Report(
        tried=data["tried"],
        kinds=data["kinds"],
        built=data["built"],
        findings={k: (tb, case, n) for k, (tb, case, n) in data["findings"].items()},
        slowest=tuple(data["slowest"]),
        slowest_build=tuple(data["slowest_build"]),
        traced_peak=tuple(data["traced_peak"]),
        diagnostics=data["diagnostics"],
        pages=data["pages"],
        builders=data["builders"],
        rebuilt=data["rebuilt"],
        seconds=data["seconds"],
        written=set(data["written"]),
        covered=[tuple(r) for r in data["covered"]],
        campaign=tuple(data["campaign"]),
        code=data["code"],
        elapsed=data["elapsed"],
        rss_mib=data["rss_mib"],
    )
    return report, data["workers"]


def merge_saved(paths: list[Path]) -> tuple[Report, int]:
    """The parts of one campaign saved by ``--save``, as one report (and the most workers
    a part used).  Parts of other campaigns or code, dirty parts, parts run twice: refused."""
    total, workers = Report(), 1
    for path in paths:
        part, used = load_part(path)
        if part.code.endswith("+dirty") or part.code == "unknown":
            raise SystemExit(f"{path}: ran code of no commit ({part.code}): not a figure")
        if total.covered and (part.campaign, part.code) != (total.campaign, total.code):
            raise SystemExit(
                f"{path}: another campaign {part.campaign} at {part.code}, not "
                f"{total.campaign} at {total.code}"
            )
        seen = {n for a, b in total.covered for n in range(a, b)}
        if any(n in seen for a, b in part.covered for n in range(a, b)):
            raise SystemExit(f"{path}: inputs already merged from another part")
        total.campaign, total.code = part.campaign, part.code
        total.merge(part)
        workers = max(workers, used)
    return total, workers


def campaign(args: argparse.Namespace) -> Report:
    """The whole campaign: in this process, or shared by ``--workers`` processes (not a
    pool's: a pool's workers are daemons, and a Sphinx build may start processes)."""
    if args.workers <= 1:
        return run_share(args, 0)
    import multiprocessing
    import pickle

    context = multiprocessing.get_context("fork")
    total = Report()
    with tempfile.TemporaryDirectory(prefix="torchtrace-campaign-") as tmp:
        outs = [Path(tmp) / f"worker-{w}.pickle" for w in range(args.workers)]
        workers = [
            context.Process(target=_worker, args=(args, w, out)) for w, out in enumerate(outs)
        ]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for out in outs:
            if not out.is_file():
                total.found("a worker ended without a report", str(out), "")
                continue
            total.merge(pickle.loads(out.read_bytes()))  # our own file, of this run
    return total


def _worker(args: argparse.Namespace, worker: int, out: Path) -> None:
    import pickle

    out.write_bytes(pickle.dumps(run_share(args, worker)))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--builds", type=int, default=90, help="inputs also built by Sphinx")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--kinds",
        default=",".join(KIND_WEIGHTS),
        help="input kinds, comma-separated (default: all)",
    )
    parser.add_argument(
        "--builders",
        default=",".join(BUILDERS),
        help="the builders used in turn, comma-separated (default: all)",
    )
    parser.add_argument("--only", type=int, help="write and run input N alone")
    parser.add_argument("--keep", type=Path, help="with --only: where to keep the input")
    parser.add_argument("--build", choices=BUILDERS, help="with --only: build it too")
    parser.add_argument("--progress", type=int, default=1000, help="a line every N inputs")
    parser.add_argument(
        "--range",
        dest="part",
        metavar="START:STOP",
        help="run only inputs START to STOP-1 of the campaign (the builds stay "
        "those of the whole campaign): parts run apart, then --merge",
    )
    parser.add_argument("--save", type=Path, help="keep this run's figures in FILE for --merge")
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="print the figures of the parts saved with --save, as one campaign",
    )
    args = parser.parse_args(argv)
    args.start, args.stop = 0, args.inputs
    if args.part:
        start, _, stop = args.part.partition(":")
        try:
            args.start, args.stop = int(start), int(stop)
        except ValueError:
            parser.error("--range: START:STOP, two numbers")
        if not 0 <= args.start < args.stop <= args.inputs:
            parser.error(f"--range: within 0:{args.inputs}")
    args.kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    args.builders = [b.strip() for b in args.builders.split(",") if b.strip()]
    if set(args.builders) - set(BUILDERS):
        parser.error(f"builders: choose among {', '.join(BUILDERS)}")
    unknown = set(args.kinds) - set(KIND_WEIGHTS)
    if unknown:
        parser.error(f"unknown kinds: {', '.join(sorted(unknown))}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    if args.merge:
        report, workers = merge_saved(args.merge)
        print_report(report, report.elapsed, workers)
        return 1 if report.findings else 0
    if args.only is not None:
        report = Report()
        signal.signal(signal.SIGALRM, mc._alarm)
        with tempfile.TemporaryDirectory(prefix="torchtrace-generated-") as tmp:
            run_one(args.only, args, report, Path(tmp), args.build, args.keep)
        report.written = set(WRITTEN)
        print_report(report, time.perf_counter() - started, 1)
        return 1 if report.findings else 0
    report = Report()
    code = code_version()  # as it started: a checkout edited meanwhile is no one commit
    try:
        report = campaign(args)
    except KeyboardInterrupt:
        print("interrupted: no figures")
        return 130
    report.campaign = (args.seed, args.inputs, args.builds)
    report.covered = [(args.start, args.stop)]
    report.code = code if code == code_version() else f"{code}+dirty"
    report.elapsed = time.perf_counter() - started
    report.rss_mib = _max_rss()
    if args.save:
        save_part(report, args.workers, args.save)
    print_report(report, report.elapsed, args.workers)
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
