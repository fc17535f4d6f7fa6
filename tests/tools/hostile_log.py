"""A real TORCH_TRACE log rewritten so that every string a page shows carries markup.

Trace logs are untrusted: a log is just text anyone can hand to a docs build.
:func:`write_hostile_log` takes the bundled ``simple`` log, adds a failed
compile and a graph break from the ``compile_error`` log and a ``graph_dump``
from a tlparse input, and rewrites each field a page shows (artifact names,
payloads, reasons, stack frames, metrics, kernel names) into a string that
would be live rST, MyST, HTML or LaTeX if any layer parsed it, split by every
line boundary ``str.splitlines()`` knows.  Each field starts with its own
marker, so a test can say which field leaked where.  The result is still a
valid log: payload md5s are recomputed the way torch computes them.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data"
SIMPLE_LOG = DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
COMPILE_ERROR_LOG = DATA / "shared" / "compile_error" / "dedicated_log_torch_trace_fqqib31t.log"
TLPARSE_INPUTS = DATA / "shared" / "tlparse-inputs" / "from-index-meta-pytorch-newer" / "inputs"
GRAPH_DUMP_LOG = TLPARSE_INPUTS / "vllm_post_grad_diff.log"

#: Every character ``str.splitlines()`` ends a line at (``\r\n`` aside).
LINE_BOUNDARIES = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
#: What a live ``.. raw::`` or HTML snippet would add to a page: attribute values to look for.
PWNED_IDS = ("pwned-rst", "pwned-sub", "pwned-myst")
#: Letters and digits only: every builder would write it as is, LaTeX included.
SECRET_CONTENT = "SecretContent3b9e41d0NotInAnyLog"
#: A line intersphinx would read from ``objects.inv`` as an entry the site never declared.
INVENTORY_ENTRY = "numpy.ndarray py:class 1 https://example.invalid/pwned -"
#: The kernel ``cpp_fused_relu_0`` of the simple log, renamed to carry a marker.
KERNEL_NAME_MARKER = "MARKER_kernel_name_7f3a"
HOSTILE_KERNEL = f"cpp_fused_{KERNEL_NAME_MARKER}_0"

_PREFIX = re.compile(r"(?:\[rank\d+\]:)?[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [^:]+:\d+\] ")


@dataclass
class LogRecord:
    """One record as torch writes it: the glog prefix, the JSON envelope, the payload text."""

    prefix: str
    envelope: dict[str, Any]
    payload: str | None = None

    @property
    def kind(self) -> str:
        return next(iter(self.envelope))

    @property
    def frame(self) -> tuple[Any, Any]:
        return self.envelope.get("frame_id"), self.envelope.get("frame_compile_id")

    def artifact_name(self) -> str | None:
        inner = self.envelope.get(self.kind)
        return inner.get("name") if isinstance(inner, dict) else None


def read_records(path: Path) -> list[LogRecord]:
    """The records of a plain (not gzipped) log; payload lines lose their one leading TAB."""
    records: list[LogRecord] = []
    payload_lines: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("\t"):
            payload_lines.append(line[1:])
            continue
        if not line:
            continue
        _close(records, payload_lines)
        match = _PREFIX.match(line)
        if match is None:
            raise ValueError(f"not a record line in {path}: {line[:80]!r}")
        records.append(LogRecord(match.group(0), json.loads(line[match.end() :])))
    _close(records, payload_lines)
    return records


def _close(records: list[LogRecord], payload_lines: list[str]) -> None:
    if records and "has_payload" in records[-1].envelope:
        records[-1].payload = "\n".join(payload_lines)
    payload_lines.clear()


def format_record(record: LogRecord) -> str:
    """The record's lines, ``has_payload`` recomputed: md5 of the payload's UTF-8 bytes."""
    envelope = dict(record.envelope)
    if record.payload is not None:
        envelope["has_payload"] = hashlib.md5(record.payload.encode("utf-8")).hexdigest()
    head = record.prefix + json.dumps(envelope) + "\n"
    if record.payload is None:
        return head
    return head + "".join(f"\t{line}\n" for line in record.payload.split("\n"))


def markup_snippets(secret: Path) -> list[str]:
    """Markup of every language a page could pass through, each live if parsed.

    Sphinx reads ``/path`` as relative to the source folder, so the secret file is
    named both by its absolute path and as ``/../<name>``: a site built in a folder
    beside the secret (:class:`HostileLog`) would really read it.
    """
    from_srcdir = f"/../{secret.name}"
    return [
        '.. raw:: html\n\n   <b id="pwned-rst">x</b>',
        ".. raw:: latex\n\n   \\input{/etc/hostname}",
        f".. include:: {secret}",
        f".. include:: {from_srcdir}",
        f".. literalinclude:: {from_srcdir}",
        "`click <javascript:alert(1)>`_",
        f":download:`secret <{from_srcdir}>`",
        '|sub|\n\n.. |sub| raw:: html\n\n   <i id="pwned-sub">x</i>',
        "**bold**",
        '```{eval-rst}\n.. raw:: html\n\n   <b id="pwned-myst">x</b>\n```',
        '<script>alert("pwned-html")</script>',
        "<img src=x onerror=alert(1)>",
        "\\input{/etc/hostname}",
        "\\write18{touch pwned}",
        "\\include{x}",
        INVENTORY_ENTRY,
    ]


def hostile_text(marker: str, secret: Path) -> str:
    """``marker``, then each snippet after every line boundary: a field no parser may read."""
    return marker + "".join(LINE_BOUNDARIES + s for s in markup_snippets(secret))


@dataclass
class HostileLog:
    """The log written, the secret file its markup names, and each field's marker.

    Sites built from the log belong in sub-folders of the log's folder, where the
    markup's ``/../secret.txt`` names the secret file.
    """

    path: Path
    secret: Path
    markers: dict[str, str] = field(default_factory=dict)

    def text(self, name: str) -> str:
        """A new marker for the field ``name``, and the hostile text that carries it."""
        marker = f"MARKER_{name}_7f3a"
        self.markers[name] = marker
        return hostile_text(marker, self.secret)


def write_hostile_log(folder: Path) -> HostileLog:
    """Write ``hostile.log`` and ``secret.txt`` into ``folder``."""
    secret = folder / "secret.txt"
    secret.write_text(SECRET_CONTENT + "\n", encoding="utf-8")
    log = HostileLog(folder / "hostile.log", secret)
    records = read_records(SIMPLE_LOG)
    _rewrite_frame_0(log, records)
    end_of_frame_0 = next(i for i, r in enumerate(records) if r.kind == "compilation_metrics")
    records[end_of_frame_0:end_of_frame_0] = [
        _graph_break(log),
        _graph_dump(log),
        _json_artifact(log, records),
    ]
    records += _failed_frame(log)
    log.path.write_text("".join(format_record(r) for r in records), encoding="utf-8")
    return log


def _rewrite_frame_0(log: HostileLog, records: list[LogRecord]) -> None:
    """The simple log's only compile, every shown string of it made hostile."""
    for record in records:
        kind, name = record.kind, record.artifact_name()
        if kind == "str" and record.envelope["str"][1] == 1:  # the user's file, interned
            record.envelope["str"][0] = log.text("frame_file")
        elif kind == "dynamo_start":
            stack = record.envelope["dynamo_start"]["stack"]
            stack[0]["loc"] = log.text("frame_loc")
            stack[-1]["name"] = log.text("frame_name")
        elif kind == "artifact" and name == "after_pre_grad_graph":
            # still a graph with a page of its own: the name ends in _graph
            record.envelope["artifact"]["name"] = log.text("artifact_name") + "_graph"
        elif kind == "dynamo_output_graph":
            record.payload = f"# {log.text('graph_payload')}\n{record.payload}"
        elif kind == "dynamo_cpp_guards_str":
            record.payload = f"{log.text('guards_payload')}\n{record.payload}"
        elif kind == "inductor_output_code":
            record.payload = _hostile_output_code(log, record.payload or "")
        elif kind == "compilation_metrics":
            _hostile_metrics(log, record.envelope["compilation_metrics"])


def _hostile_output_code(log: HostileLog, code: str) -> str:
    """A hostile comment on top, a kernel renamed, hostile text inside that kernel's source."""
    definition = "cpp_fused_relu_0 = async_compile.cpp_pybinding(['float*'], r'''\n"
    if definition not in code:
        raise ValueError("the simple log's output code no longer defines cpp_fused_relu_0")
    code = code.replace(definition, definition + f"// {log.text('kernel_source')}\n", 1)
    log.markers["kernel_name"] = KERNEL_NAME_MARKER
    code = code.replace("cpp_fused_relu_0", HOSTILE_KERNEL)
    return f"# {log.text('output_code')}\n{code}"


def _hostile_metrics(log: HostileLog, data: dict[str, Any]) -> None:
    data["co_name"] = log.text("co_name")
    data["co_filename"] = log.text("co_filename")
    data["cudagraph_skip_reason"] = log.text("metric_shown_value")
    data[log.text("metric_key")] = log.text("metric_value")


def _graph_break(log: HostileLog) -> LogRecord:
    """The compile_error log's first graph break, moved to frame 0/0, its reason hostile."""
    record = next(
        r
        for r in read_records(COMPILE_ERROR_LOG)
        if r.artifact_name() == "dynamo_graph_break_reason"
    )
    _move_to(record, 0)
    first, _, rest = (record.payload or "").partition("\n")
    record.payload = f"{first}\nGraph Break Reason: {log.text('graph_break_reason')}\n{rest}"
    return record


def _graph_dump(log: HostileLog) -> LogRecord:
    """A vLLM-style ``graph_dump`` (a pass's graph), hostile name and payload."""
    record = read_records(GRAPH_DUMP_LOG)[0]
    record.envelope.pop("rank", None)  # one log of no rank, like the rest
    _move_to(record, 0)
    record.envelope["graph_dump"]["name"] = log.text("graph_dump_name")
    record.payload = f"# {log.text('graph_dump_payload')}\n{record.payload}"
    return record


def _json_artifact(log: HostileLog, records: list[LogRecord]) -> LogRecord:
    """A JSON artifact with no page of its own (shown on the frame page), hostile throughout."""
    like = next(r for r in records if r.artifact_name() == "fx_graph_cache_miss")
    envelope = json.loads(json.dumps(like.envelope))
    envelope["artifact"]["name"] = log.text("json_artifact_name")
    payload = json.dumps({log.text("json_key"): log.text("json_value")}, indent=1)
    return LogRecord(like.prefix, envelope, payload)


def _failed_frame(log: HostileLog) -> list[LogRecord]:
    """Frame 1/0 of the compile_error log (it fails with Unsupported), its failure hostile.

    Its stack names interned string 1, which in the simple log is the user's
    file: made hostile above.
    """
    frame = [
        r
        for r in read_records(COMPILE_ERROR_LOG)
        if r.frame == (1, 0) and r.kind != "chromium_event"
    ]
    for record in frame:
        if record.artifact_name() == "dynamo_error":
            record.payload = f"{log.text('dynamo_error')}\n{record.payload}"
        elif record.kind == "compilation_metrics":
            data = record.envelope["compilation_metrics"]
            if not data.get("fail_type"):
                raise ValueError("frame 1/0 of the compile_error log no longer fails")
            data["fail_reason"] = log.text("fail_reason")
            data["fail_user_frame_filename"] = log.text("fail_location")
    return frame


def _move_to(record: LogRecord, frame_id: int) -> None:
    record.envelope.update(frame_id=frame_id, frame_compile_id=0, attempt=0)
