"""TORCH_TRACE logs with canaries: new records among a real log's own (envelope fields,
payloads, interned strings), lines added to its payloads, gzip members, rank folders."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .places import (
    DATA,
    P_ENV_FIELD,
    P_ENV_NAME,
    P_GRAPH,
    P_GZ_NAME,
    P_JSON,
    P_NAME,
    P_PAYLOAD,
    P_STR,
    P_STR_USED,
    TRACE_GZ,
    TRACE_PLACES,
    Canary,
    Doc,
    Input,
    Planter,
    locate,
)
from .shapes import (
    LOWER_DIGITS,
    Plant,
    seg_text,
)

# -- trace logs ------------------------------------------------------------------------------

#: Real logs the trace inputs are planted in (small ones: many are built).
BASE_LOGS = (
    DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log",
    DATA / "captured" / "aoti" / "dedicated_log_torch_trace_6w34n_rm.log",
    DATA / "captured" / "frozen_constants" / "dedicated_log_torch_trace_w5c0tqxk.log",
    DATA / "captured" / "single_op_provenance" / "dedicated_log_torch_trace_aui929la.log",
    DATA / "captured" / "draft_export" / "dedicated_log_torch_trace_j5am_2yg.log",
)
SMALL_LOG = DATA / "captured" / "draft_export" / "dedicated_log_torch_trace_6wp6mdhq.log"
HEAD_PREFIX = re.compile(r"^(?:\[rank\d+\]:)?[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]+\] ")
_COMPILE = re.compile(r'"frame_id": (\d+), "frame_compile_id": (\d+)')
_STR = re.compile(r'\{"str": \["((?:[^"\\]|\\.)*)", (\d+)\]\}')
_MD5 = re.compile(r'"has_payload": "([0-9a-f]{32})"')
#: Artifact names a planted payload gets: shown as graphs, code, JSON or text.
TEXT_ARTIFACTS = (
    "fx_graph_runnable",
    "before_pre_grad_graph",
    "inductor_post_grad_graph",
    "dynamo_error",
    "leak_note",
)
JSON_ARTIFACTS = (
    "torch._functorch.config",
    "aot_forward_graph_fw_metadata",
    "leak_json",
    "inductor_provenance_tracking_node_mappings",
)
METRICS_FIELDS = (
    "fail_reason",
    "fail_type",
    "co_filename",
    "fail_user_frame_filename",
    "recompile_reason",
    "co_name",
)
FILLER = (
    "    mm = torch.ops.aten.mm.default(arg0_1, arg1_1);  arg0_1 = None",
    "    relu = torch.ops.aten.relu.default(mm);  mm = None",
    "    return (relu,)",
    "# File: /home/user/project/simple.py:16 in forward, code: x = self.fc(x)",
)


@dataclass
class LogRecord:
    head: str
    payload: list[str] | None  # lines without their TAB (None: no payload)
    head_doc: Doc | None = None
    payload_doc: Doc | None = None  # planted payload (replaces payload)
    changed: bool = False

    def doc(self) -> Doc:
        out = Doc()
        if self.payload_doc is None and not self.changed and self.head_doc is None:
            out.add(self.head + "\n")
            if self.payload is not None:
                out.add("".join(f"\t{line}\n" for line in self.payload))
            return out
        body = self.payload_doc
        if body is None and self.payload is not None:
            body = Doc().add("\n".join(self.payload))
        head = self.head_doc or Doc().add(self.head)
        if body is None:
            return out.extend(head).add("\n")
        md5 = {
            live: hashlib.md5(body.text(live).encode("utf-8", "surrogateescape")).hexdigest()
            for live in (True, False)
        }
        # the head names the md5 once: written per version
        for live_text, control_text, uid in head.parts:
            if "@MD5@" in live_text:
                out.parts.append(
                    (
                        live_text.replace("@MD5@", md5[True]),
                        control_text.replace("@MD5@", md5[False]),
                        uid,
                    )
                )
            else:
                out.parts.append((live_text, control_text, uid))
        out.add("\n\t")  # each payload line starts with a TAB
        for live_text, control_text, uid in body.parts:
            out.parts.append(
                (live_text.replace("\n", "\n\t"), control_text.replace("\n", "\n\t"), uid)
            )
        out.add("\n")
        return out


def read_log_records(path: Path) -> list[LogRecord]:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    records: list[LogRecord] = []
    for line in text.split("\n"):
        if line.startswith("\t"):
            if records:
                if records[-1].payload is None:
                    records[-1].payload = []
                records[-1].payload.append(line[1:])
            continue
        if line:
            records.append(LogRecord(line, None))
    return records


def _md5_ok(record: LogRecord) -> bool:
    m = _MD5.search(record.head)
    body = "\n".join(record.payload or [])
    return (
        m is not None
        and m.group(1) == hashlib.md5(body.encode("utf-8", "surrogateescape")).hexdigest()
    )


def _json_head(prefix: str, fields: list[tuple[str, Any]]) -> Doc:
    """A record line: ``prefix`` then a JSON object whose values may be planted (a
    ``(uid, live, control)`` value is written as a JSON string's inside)."""
    doc = Doc().add(prefix + "{")
    for i, (key, value) in enumerate(fields):
        doc.add(("" if i == 0 else ", ") + json.dumps(key) + ": ")
        _json_value(doc, value)
    return doc.add("}")


def _json_value(doc: Doc, value: Any) -> None:
    if isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], int):
        doc.add('"').plant(*value).add('"')
    elif isinstance(value, dict):
        doc.add("{")
        for i, (k, v) in enumerate(value.items()):
            doc.add(("" if i == 0 else ", ") + json.dumps(k) + ": ")
            _json_value(doc, v)
        doc.add("}")
    elif isinstance(value, list):
        doc.add("[")
        for i, v in enumerate(value):
            if i:
                doc.add(", ")
            _json_value(doc, v)
        doc.add("]")
    else:
        doc.add(json.dumps(value))


class TraceWriter:
    """A real log with canaries planted in new records and in some of its own."""

    def __init__(self, planter: Planter, base: Path) -> None:
        self.p = planter
        self.r = planter.r
        self.records = read_log_records(base)
        self.prefix = HEAD_PREFIX.match(self.records[0].head).group()  # type: ignore[union-attr]
        self.compiles = sorted(
            {m.groups() for rec in self.records if (m := _COMPILE.search(rec.head))}
        )
        self.new: list[LogRecord] = []
        self.first: list[LogRecord] = []  # right after the log's first record
        self.last: list[LogRecord] = []  # at its end
        self.next_str = 900_000
        self.next_frame = 9000

    def context(self) -> list[tuple[str, Any]]:
        if not self.compiles or self.r.random() < 0.2:
            return []
        f, c = self.r.choice(self.compiles)
        return [("frame_id", int(f)), ("frame_compile_id", int(c)), ("attempt", 0)]

    def plant_all(self, shapes_by_place: dict[str, list[str]], places: Sequence[str]) -> None:
        for place in places:
            shapes = shapes_by_place.get(place, [])
            if shapes:
                getattr(self, "_" + PLACE_METHODS[place])(shapes)

    def _pair(
        self, shape: str, place: str, how: str | None = None
    ) -> tuple[Canary, Plant, tuple[int, str, str]]:
        canary, plant = self.p.make(shape, place, how)
        live, control = self.p.written(canary, plant)
        if plant.companion is not None:
            self._companion(canary, plant)
        return canary, plant, (canary.uid, live, control)

    def _companion(self, canary: Canary, plant: Plant) -> None:
        assert plant.companion is not None
        segs = plant.companion
        live = "".join(seg_text(s, True) for s in segs)
        control = "".join(seg_text(s, False) for s in segs)
        canary.companion = self.r.choice(("before", "after"))
        head = _json_head(
            self.prefix,
            [("artifact", {"name": "leak_guard", "encoding": "string"}), ("has_payload", "@MD5@")],
        )
        rec = LogRecord(
            "", [], head_doc=head, payload_doc=Doc().plant(-canary.uid - 1, live, control)
        )
        (self.first if canary.companion == "before" else self.last).append(rec)

    def _envelope_name(self, shapes: list[str]) -> None:
        for shape in shapes:
            _, _, value = self._pair(shape, P_ENV_NAME)
            head = _json_head(
                self.prefix,
                [
                    ("artifact", {"name": value, "encoding": "string"}),
                    *self.context(),
                    ("has_payload", "@MD5@"),
                ],
            )
            self.new.append(LogRecord("", [], head_doc=head, payload_doc=Doc().add("planted")))

    def _envelope_field(self, shapes: list[str]) -> None:
        for i in range(0, len(shapes), 12):
            metrics: dict[str, Any] = {"co_name": "leak_fn", "frame_key": "1", "cache_size": 0}
            for j, shape in enumerate(shapes[i : i + 12]):
                _, _, value = self._pair(shape, P_ENV_FIELD)
                key = METRICS_FIELDS[j] if j < len(METRICS_FIELDS) else f"note_{j}"
                metrics[key] = value
            self.next_frame += 1
            head = _json_head(
                self.prefix,
                [
                    ("compilation_metrics", metrics),
                    ("frame_id", self.next_frame),
                    ("frame_compile_id", 0),
                    ("attempt", 0),
                ],
            )
            self.new.append(LogRecord("", None, head_doc=head))

    def _payload(self, shapes: list[str]) -> None:
        i = 0
        while i < len(shapes):
            k = self.r.randint(3, 12)
            body = Doc()
            for j, shape in enumerate(shapes[i : i + k]):
                _, _, (uid, live, control) = self._pair(shape, P_PAYLOAD)
                if j:
                    body.add("\n")
                for _ in range(self.r.randrange(3)):
                    body.add(self.r.choice(FILLER) + "\n")
                lead = self.r.choice(("", "", "    ", "# ", "E   ", "RuntimeError: "))
                body.add(lead).plant(uid, live, control)
            i += k
            name = self.r.choice(TEXT_ARTIFACTS)
            head = _json_head(
                self.prefix,
                [
                    ("artifact", {"name": name, "encoding": "string"}),
                    *self.context(),
                    ("has_payload", "@MD5@"),
                ],
            )
            self.new.append(LogRecord("", [], head_doc=head, payload_doc=body))

    def _graph(self, shapes: list[str]) -> None:
        """Lines added to the log's own code and graph payloads (their md5s recomputed)."""
        code = [
            rec
            for rec in self.records
            if rec.payload and _md5_ok(rec) and not rec.payload[0].lstrip().startswith(("{", "["))
        ]
        if not code:
            self._payload(shapes)
            return
        edits: dict[int, list[tuple[int, Doc]]] = defaultdict(list)
        for shape in shapes:
            _, plant, (uid, live, control) = self._pair(shape, P_GRAPH)
            rec_i = self.r.randrange(len(code))
            rec = code[rec_i]
            at = self.r.randrange(len(rec.payload or []) + 1)
            d = Doc()
            if plant.multiline:
                d.add('    _key = """').plant(uid, live, control).add('"""')
            else:
                d.add(self.r.choice(("    # ", "# ", "    x = 1  # "))).plant(uid, live, control)
            edits[rec_i].append((at, d))
        for rec_i, inserts in edits.items():
            rec = code[rec_i]
            lines = rec.payload or []
            body = Doc()
            by_line: dict[int, list[Doc]] = defaultdict(list)
            for at, d in inserts:
                by_line[at].append(d)
            out_lines: list[Doc] = []
            for idx in range(len(lines) + 1):
                out_lines += by_line.get(idx, [])
                if idx < len(lines):
                    out_lines.append(Doc().add(lines[idx]))
            for j, d in enumerate(out_lines):
                if j:
                    body.add("\n")
                body.extend(d)
            rec.payload_doc = body
            rec.head_doc = Doc().add(_MD5.sub('"has_payload": "@MD5@"', rec.head))

    def _json(self, shapes: list[str]) -> None:
        i = 0
        while i < len(shapes):
            k = self.r.randint(3, 12)
            obj: dict[str, Any] = {"version": 1}
            for j, shape in enumerate(shapes[i : i + k]):
                _, _, value = self._pair(shape, P_JSON)
                obj[self.r.choice(("reason", "msg", "node", "args", "stack")) + f"_{j}"] = (
                    value if self.r.random() < 0.7 else [value, 3]
                )
            i += k
            body = Doc()
            if self.r.random() < 0.5:  # one line
                _json_value(body, obj)
            else:  # torch's indented form: one value a line
                body.add("{")
                for j, (key, value) in enumerate(obj.items()):
                    body.add(("\n" if j == 0 else ",\n") + "    " + json.dumps(key) + ": ")
                    _json_value(body, value)
                body.add("\n}")
            name = self.r.choice(JSON_ARTIFACTS)
            head = _json_head(
                self.prefix,
                [
                    ("artifact", {"name": name, "encoding": "json"}),
                    *self.context(),
                    ("has_payload", "@MD5@"),
                ],
            )
            self.new.append(LogRecord("", [], head_doc=head, payload_doc=body))

    def _str(self, shapes: list[str]) -> None:
        for shape in shapes:
            _, _, value = self._pair(shape, P_STR)
            self.next_str += 1
            head = _json_head(self.prefix, [("str", [value, self.next_str])])
            self.new.append(LogRecord("", None, head_doc=head))

    def _str_used(self, shapes: list[str]) -> None:
        """The log's own interned file names (its stacks name them by number) replaced."""
        own = [rec for rec in self.records if _STR.search(rec.head)]
        self.r.shuffle(own)
        for rec, shape in zip(own, shapes, strict=False):
            _, _, value = self._pair(shape, P_STR_USED)
            m = _STR.search(rec.head)
            assert m is not None
            rec.head_doc = Doc().add(rec.head[: m.start(1)]).plant(*value).add(rec.head[m.end(1) :])
        if len(shapes) > len(own):
            self._str(shapes[len(own) :])

    def doc(self) -> Doc:
        """The log: its records with the new ones among them (after its first)."""
        out = Doc()
        slots: dict[int, list[LogRecord]] = defaultdict(list)
        for rec in self.new:
            slots[self.r.randrange(1, len(self.records) + 1)].append(rec)
        for i, rec in enumerate(self.records):
            for extra in slots.get(i, []):
                out.extend(extra.doc())
            out.extend(rec.doc())
            if i == 0:
                for extra in self.first:
                    out.extend(extra.doc())
        for extra in slots.get(len(self.records), []) + self.last:
            out.extend(extra.doc())
        return out


PLACE_METHODS = {
    P_ENV_NAME: "envelope_name",
    P_ENV_FIELD: "envelope_field",
    P_PAYLOAD: "payload",
    P_GRAPH: "graph",
    P_JSON: "json",
    P_STR: "str",
    P_STR_USED: "str_used",
}


def _encode_file(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def add_doc(inp: Input, rel: str, doc: Doc) -> None:
    """A file of the input from its doc, its canaries given their lines."""
    live_text, control_text = doc.text(True), doc.text(False)
    locate(inp.canaries, rel, doc, live_text)
    inp.files[rel] = (_encode_file(live_text), _encode_file(control_text))


def _gzip_members(data: bytes, names: Sequence[str] = ("",), cuts: int = 3) -> bytes:
    """``data`` as several gzip members (cut at record starts), the first named."""
    starts = [m.start() + 1 for m in re.finditer(rb"\n[^\t\n]", data)]
    bounds = [0, *(starts[len(starts) * i // cuts] for i in range(1, cuts) if starts), len(data)]
    out = io.BytesIO()
    for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        name = names[i] if i < len(names) else ""
        with gzip.GzipFile(filename=name, mode="wb", fileobj=out, mtime=0) as z:
            z.write(data[a:b])
    return out.getvalue()


def write_trace(inp: Input, p: Planter) -> None:
    w = TraceWriter(p, p.r.choice(BASE_LOGS))
    w.plant_all(p.queue, TRACE_PLACES)
    rel = (
        "dedicated_log_torch_trace_" + "".join(p.r.choice(LOWER_DIGITS) for _ in range(8)) + ".log"
    )
    if inp.kind == TRACE_GZ:
        rel += ".gz"
        doc = w.doc()
        add_doc(inp, rel, doc)
        names = []
        for shape in p.queue.get(P_GZ_NAME, []):
            c, plant = p.make(shape, P_GZ_NAME)
            c.written, c.file = plant.text(), rel
            names.append((plant.text(True), plant.text(False)))
        live, control = (_encode_file(doc.text(v)) for v in (True, False))
        inp.files[rel] = (
            _gzip_members(live, [n[0] for n in names] or [""]),
            _gzip_members(control, [n[1] for n in names] or [""]),
        )
    else:
        add_doc(inp, rel, w.doc())
    inp.target = inp.check_target = rel


def write_ranks(inp: Input, p: Planter) -> None:
    """Two rank logs of one job, and a small log named after each file-name canary."""
    queues = [defaultdict(list) for _ in range(2)]
    for place, shapes in p.queue.items():
        for i, shape in enumerate(shapes):
            queues[i % 2][place].append(shape)
    base = p.r.choice(BASE_LOGS)
    for rank, queue in enumerate(queues):
        w = TraceWriter(p, base)
        w.plant_all(queue, TRACE_PLACES)
        rel = (
            f"folder/dedicated_log_torch_trace_rank_{rank}_"
            + "".join(p.r.choice(LOWER_DIGITS) for _ in range(8))
            + ".log"
        )
        add_doc(inp, rel, w.doc())
    small = SMALL_LOG.read_bytes()
    for shape in p.queue.get(P_NAME, []):
        c, plant = p.make(shape, P_NAME)
        live, control = plant.text(True), plant.text(False)
        c.written = live
        rel, control_rel = f"folder/{live}.log", f"folder/{control}.log"
        c.file = rel
        inp.files[rel] = (small, small)
        inp.names[rel] = control_rel
    inp.target = inp.check_target = "folder"
