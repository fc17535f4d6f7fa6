"""Hostile logs never break the reader: each class ends in a located diagnostic, and the rest
of the log is still in the model, in bounded time and memory.

Each test builds its hostile log from a real bundled one (the ``simple`` log, its compiles
listed in :data:`SIMPLE_LABELS`), adds the hostile records after it, then a last compile
``[9/0]`` (:func:`sentinel`) that proves reading went on past them.

Classes: JSON nested thousands of levels deep (in an envelope, a payload, or JSON text
inside one); lone surrogates (legal in JSON) in names and reasons; decompression bombs
and huge payloads; links and special files in a trace directory, and secrets in bad
lines; very long names and ids; thousands of compile ids.
"""

from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import os
import shutil
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from sphinx_torchtrace.trace import (
    DIAGNOSTIC_SUBTYPES,
    CompileId,
    RankTrace,
    Trace,
    TraceReadError,
    load_trace,
    read_log,
)
from sphinx_torchtrace.trace import reader as reader_module
from sphinx_torchtrace.trace.analyses import compare
from sphinx_torchtrace.trace.analyses.provenance import kernel_stack_traces, provenance_view
from sphinx_torchtrace.trace.analyses.status import frame_status
from sphinx_torchtrace.trace.reader import MAX_JSON_DEPTH, json_too_deep, load_json

DATA = Path(__file__).parent / "data" / "shared"
SIMPLE = DATA / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
SMALL = DATA / "tlparse-inputs" / "inputs" / "comp_metrics.log"
SIMPLE_TEXT = SIMPLE.read_text(encoding="utf-8")
SIMPLE_LINES = SIMPLE_TEXT.count("\n")
SIMPLE_LABELS = [c.label for c in read_log(SIMPLE).compiles]
PREFIX = "V1121 11:50:48.850000 5896 torch/_dynamo/utils.py:2350] "
#: A compile id no bundled log uses, for hostile records.
HOSTILE_FRAME = {"frame_id": 7, "frame_compile_id": 0, "attempt": 0}


def record(envelope: dict[str, Any] | str, payload: str | None = None) -> str:
    """One record as torch writes it; ``envelope`` may be JSON text (for what json.dumps can't)."""
    text = envelope if isinstance(envelope, str) else json.dumps(envelope)
    if payload is None:
        return PREFIX + text + "\n"
    md5 = hashlib.md5(payload.encode("utf-8")).hexdigest()
    text = text[:-1] + f', "has_payload": "{md5}"}}'
    return PREFIX + text + "".join(f"\n\t{line}" for line in payload.split("\n")) + "\n"


def sentinel() -> str:
    """Compile ``[9/0]``, logged after the hostile records."""
    frame = {"frame_id": 9, "frame_compile_id": 0, "attempt": 0}
    start = {"dynamo_start": {"stack": [{"line": 1, "name": "last", "filename": "/x/last.py"}]}}
    metrics = {"compilation_metrics": {"co_name": "last", "graph_op_count": 1}}
    return record({**start, **frame}) + record({**metrics, **frame})


def write_log(tmp_path: Path, hostile: str, name: str = "hostile.log") -> tuple[Path, int]:
    """The simple log, then ``hostile``, then :func:`sentinel`; and the first hostile line."""
    path = tmp_path / name
    path.write_text(SIMPLE_TEXT + hostile + sentinel(), encoding="utf-8")
    return path, SIMPLE_LINES + 1


def assert_rest_is_there(trace: Trace) -> RankTrace:
    """Every compile of the simple log, and the one logged after the hostile records."""
    (rank,) = trace.ranks
    labels = [c.label for c in rank.compiles]
    assert labels[: len(SIMPLE_LABELS)] == SIMPLE_LABELS
    assert "[9/0]" in labels
    assert rank.compile("[9/0]").status == "ok"
    for d in trace.diagnostics:
        assert d.subtype in DIAGNOSTIC_SUBTYPES
        d.message.encode("utf-8")  # never a lone surrogate or other unencodable text
    return rank


def kinds_at(trace: Trace) -> set[tuple[str, int]]:
    return {(d.subtype, d.line) for d in trace.diagnostics}


def line_of(path: Path, text: str) -> int:
    """The 1-based number of the last line of the log that holds ``text``."""
    lines = path.read_text(encoding="utf-8").split("\n")
    return max(n for n, line in enumerate(lines, 1) if text in line)


# -- 1. JSON nested thousands of levels deep ------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_envelope(depth: int) -> str:
    text = json.dumps({"artifact": {"name": "fine", "encoding": "json"}, **HOSTILE_FRAME})
    return record(text[:-1] + f', "deep": {nested(depth)}}}', "{}")


def _deep_artifact(name: str) -> Callable[[int], str]:
    def make(depth: int) -> str:
        envelope = {"artifact": {"name": name, "encoding": "json"}, **HOSTILE_FRAME}
        return record(envelope, nested(depth))

    return make


def _deep_chromium(depth: int) -> str:
    return record({"chromium_event": {}, **HOSTILE_FRAME}, nested(depth))


def _deep_config(depth: int) -> str:
    metrics = {"compilation_metrics": {"inductor_config": nested(depth), "co_name": "f"}}
    return record({**metrics, **HOSTILE_FRAME})


DEEP_PLACES: dict[str, Callable[[int], str]] = {
    "envelope": _deep_envelope,
    "torch version": _deep_artifact("torch_version"),
    "recompile reasons": _deep_artifact("recompile_reasons"),
    "chromium event": _deep_chromium,
    "compile config": _deep_config,
    "kernel stack traces": _deep_artifact("inductor_provenance_tracking_kernel_stack_traces"),
    "provenance mappings": _deep_artifact("inductor_provenance_tracking_node_mappings"),
    "json artifact": _deep_artifact("fx_graph_cache_miss"),
}


def decode_everything(rank: RankTrace) -> None:
    """What pages decode later: every JSON payload, event, provenance view, stack trace."""
    for c in rank.compiles:
        for artifact in c.artifacts:
            artifact.json()
        provenance_view(c)
        kernel_stack_traces(c, "triton_poi_fused_0")
        compare.recompile_reason_entries(c)
    for event in rank.chromium_events:
        event.decode()


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 50, 100_000])
@pytest.mark.parametrize("place", list(DEEP_PLACES))
def test_deeply_nested_json_is_left_out_with_a_diagnostic(
    tmp_path: Path, place: str, depth: int
) -> None:
    path, line = write_log(tmp_path, DEEP_PLACES[place](depth))
    trace = load_trace(path, cache_dir=tmp_path / "cache")
    assert ("nesting", line) in kinds_at(trace)
    rank = assert_rest_is_there(trace)
    decode_everything(rank)  # nothing of it raises
    assert rank.torch_version is None or isinstance(rank.torch_version, dict)
    if place == "compile config":
        metrics = rank.compile("[7/0]").metrics[0].data
        assert metrics["inductor_config"] is None and metrics["co_name"] == "f"
    if place == "chromium event":
        assert [e.decode() for e in rank.chromium_events][-1] is None
    cached = load_trace(path, cache_dir=tmp_path / "cache")
    assert [c.label for c in cached.ranks[0].compiles] == [c.label for c in rank.compiles]


def test_json_nesting_is_measured_outside_strings_and_in_linear_time() -> None:
    fine = json.dumps({"a": [[1, {"b": "[[[[{{{{" * 1000}]] * 5, "c": '\\"[[[['})
    assert not json_too_deep(fine) and isinstance(load_json(fine), dict)
    assert json_too_deep("[1, " * (MAX_JSON_DEPTH + 1))  # not only runs of brackets
    assert json_too_deep('"\\\\"' + nested(MAX_JSON_DEPTH + 1))  # an escape, then the depth
    with pytest.raises(ValueError):
        load_json(nested(5000))
    start = time.perf_counter()
    for hostile in ["[" * 2_000_000, '"\\"' * 700_000, '["' * 1_000_000, "[{" * 1_000_000]:
        json_too_deep(hostile)
        json_too_deep(hostile.encode())
    assert time.perf_counter() - start < 10  # quadratic would take hours


# -- 2. Lone surrogates ---------------------------------------------------------------------


SURROGATE = "\ud800"


def _surrogate_records() -> str:
    frame = {"frame_id": 7, "frame_compile_id": 0, "attempt": 0, "rank": 0}
    stack = [{"line": 3, "name": f"f{SURROGATE}", "filename": 77}]
    metrics = {
        "co_name": f"name{SURROGATE}",
        "fail_type": f"Error{SURROGATE}",
        "fail_reason": f"reason {SURROGATE}",
        f"key{SURROGATE}": SURROGATE,
        "restart_reasons": [f"restart {SURROGATE}"],
    }
    return "".join(
        [
            record({"str": [f"/home/u/{SURROGATE}.py", 77]}),
            record({"dynamo_start": {"stack": stack}, **frame}),
            record({"artifact": {"name": f"art{SURROGATE}", "encoding": "string"}, **frame}, "x"),
            record(
                {"artifact": {"name": "recompile_reasons", "encoding": "json"}, **frame},
                json.dumps([f"guard {SURROGATE}"]),
            ),
            record({"dump_file": {"name": f"dump{SURROGATE}"}, **frame}, "code"),
            record({"link": {"name": SURROGATE, "url": SURROGATE}, **frame}),
            record({"compilation_metrics": metrics, **frame}),
            record({"artifact": {"name": "x", "encoding": "string"}, **frame, "rank": SURROGATE}),
        ]
    )


def test_lone_surrogates_are_kept_and_every_encoding_tolerates_them(tmp_path: Path) -> None:
    path, line = write_log(tmp_path, _surrogate_records())
    cache_dir = tmp_path / "cache"
    fresh = load_trace(path, cache_dir=cache_dir)  # builds, then writes the cache (JSON, md5)
    assert list(cache_dir.iterdir())
    cached = load_trace(path, cache_dir=cache_dir)
    for trace in (fresh, cached):
        rank = assert_rest_is_there(trace)
        c = rank.compile("[7/0]")
        assert c.stack is not None and c.stack[0].filename == f"/home/u/{SURROGATE}.py"
        assert c.stack[0].name == f"f{SURROGATE}"
        assert f"art{SURROGATE}" in [a.name for a in c.artifacts]
        assert c.recompile_reasons == [f"guard {SURROGATE}"]
        assert [f.reason for f in c.failures] == [f"reason {SURROGATE}", f"restart {SURROGATE}"]
        assert c.metrics[0].data[f"key{SURROGATE}"] == SURROGATE
        assert f"dump{SURROGATE}" in rank.dump_files
        rank_diagnostics = [d for d in trace.diagnostics if d.subtype == "rank"]
        assert [d.line for d in rank_diagnostics] == [line_of(path, '"rank": "\\ud800"')]
    # Borrowed interned strings are a cache variant, digested with the surrogate.
    first = tmp_path / "first.log"
    first.write_text(record({"str": [SURROGATE, 5]}), encoding="utf-8")
    second = tmp_path / "second.log"
    start = {"dynamo_start": {"stack": [{"line": 1, "name": "g", "filename": 5}]}}
    second.write_text(record({**start, **HOSTILE_FRAME}), encoding="utf-8")
    for _ in range(2):
        chained = load_trace([first, second], cache_dir=cache_dir)
        stack = chained.ranks[1].compiles[0].stack
        assert stack is not None and stack[0].filename == SURROGATE


# -- 3. Decompression bombs and huge payloads ------------------------------------------------


def gzip_bomb(tmp_path: Path, megabytes: int) -> tuple[Path, int]:
    """A gzip log: the simple log, a record whose payload expands to ``megabytes`` MiB, the rest.

    The payload is one 1 MiB gzip member repeated (a gzip stream may hold many), so the file
    is about 2.3 KB per MiB it expands to.
    """
    bomb = {"artifact": {"name": "bomb", "encoding": "string"}, **HOSTILE_FRAME, "has_payload": ""}
    head = SIMPLE_TEXT + record(bomb)
    block = (b"\t" + b"A" * 1023 + b"\n") * 1024
    member = gzip.compress(block, compresslevel=9, mtime=0)
    path = tmp_path / "bomb.log.gz"
    with open(path, "wb") as f:
        f.write(gzip.compress(head.encode(), mtime=0))
        for _ in range(megabytes):
            f.write(member)
        f.write(gzip.compress(sentinel().encode(), mtime=0))
    return path, SIMPLE_LINES + 1


def test_decompression_bomb_is_cut_at_the_limit_in_bounded_memory(tmp_path: Path) -> None:
    path, line = gzip_bomb(tmp_path, 2000)  # 4.6 MB on disk, 2 GB decompressed
    assert path.stat().st_size < 5 << 20
    limit = 160 << 20  # above the size of record the reader holds: the bomb streams by
    assert limit > 2 * reader_module.MAX_RECORD_BYTES
    tracemalloc.start()
    try:
        trace = load_trace(path, max_bytes=limit)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < limit
    (cut,) = [d for d in trace.diagnostics if d.subtype == "limit"]
    assert cut.line == line and f"line {line}" in cut.message and "160 MiB" in cut.message
    (rank,) = trace.ranks
    assert [c.label for c in rank.compiles] == SIMPLE_LABELS  # the bomb's record is left out
    assert rank.size == limit
    signature = inspect.signature(load_trace).parameters["max_bytes"]
    assert signature.default == 1 << 30 == reader_module.DEFAULT_MAX_LOG_BYTES


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_a_huge_payload_is_verified_and_kept_but_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    monkeypatch.setattr(reader_module, "MAX_RECORD_BYTES", 1 << 20)
    monkeypatch.setattr(reader_module, "CHUNK_SIZE", 64 << 10)
    huge = "\n".join(f"    buf{i} = torch.ops.aten.relu(buf{i - 1})" for i in range(80_000))
    name = {"artifact": {"name": "huge_graph", "encoding": "string"}, **HOSTILE_FRAME}
    path, line = write_log(tmp_path, record(name, huge))
    if compressed:
        path.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    trace = load_trace(path)
    assert kinds_at(trace) == {("limit", line)}  # no md5 problem: verified as it streamed
    rank = assert_rest_is_there(trace)
    (artifact,) = rank.compile("[7/0]").artifacts
    assert artifact.size == len(huge) and artifact.text() == huge
    assert artifact.node_count is None  # not analysed


def test_gzip_payloads_are_reread_not_held(tmp_path: Path) -> None:
    payload = "\n".join(f"line {i} " + "x" * 90 for i in range(10_000))  # 1 MB
    one = record({"artifact": {"name": "big", "encoding": "string"}, **HOSTILE_FRAME}, payload)
    member = gzip.compress(one.encode(), mtime=0)
    path = tmp_path / "many.log.gz"
    path.write_bytes(gzip.compress(SIMPLE_TEXT.encode(), mtime=0) + member * 150)
    tracemalloc.start()
    try:
        trace = load_trace(path)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 40 << 20  # 150 MB of payloads decompressed; they are not in memory
    artifacts = trace.ranks[0].compile("[7/0]").artifacts
    assert len(artifacts) == 150 and not trace.diagnostics
    assert artifacts[149].text() == payload and artifacts[3].text() == payload


# -- 4. Links and special files in a trace directory; secrets in bad lines ----------------


SECRET = "hunter2-SECRET-VALUE"


def test_links_out_of_a_trace_directory_and_special_files_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "env").write_text(f"TOKEN={SECRET}\nHOME=/root\n", encoding="utf-8")
    shutil.copy(SMALL, outside / "real.log")
    trace_dir = tmp_path / "trace"
    (trace_dir / "sub").mkdir(parents=True)
    shutil.copy(SMALL, trace_dir / "dedicated_log_torch_trace_rank_0.log")
    shutil.copy(SMALL, trace_dir / "sub" / "kept.log")

    def entry(rank: int) -> Path:
        return trace_dir / f"dedicated_log_torch_trace_rank_{rank}.log"

    entry(1).symlink_to(outside / "env")
    entry(2).symlink_to("/proc/self/environ" if Path("/proc/self/environ").exists() else "/dev")
    entry(4).symlink_to(Path("sub") / "kept.log")  # a link inside the directory is fine
    entry(5).symlink_to(tmp_path / "nowhere")
    expected_skips = {1, 2, 5}
    if hasattr(os, "mkfifo"):
        os.mkfifo(entry(3))  # reading it would block the build
        expected_skips.add(3)
    trace = load_trace(trace_dir, display_root=tmp_path)
    assert [r.rank for r in trace.ranks] == [0, 4]
    skipped = [d for d in trace.diagnostics if d.subtype == "skipped"]
    assert {d.path for d in skipped} == {
        os.path.join("trace", entry(n).name) for n in expected_skips
    }
    assert all(d.line == 0 and d.message.startswith("not read: ") for d in skipped)
    assert SECRET not in "".join(str(d) for d in trace.diagnostics)
    # A log given by path may be a link to a regular file outside: the user chose it.
    link = tmp_path / "link.log"
    link.symlink_to(outside / "real.log")
    assert [c.label for c in load_trace(link).ranks[0].compiles] == [
        c.label for c in read_log(SMALL).compiles
    ]
    if hasattr(os, "mkfifo"):
        with pytest.raises(TraceReadError, match="not a regular file"):
            load_trace(entry(3))


def test_newest_log_of_a_directory_skips_links_out_of_it(tmp_path: Path) -> None:
    outside = tmp_path / "env"
    outside.write_text(f"TOKEN={SECRET}\n", encoding="utf-8")
    trace_dir = tmp_path / "trace"
    trace_dir.mkdir()
    shutil.copy(SMALL, trace_dir / "dedicated_log_torch_trace_old.log")
    os.utime(trace_dir / "dedicated_log_torch_trace_old.log", (1, 1))
    (trace_dir / "dedicated_log_torch_trace_new.log").symlink_to(outside)
    trace = load_trace(trace_dir)
    assert [Path(r.path).name for r in trace.ranks] == ["dedicated_log_torch_trace_old.log"]
    assert [d.subtype for d in trace.diagnostics] == ["skipped"]
    only_link = tmp_path / "only"
    only_link.mkdir()
    (only_link / "dedicated_log_torch_trace_x.log").symlink_to(outside)
    with pytest.raises(TraceReadError):
        load_trace(only_link)


def test_diagnostics_quote_a_short_escaped_prefix_of_a_bad_line(tmp_path: Path) -> None:
    bad_line = f"TOKEN=\x1b[31m{'s' * 80}{SECRET}\u2028\x00\n"
    long_rank = {"artifact": {"name": "x" * 500, "encoding": "string"}, **HOSTILE_FRAME}
    long_rank["rank"] = "r" * 500 + SECRET
    path, line = write_log(tmp_path, bad_line + record(long_rank, "p"))
    trace = load_trace(path)
    assert {("prefix", line), ("rank", line + 1)} == kinds_at(trace)
    assert_rest_is_there(trace)
    for d in trace.diagnostics:
        assert SECRET not in d.message and len(d.message) < 200
        assert not any(ch in d.message for ch in "\x1b\x00\u2028\n")


# -- 5. Very long names and ids ---------------------------------------------------------------


def test_very_long_names_and_ids_are_held(tmp_path: Path) -> None:
    frame_id, rank_id, index = 10**299 + 7, 10**399 + 1, 10**299 + 3  # 300 and 400 digits
    frame = {"frame_id": frame_id, "frame_compile_id": frame_id, "attempt": 0, "rank": rank_id}
    name = "n" * 300
    kernel = "triton_poi_fused_" + "k" * 300
    code = f"{kernel} = async_compile.triton('{kernel}', '''\n@triton.jit\ndef f(): pass\n''')\n"
    code += f"def call(args):\n    {kernel}.run(buf0)\n"
    stack = [{"line": 10**300, "name": name, "filename": index}]
    hostile = "".join(
        [
            record({"str": ["/" + "d" * 300 + ".py", index], "rank": rank_id}),
            record({"dynamo_start": {"stack": stack}, **frame}),
            record({"artifact": {"name": name, "encoding": "string"}, **frame}, "text"),
            record({"inductor_output_code": {"filename": name}, **frame}, code),
            record({"compilation_metrics": {"co_name": name, "graph_op_count": 1}, **frame}),
            record('{"artifact": {"name": "x"}, "frame_id": ' + "9" * 5000 + "}"),
        ]
    )
    path, _ = write_log(tmp_path, hostile)
    for _ in range(2):  # fresh, then from the cache
        trace = load_trace(path, cache_dir=tmp_path / "cache")
        # 5000 digits: beyond what Python's int() converts
        assert kinds_at(trace) == {("json", line_of(path, "9" * 5000))}
        rank = assert_rest_is_there(trace)
        assert rank.rank == rank_id
        c = next(c for c in rank.compiles if c.id.frame_id == frame_id)
        assert CompileId.parse(str(c.id)) == c.id and c.label == f"[{frame_id}/{frame_id}]"
        assert rank.compile(c.label) is c
        assert c.stack is not None and c.stack[0].filename == "/" + "d" * 300 + ".py"
        assert c.stack[0].line == 10**300 and c.stack[0].name == name
        assert [a.name for a in c.artifacts] == [name, "inductor_output_code"]
        assert [k.name for k in c.artifacts[1].kernels] == [kernel]
        assert c.status == "ok" and frame_status(rank, c.id) == "ok"


# -- 6. Thousands of compile ids ---------------------------------------------------------------


def many_compiles(tmp_path: Path, n: int) -> Path:
    """``n`` one-line compiles: frames of 4 recompiles each, restarts, and ids again after a reset.

    Each frame starts from its own line of one file, so the stack trie has a node per frame.
    """
    lines = []
    for i in range(n):
        frame = {"frame_id": i // 4, "frame_compile_id": i % 4, "attempt": 0}
        stack = [
            {"line": 1, "name": "<module>", "filename": "/x/main.py"},
            {"line": 10 + i // 4, "name": f"f{i // 4}", "filename": "/x/model.py"},
        ]
        lines.append(record({"dynamo_start": {"stack": stack}, **frame}))
        if i % 8 == 1:
            lines.append(record({"compilation_metrics": {"restart_reasons": ["r"]}, **frame}))
            frame = {**frame, "attempt": 1}
        lines.append(record({"compilation_metrics": {"graph_op_count": 1}, **frame}))
    for i in range(n // 8):  # torch._dynamo.reset(): the same ids again
        frame = {"frame_id": i, "frame_compile_id": 0, "attempt": 0}
        lines.append(record({"dynamo_start": {"stack": []}, **frame}))
        lines.append(record({"compilation_metrics": {"graph_op_count": 1}, **frame}))
    path = tmp_path / f"many_{n}.log"
    path.write_text("".join(lines), encoding="utf-8")
    return path


def model_work(path: Path) -> Trace:
    """Load, then ask what pages ask of every compile."""
    trace = load_trace(path)
    rank = trace.ranks[0]
    for c in rank.compiles:
        frame_status(rank, c.id)
        rank.compile(c.label)
        rank.attempts(c)
        compare.previous_compile(rank, c)
        compare.next_compile(rank, c)
    return trace


def lines_run_in_the_model(work: Callable[[], object]) -> int:
    """Python lines executed in sphinx_torchtrace/trace while ``work`` runs: a count, not a time."""
    package = str(Path(reader_module.__file__).parent)
    count = 0

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename.startswith(package) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        work()
    finally:
        sys.settrace(previous)
    return count


def test_many_compile_ids_cost_linear_work(tmp_path: Path) -> None:
    small, large = many_compiles(tmp_path, 400), many_compiles(tmp_path, 1600)
    work_small = lines_run_in_the_model(lambda: model_work(small))
    work_large = lines_run_in_the_model(lambda: model_work(large))
    assert work_large < 4.5 * work_small  # 4x the compiles; a scan per compile made it ~16x
    rank = model_work(large).ranks[0]
    assert len(rank.compiles) == 1600 + 200 + 200
    assert rank.compile("[4/1]").restarted and rank.compile("[4/1_1]").status == "ok"
    assert compare.previous_compile(rank, rank.compile("[7/3]")) is rank.compile("[7/2]")
    assert compare.next_compile(rank, rank.compile("[7/2]")) is rank.compile("[7/3]")
    assert compare.previous_compile(rank, rank.compile("[3/0] #2")) is rank.compile("[3/0]")
    assert len(rank.stack_trie.children[0].children) == 400
