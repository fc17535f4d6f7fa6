"""Turn the records of one log into a :class:`RankTrace`.

The only module that knows what each event kind means.  One pass over the
records, no payload kept in memory: what the model needs from a payload
(node counts, recompile reasons, kernels) is taken while the reader still
holds it, everything else stays a :class:`Payload` location.

The pass costs the same per record however many compiles came before (logs
with thousands of compile ids exist): compiles, attempts and stack-trie
children are found through dictionaries, never by scanning.  JSON that the
model decodes now or later (payloads of JSON artifacts and chromium events,
JSON text inside metrics) is checked for deep nesting here, where a
diagnostic can say which record held it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from ..compile_id import CompileId
from ..compile_status import attempt_status, metrics_apart
from ..diagnostics import quote
from ..kernels import split_output_code
from ..model import (
    Artifact,
    CacheEvent,
    ChromiumEvent,
    Compile,
    ExportEvent,
    Failure,
    Metrics,
    RankTrace,
    RawRecord,
    ShapeEvent,
    StackFrame,
    StackTrieNode,
)
from ..reader import MAX_JSON_DEPTH, LogReader, Record, json_too_deep, load_json

METRICS_EVENTS = frozenset(
    {
        "compilation_metrics",
        "bwd_compilation_metrics",
        "compilation_metrics_runtime",
        "bwd_compilation_metrics_runtime",
        "aot_autograd_backward_compilation_metrics",
    }
)
#: Event kinds whose payload is an FX graph printed by ``print_readable``.
GRAPH_EVENTS = frozenset(
    {
        "dynamo_output_graph",
        "aot_forward_graph",
        "aot_backward_graph",
        "aot_inference_graph",
        "aot_joint_graph",
        "inductor_pre_grad_graph",
        "inductor_post_grad_graph",
        "optimize_ddp_split_graph",
        "optimize_ddp_split_child",
        "compiled_autograd_graph",
        "exported_program",
    }
)
#: ``artifact`` names whose payload is an FX graph, beyond those ending in ``_graph``.
GRAPH_ARTIFACTS = frozenset(
    {
        "fx_graph_runnable",
        "before_recompile_pre_grad",
        "after_recompile_pre_grad",
        "before_recompile_post_grad",
        "after_recompile_post_grad",
        "compiled_autograd_graph_pre_reordering",
        "aot_inference_graph_after_hop_passes",
    }
)
#: ``artifact`` names whose compile id is in their payload's ``compile_id`` (torch's
#: ``0/1`` form) and not in their envelope: compile workers' reports (torch 2.14+).
PAYLOAD_COMPILE_IDS = frozenset({"compile_worker_status"})
#: Event kinds whose payload is generated code, split into kernels.
CODE_EVENTS = frozenset({"inductor_output_code"})
CODE_DUMPS = frozenset({"inductor_aot_wrapper_code", "inductor_aot_kernel_code"})
SHAPE_EVENTS = frozenset(
    {
        "create_symbol",
        "create_unbacked_symbol",
        "guard_added_fast",
        "symbolic_shape_specialization",
        "propagate_real_tensors",
    }
)
EXPORT_EVENTS = {
    "exported_program": "exported_programs",
    "guard_added": "guards_added",
    "propagate_real_tensors_provenance": "data_dependent_errors",
    "guard_on_data_dependent_error": "data_dependent_errors",
    "expression_created": "expressions",
    "create_unbacked_symbol": "unbacked_symbols",
    "missing_fake_kernel": "missing_fake_kernels",
    "mismatched_fake_kernel": "mismatched_fake_kernels",
}
DESCRIBE_EVENTS = frozenset({"describe_storage", "describe_tensor", "describe_source"})
#: Events with content that are shown as artifacts of their compile.
ARTIFACT_EVENTS = (
    GRAPH_EVENTS
    | CODE_EVENTS
    | {"artifact", "graph_dump", "dynamo_guards", "dynamo_cpp_guards_str", "export"}
)
KNOWN_EVENTS = (
    ARTIFACT_EVENTS
    | METRICS_EVENTS
    | SHAPE_EVENTS
    | DESCRIBE_EVENTS
    | set(EXPORT_EVENTS)
    | {"str", "chromium_event", "dynamo_start", "dump_file", "link"}
)

# An FX node line of print_readable(): `    name: "f32[4]" = torch.ops...` or `    name = ...`.
# Anchored on a literal newline rather than re.M's ^: twice as fast on big graphs.
_NODE_LINE = re.compile(rb'\n[ \t]+[A-Za-z_]\w*(?:: "[^"\n]*")? = ')
# A call of a nested compile region in a readable graph:
# `torch.ops.higher_order.invoke_subgraph(subgraph_0, 'subgraph_0', l_x_)`.
_INVOKE_SUBGRAPH = re.compile(rb"\binvoke_subgraph\(\s*[A-Za-z_]\w{0,200}\s*,\s*'([^'\n]{1,200})'")
_USER_LOCATION = re.compile(r"(?:user code at|File \")\s*([^\s\"]+?)[:\"](?:, line )?(\d+)")
#: ``artifact`` names whose payload the model decodes as JSON, whatever their encoding says.
JSON_ARTIFACTS = frozenset(
    {
        "torch_version",
        "recompile_reasons",
        "inductor_provenance_tracking_node_mappings",
        "inductor_provenance_tracking_kernel_stack_traces",
    }
)

#: The JSON type torch writes at the top of the payloads the model and the pages read by
#: name; another type there (a list where an object belongs, a string, a number) is one
#: ``payload`` diagnostic at the record (what reads it by type finds nothing there).
JSON_SHAPES: dict[str, type] = {
    "torch_version": dict,
    "inductor_provenance_tracking_node_mappings": dict,
    "inductor_provenance_tracking_kernel_stack_traces": dict,
    "inductor_runtime_and_tensor_meta": dict,
    "graph_execution": dict,
    "inductor_collective_schedule": list,
}

Handler = Callable[["RankBuilder", Record, Compile | None], None]


def invoke_subgraph_calls(body: bytes) -> dict[str, int]:
    """A graph's calls of nested compile regions, per identifier (the call's second
    argument), in order of first call: ``invoke_subgraph(subgraph_1, 'subgraph_0', x)``."""
    calls: dict[str, int] = {}
    for match in _INVOKE_SUBGRAPH.finditer(body):
        name = match.group(1).decode("utf-8", "replace")
        calls[name] = calls.get(name, 0) + 1
    return calls


def graph_node_count(body: bytes) -> int:
    """Operations in a readable FX graph: one assignment line per node."""
    first_line = body[: body.find(b"\n")] if b"\n" in body else body
    return len(_NODE_LINE.findall(body)) + (1 if _NODE_LINE.match(b"\n" + first_line) else 0)


class RankBuilder:
    """Accumulates the records of one log into a :class:`RankTrace`."""

    def __init__(self, reader: LogReader, strings: dict[int, str] | None = None) -> None:
        self.reader = reader
        self.rank = RankTrace(path=reader.display_path, rank=None, size=0)
        if strings:
            self.rank.strings.update(strings)
        self._current: dict[tuple[int | None, int | None, int | None, int], Compile] = {}
        # The attempts in _current of each frame key: found without scanning _current.
        self._attempts: dict[tuple[int | None, int | None, int | None], list[Compile]] = {}
        self._occurrences: dict[tuple[int | None, int | None, int | None], int] = {}
        self._started: set[tuple[int | None, int | None, int | None]] = set()
        self._trie_index: dict[tuple[int, str, int, str], StackTrieNode] = {}
        self._pending_frames: list[tuple[StackFrame, int]] = []
        self._ordinal = 0
        self._rank_lines: dict[Any, int] = {}

    # -- the pass ---------------------------------------------------------

    def build(self) -> RankTrace:
        rank = self.rank
        pids: dict[int, None] = {}
        for record in self.reader.records():
            envelope = record.envelope
            kind = record.event
            rank.stats[kind] += 1
            pids.setdefault(record.pid, None)
            if rank.first_timestamp is None:
                rank.first_timestamp = record.timestamp
            rank.last_timestamp = record.timestamp
            self._note_rank(envelope.get("rank"), record.line)
            if kind == "str":
                self._intern(record)
                continue
            compile_id = CompileId.from_envelope(envelope)
            if compile_id.is_unknown and kind == "artifact" and record.body is not None:
                if _artifact_name(envelope) in PAYLOAD_COMPILE_IDS:
                    compile_id = self._payload_compile_id(record) or compile_id
            if kind == "chromium_event" and record.payload is not None:
                self._check_json(record, "chromium event")
                rank.chromium_events.append(ChromiumEvent(record.line, compile_id, record.payload))
                self._compile(compile_id, record.line).chromium_event_count += 1
                continue
            if kind == "dynamo_start":
                self._start_occurrence(compile_id)
            elif kind == "artifact" and _artifact_name(envelope) == "recompile_reasons":
                # logged before the compile's dynamo_start: on an id that already finished,
                # it is the first record of that id's next occurrence (after a reset)
                self._start_occurrence(compile_id, by_start=False)
            compile_ = self._compile(compile_id, record.line)
            if "stack" in envelope and compile_id.is_unknown:
                self._add_to_trie(rank.unknown_stack_trie, self._frames(envelope["stack"]), None)
            handler = _HANDLERS.get(kind)
            if handler is not None:
                handler(self, record, compile_)
            elif kind in GRAPH_EVENTS or kind in CODE_EVENTS or kind in ARTIFACT_EVENTS:
                self._artifact(record, compile_, kind)
            else:
                self._unknown(record, compile_)
        rank.size = self.reader.size
        rank.pids = list(pids)
        self._finish()
        rank.diagnostics.extend(self.reader.diagnostics)
        rank.secrets = self.reader.secrets
        return rank

    def _finish(self) -> None:
        rank = self.rank
        for frame, index in self._pending_frames:
            text = rank.strings.get(index)
            if text is None:
                frame.filename = f"<unknown string {index}>"
            else:
                frame.filename = text
        missing = sorted({i for _, i in self._pending_frames if i not in rank.strings})
        for index in missing:
            self.reader._diag(
                "intern",
                f"stack frames refer to interned string {index}, which no str record defines",
                0,
            )
        for c, apart in metrics_apart(rank.compiles):
            c.metrics_apart = apart  # vLLM's compile: its metrics were logged without its id
        for c in rank.compiles:
            c.status = attempt_status([*c.metrics, *c.metrics_apart], c.restarted)
            if c.id.attempt == 0 and c.stack is not None:
                self._add_to_trie(rank.stack_trie, _trim_convert_frame(c.stack), c)

    # -- compiles ---------------------------------------------------------

    def _start_occurrence(self, compile_id: CompileId, by_start: bool = True) -> None:
        """A ``dynamo_start`` (or a compile's first record, ``by_start=False``) of an id
        seen before: the same id again after ``torch._dynamo.reset()``, a new occurrence.

        An id that already finished (its metrics logged) starts again too: a compile past
        the recompile limit logs its metrics with no ``dynamo_start``, and the next function
        to take the id after a reset is another compile, not more records of that one.
        """
        frame_key = _key(compile_id)[:3]
        finished = any(c.metrics for c in self._attempts.get(frame_key, ()))
        if (by_start and frame_key in self._started) or finished:
            self._occurrences[frame_key] = self._occurrences.get(frame_key, 1) + 1
            for old in self._attempts.pop(frame_key, []):
                del self._current[_key(old.id)]
            self._started.discard(frame_key)
        if by_start:
            self._started.add(frame_key)

    def _compile(self, compile_id: CompileId, line: int) -> Compile:
        key = _key(compile_id)
        found = self._current.get(key)
        if found is not None:
            return found
        occurrence = self._occurrences.setdefault(key[:3], 1)
        new = Compile(id=compile_id, occurrence=occurrence, first_line=line)
        attempts = self._attempts.setdefault(key[:3], [])
        if compile_id.attempt:
            for other in attempts:
                if other.id.attempt < compile_id.attempt:
                    other.restarted = True
        attempts.append(new)
        self._current[key] = new
        self.rank.compiles.append(new)
        return new

    def _payload_compile_id(self, record: Record) -> CompileId | None:
        """The compile a record names in its payload rather than its envelope (a compile
        worker's report, logged from a thread with no compile context), at the attempt of
        that compile being read now; None where the payload names none, or one this log has
        no record of yet (a report alone is no compile: it stays without a compile id)."""
        try:
            value = load_json(record.body or b"")
        except ValueError:
            return None
        named = value.get("compile_id") if isinstance(value, dict) else None
        if not isinstance(named, str) or len(named) > 64:
            return None
        try:
            found = CompileId.parse(named)
        except ValueError:
            return None
        if found.is_unknown:
            return None
        attempts = self._attempts.get(_key(found)[:3], [])
        if not attempts:
            return None
        latest = max(c.id.attempt for c in attempts)
        return CompileId(found.compiled_autograd_id, found.frame_id, found.frame_compile_id, latest)

    # -- helpers used by handlers ----------------------------------------

    def _artifact(
        self, record: Record, compile_: Compile | None, name: str, known: bool = True
    ) -> Artifact | None:
        if compile_ is None:
            return None
        kind = record.event
        inner = record.envelope.get(kind)
        metadata = inner if isinstance(inner, dict) else {"value": inner}
        encoding = metadata.get("encoding") if kind == "artifact" else None
        node_count = None
        body = record.body
        region_calls: dict[str, int] = {}
        if body is not None and _is_graph(kind, name, encoding):
            node_count = graph_node_count(body)
            if b"invoke_subgraph(" in body:
                region_calls = invoke_subgraph_calls(body)
        read_by_name = name in JSON_ARTIFACTS or name in JSON_SHAPES  # whatever its encoding
        if kind == "artifact" and (encoding == "json" or read_by_name):
            if not self._check_json(record, f"artifact {quote(name)}") and name in JSON_SHAPES:
                self._check_shape(record, name, JSON_SHAPES[name])
        artifact = Artifact(
            name=name,
            event=kind,
            line=record.line,
            ordinal=self._ordinal,
            payload=record.payload,
            encoding=str(encoding) if encoding is not None else None,
            metadata=metadata,
            node_count=node_count,
            known=known,
            subgraph=_subgraph_name(record.envelope),
            region_calls=region_calls,
        )
        self._ordinal += 1
        compile_.artifacts.append(artifact)
        is_code = kind in CODE_EVENTS or (kind == "graph_dump" and name in CODE_DUMPS)
        if body is not None and is_code:
            artifact.kernels = split_output_code(record.body_text(), name)
        return artifact

    def _unknown(self, record: Record, compile_: Compile | None) -> None:
        self.rank.unknown_records.append(
            RawRecord(record.event, record.line, record.envelope, record.payload)
        )
        self._artifact(record, compile_, record.event, known=False)

    def _frames(self, raw: Any) -> list[StackFrame]:
        frames: list[StackFrame] = []
        if not isinstance(raw, list):
            return frames
        for item in raw:
            if not isinstance(item, dict):
                continue
            filename = item.get("filename")
            frame = StackFrame(
                filename=filename if isinstance(filename, str) else "",
                line=_int(item.get("line")),
                name=str(item.get("name", "")),
                loc=item.get("loc") if isinstance(item.get("loc"), str) else None,
            )
            if isinstance(filename, int):
                self._pending_frames.append((frame, filename))
            elif not isinstance(filename, str):
                frame.filename = str(item.get("uninterned_filename", "<unknown>"))
            frames.append(frame)
        return frames

    def _intern(self, record: Record) -> None:
        value = record.envelope.get("str")
        if (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], str)
            and isinstance(value[1], int)
        ):
            self.rank.strings[value[1]] = value[0]

    def _note_rank(self, value: Any, line: int) -> None:
        if value is None:
            return
        if not isinstance(value, (int, str, float, bool)):
            value = repr(value)  # a list or object would be unhashable
        if self.rank.rank is None and type(value) is int:
            self.rank.rank = value
        elif value != self.rank.rank and value not in self._rank_lines:
            self._rank_lines[value] = line
            self.reader._diag(
                "rank",
                f"record names rank {quote(value)} but the log belongs to rank "
                f"{quote(self.rank.rank)}",
                line,
            )

    def _check_json(self, record: Record, what: str) -> bool:
        """Report a payload whose JSON nests too deeply to be decoded; whether it does.

        The payload stays in the model; decoding it later (:func:`load_json`)
        gives nothing instead of overflowing the stack.
        """
        if record.body is not None and json_too_deep(record.body):
            self.reader._diag(
                "nesting",
                f"the payload of {what} is JSON nested more than {MAX_JSON_DEPTH} levels deep: "
                "it is not decoded",
                record.line,
            )
            return True
        return False

    def _check_shape(self, record: Record, name: str, expected: type) -> None:
        """Report a payload read by name (:data:`JSON_SHAPES`) that does not parse, or
        parses to another type than torch writes there; it is decoded now, while the
        reader holds it (a payload too large to hold is left unanalysed anyway)."""
        if record.body is None or not record.body.strip():
            return
        try:
            value = load_json(record.body)
        except ValueError:
            problem = "does not parse as JSON"
        else:
            if isinstance(value, expected):
                return
            problem = f"is {json_type(value)} where torch writes {json_type(expected())}"
        self.reader._diag(
            "payload", f"the payload of artifact {quote(name)} {problem}", record.line
        )

    def _json_texts_of(self, data: dict[str, Any], record: Record) -> None:
        """Leave out JSON text inside metrics (configs) nested too deeply to decode, reported."""
        for key, value in data.items():
            if isinstance(value, str) and _looks_like_json(value) and json_too_deep(value):
                data[key] = None
                self.reader._diag(
                    "nesting",
                    f"{record.event} value {quote(key)} is JSON nested more than "
                    f"{MAX_JSON_DEPTH} levels deep: it is left out",
                    record.line,
                )

    def _add_to_trie(
        self, root: StackTrieNode, frames: list[StackFrame], compile_: Compile | None
    ) -> None:
        node = root
        for frame in frames:
            key = (id(node), frame.filename, frame.line, frame.name)
            found = self._trie_index.get(key)
            if found is None:  # every child made here is in the index: a new one
                found = self._trie_index[key] = StackTrieNode(frame)
                node.children.append(found)
            node = found
        if compile_ is not None:
            node.compiles.append(compile_)


# -- handlers, one per event kind that needs more than "an artifact" --------


def _on_dynamo_start(b: RankBuilder, record: Record, c: Compile | None) -> None:
    inner = record.envelope.get("dynamo_start")
    if c is not None and isinstance(inner, dict):
        c.stack = b._frames(inner.get("stack"))


def _on_metrics(b: RankBuilder, record: Record, c: Compile | None) -> None:
    data = record.envelope.get(record.event)
    if c is None or not isinstance(data, dict):
        b._unknown(record, c)
        return
    b._json_texts_of(data, record)
    metrics = Metrics(record.event, record.line, data)
    c.metrics.append(metrics)
    if metrics.fail_type:
        filename = data.get("fail_user_frame_filename")
        lineno = data.get("fail_user_frame_lineno")
        location = f"{filename}:{lineno}" if filename else None
        c.failures.append(
            Failure(
                "failure",
                str(data.get("fail_reason") or ""),
                record.line,
                metrics.fail_type,
                location,
            )
        )
    for reason in metrics.restart_reasons:
        c.failures.append(Failure("restart", reason, record.line, "RestartAnalysis"))


def _on_artifact(b: RankBuilder, record: Record, c: Compile | None) -> None:
    inner = record.envelope.get("artifact")
    name = str(inner.get("name")) if isinstance(inner, dict) else "artifact"
    artifact = b._artifact(record, c, name)
    if c is None or artifact is None:
        return
    body = record.body_text() if record.body is not None else None
    result = artifact.cache_result
    if result is not None:
        cache = name.split("_cache_")[0] if "_cache_" in name else name
        c.cache_events.append(CacheEvent(cache, result, record.line, name))
    if body is None:
        return
    if name == "recompile_reasons":
        c.recompile_reasons.extend(parse_recompile_reasons(body))
    elif name == "dynamo_graph_break_reason":
        match = _USER_LOCATION.search(body)
        location = f"{match.group(1)}:{match.group(2)}" if match else None
        c.failures.append(Failure("graph_break", body.strip(), record.line, None, location))
    elif name == "torch_version":
        try:
            value = load_json(body)
        except ValueError:  # JsonNestingError included: reported by _check_json
            value = None
        if isinstance(value, dict):
            b.rank.torch_version = value


def _on_graph_dump(b: RankBuilder, record: Record, c: Compile | None) -> None:
    inner = record.envelope.get("graph_dump")
    name = str(inner.get("name")) if isinstance(inner, dict) else "graph_dump"
    b._artifact(record, c, name)


def _on_shape(b: RankBuilder, record: Record, c: Compile | None) -> None:
    data = record.envelope.get(record.event)
    data = data if isinstance(data, dict) else {"value": data}
    if c is not None:
        c.shape_events.append(
            ShapeEvent(record.event, record.line, data, b._frames(data.get("user_stack")))
        )
    if record.event in EXPORT_EVENTS:
        _on_export(b, record, None)


def _on_export(b: RankBuilder, record: Record, c: Compile | None) -> None:
    data = record.envelope.get(record.event)
    data = data if isinstance(data, dict) else {"value": data}
    getattr(b.rank.export, EXPORT_EVENTS[record.event]).append(
        ExportEvent(record.event, record.line, data, record.payload)
    )
    if record.payload is not None and c is not None:
        b._artifact(record, c, record.event)


def _on_describe(b: RankBuilder, record: Record, c: Compile | None) -> None:
    data = record.envelope.get(record.event)
    if c is not None and isinstance(data, dict):
        c.tensor_descriptions.append({"kind": record.event, **data})


def _on_dump_file(b: RankBuilder, record: Record, c: Compile | None) -> None:
    """FX-generated source that stacks refer to (``<eval_with_key>.7``)."""
    inner = record.envelope.get("dump_file")
    name = str(inner.get("name")) if isinstance(inner, dict) and "name" in inner else None
    name = name or f"dump_file at line {record.line}"
    if record.payload is not None:
        b.rank.dump_files[name] = record.payload
    b._artifact(record, c, name)


def _on_ddp_child(b: RankBuilder, record: Record, c: Compile | None) -> None:
    """One submodule of DDPOptimizer's split; named like tlparse names it."""
    inner = record.envelope.get("optimize_ddp_split_child")
    child = inner.get("name") if isinstance(inner, dict) else None
    b._artifact(record, c, f"optimize_ddp_split_child_{child}" if child else record.event)


def _on_link(b: RankBuilder, record: Record, c: Compile | None) -> None:
    data = record.envelope.get("link")
    if c is not None and isinstance(data, dict):
        c.links.append(data)


_HANDLERS: dict[str, Handler] = {
    "dynamo_start": _on_dynamo_start,
    "artifact": _on_artifact,
    "graph_dump": _on_graph_dump,
    "link": _on_link,
    "dump_file": _on_dump_file,
    "optimize_ddp_split_child": _on_ddp_child,
    **{kind: _on_metrics for kind in METRICS_EVENTS},
    **{kind: _on_shape for kind in SHAPE_EVENTS},
    **{kind: _on_export for kind in EXPORT_EVENTS if kind not in SHAPE_EVENTS},
    **{kind: _on_describe for kind in DESCRIBE_EVENTS},
}


def parse_recompile_reasons(body: str) -> list[str]:
    """Reasons of a ``recompile_reasons`` artifact: a JSON list, or one bare string."""
    text = body.strip()
    if not text:
        return []
    try:
        value = load_json(text)
    except ValueError:  # not JSON, or JSON too deep to decode: the text itself
        return [text]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [str(value)]


def json_type(value: Any) -> str:
    """A decoded JSON value's type as a message names it (``a JSON list``)."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        return "a JSON list"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, bool) or value is None:
        return f"JSON {json.dumps(value)}"
    return "a JSON number"


def _key(compile_id: CompileId) -> tuple[int | None, int | None, int | None, int]:
    return (
        compile_id.compiled_autograd_id,
        compile_id.frame_id,
        compile_id.frame_compile_id,
        compile_id.attempt,
    )


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _is_graph(kind: str, name: str, encoding: Any) -> bool:
    if kind in GRAPH_EVENTS:
        return True
    if kind == "artifact" and encoding != "json":
        return name in GRAPH_ARTIFACTS or name.endswith("_graph")
    return False


def _looks_like_json(text: str) -> bool:
    """Text that is a JSON object or array, as configs inside metrics are."""
    return text.lstrip(" \t\r\n")[:1] in ("{", "[")


def _subgraph_name(envelope: dict[str, Any]) -> str | None:
    """The envelope's ``subgraph_name`` as text (a value of another type shown as its JSON)."""
    value = envelope.get("subgraph_name")
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)[:200]


def _artifact_name(envelope: dict[str, Any]) -> str | None:
    inner = envelope.get("artifact")
    return str(inner.get("name")) if isinstance(inner, dict) else None


def _trim_convert_frame(stack: list[StackFrame]) -> list[StackFrame]:
    """Drop torch's own wrapper frames at the end of a dynamo_start stack, as tlparse does."""
    frames = list(stack)
    while frames and "torch/_dynamo/convert_frame.py" in frames[-1].filename:
        frames.pop()
    return frames
