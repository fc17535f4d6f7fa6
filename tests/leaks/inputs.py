"""The other inputs with canaries: a line longer than the readers' chunks, TORCH_LOGS
text logs, TORCH_COMPILE_DEBUG folders, runtime profiles, captures; and one input of any
kind (:func:`generate`)."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .places import (
    CAPTURE,
    DATA,
    DEBUG,
    ECHO,
    KIND_PLACES,
    KINDS,
    LONG,
    P_CAP_FIELD,
    P_CAP_STDERR,
    P_DEBUG_JSON,
    P_DEBUG_NAME,
    P_DEBUG_PY,
    P_DEBUG_TEXT,
    P_LONG_ENV,
    P_LONG_PAYLOAD,
    P_LONG_TEXT,
    P_PROF_ARGS,
    P_PROF_META,
    P_PROF_NAME,
    P_TEXT,
    PROFILE,
    RANKS,
    TEXT,
    TEXT_LONG,
    TRACE,
    TRACE_GZ,
    TRACE_PLACES,
    Doc,
    Input,
    Planter,
    locate,
)
from .shapes import (
    AFTER_ESCAPES,
    JSON_AFTER,
    JSON_PLAIN,
    NEEDLE,
    RAW,
    SHAPES,
    seg_text,
)
from .traces import (
    BASE_LOGS,
    HEAD_PREFIX,
    SMALL_LOG,
    TraceWriter,
    add_doc,
    write_ranks,
    write_trace,
)


def _filler(n: int, r: random.Random) -> str:
    words = ("lorem", "ipsum", "dolor", "sit", "amet", "graph", "node", "buf0", "relu", "mm")
    out: list[str] = []
    size = 0
    while size < n:
        w = r.choice(words) + " "
        out.append(w)
        size += len(w)
    return "".join(out)[:n]


def cut_offsets(path: Path, text_log: bool) -> list[int]:
    """Where the readers cut the log's bytes: ``check``'s and ``redact``'s chunks, the
    model reader's secret scan, and (a text log) the whole-file scan; found by running
    them, so the campaign follows the code."""
    from sphinx_torchtrace.trace import secrets
    from sphinx_torchtrace.trace.sharing import redact
    from sphinx_torchtrace.trace.sharing.redact_text import TextRedactor

    cuts: set[int] = set()
    pos = [0]
    original_chunk = redact.LogRedactor._chunk

    def chunk(self: Any, data: bytes, line: int, out: Any, final: bool) -> None:
        pos[0] += len(data)
        cuts.add(pos[0])
        original_chunk(self, data, line, out, final)

    scanned = [0]
    original_scan = secrets.SecretScanner._scan

    def scan(self: Any, data: bytes) -> None:
        scanned[0] += len(data)
        cuts.add(scanned[0])
        original_scan(self, data)

    redact.LogRedactor._chunk = chunk  # type: ignore[method-assign]
    secrets.SecretScanner._scan = scan  # type: ignore[method-assign]
    try:
        redact.scan_log(path, TextRedactor())
        scanned[0] = 0
        if text_log:
            secrets.scan_text(path.read_bytes())
            scanned[0] = 0
            from sphinx_torchtrace.trace.inputs.text_log import load_text_log

            load_text_log(path)
        else:
            from sphinx_torchtrace.trace.inputs.loader import read_log

            read_log(path)
    finally:
        redact.LogRedactor._chunk = original_chunk  # type: ignore[method-assign]
        secrets.SecretScanner._scan = original_scan  # type: ignore[method-assign]
    return sorted(cuts)


#: A long record line or text log line: longer than two of the readers' chunks (one cut
#: inside it); a long payload line: longer than three (the record line is cut off first).
LONG_LINE_BYTES = 17 << 19
LONG_PAYLOAD_BYTES = 13 << 20


def long_variant(n: int) -> str:
    """The long line of input ``n``: a record line, then a payload line, in turn (by
    rounds of the kinds, so a one-round sample gets the cheaper record line)."""
    return P_LONG_ENV if n // len(KINDS) % 2 == 0 else P_LONG_PAYLOAD


def write_long(inp: Input, p: Planter, work: Path) -> None:
    """A log (or text log) with one line longer than the readers' chunks: a canary across
    every place they cut it, more elsewhere in it."""
    r = p.r
    text_log = inp.kind == TEXT_LONG
    place = P_LONG_TEXT if text_log else long_variant(inp.n)
    line_len = LONG_PAYLOAD_BYTES if place == P_LONG_PAYLOAD else LONG_LINE_BYTES
    if text_log:
        head = TEXT_LOGS[0].read_text(encoding="utf-8")
        prefix = "V1127 21:04:55.000000 24679 torch/_dynamo/guards.py:4483] [0/0] [__guards] "
        before = head + prefix
        after = "\n" + head
    else:
        base = SMALL_LOG.read_text(encoding="utf-8")
        head = base + HEAD_PREFIX.match(base).group()  # type: ignore[union-attr]
        if place == P_LONG_PAYLOAD:
            before = head + (
                '{"artifact": {"name": "leak_big_json", "encoding": "json"}, '
                '"has_payload": "@MD5@"}\n\t{"blob": "'
            )
            after = '"}\n'
        else:
            before = (
                head + '{"artifact": {"name": "leak_big_note", "encoding": "string"}, "note": "'
            )
            md5 = hashlib.md5(b"planted").hexdigest()
            after = f'", "has_payload": "{md5}"}}\n\tplanted\n'
    filler = _filler(line_len, r)
    rel = "long.log"
    # where the readers cut a log of this layout (filler only: cuts follow line breaks)
    probe = work / "probe.log"
    probe.write_bytes((before + filler + after).encode())
    cuts = [
        c
        for c in cut_offsets(probe, text_log)
        if len(before) + 300 < c < len(before) + line_len - 300
    ]
    probe.unlink()
    spots: list[tuple[int, bool]] = [(c - len(before), True) for c in cuts]  # offsets in the line
    extra = max(0, sum(len(p.queue.get(pl, [])) for pl in KIND_PLACES[inp.kind]) - len(spots))
    spots += [(r.randrange(300, line_len - 600), False) for _ in range(extra)]
    spots.sort()
    shapes = [s for pl in KIND_PLACES[inp.kind] for s in p.queue.get(pl, [])] or [
        s for s in SHAPES if s != ECHO
    ]
    pieces = Doc()
    at = 0
    for i, (spot, across) in enumerate(spots):
        shape = shapes[i % len(shapes)]
        c, plant = p.make(shape, place, RAW if text_log else None)
        c.at_cut = across
        if not text_log and c.how == JSON_PLAIN:
            live, control = (
                json.dumps(plant.text(v), ensure_ascii=True)[1:-1] for v in (True, False)
            )
            c.written = live
        elif not text_log and c.how == JSON_AFTER:
            lead = r.choice(AFTER_ESCAPES)
            live, control = (
                json.dumps(lead + plant.text(v), ensure_ascii=True)[1:-1] for v in (True, False)
            )
            c.written = live
        else:
            live, control = p.written(c, plant)
            live = (
                live.encode("ascii", "backslashreplace").decode()
                if not text_log
                else live.replace("\n", " ")
            )
            control = (
                control.encode("ascii", "backslashreplace").decode()
                if not text_log
                else control.replace("\n", " ")
            )
            c.written = live
        if text_log:  # a line of a text log holds no line break: a PEM block joined by spaces
            c.text = c.text.replace("\n", " ")
        # the middle of the secret's first window lies on the cut
        secret_at = live.lower().find(c.needles[0][:6]) if c.needles else len(live) // 2
        start = spot - max(secret_at, 0) - NEEDLE // 2 if across else spot
        if start < at or start + len(live) > line_len - 10:
            start = at + 5
            if start + len(live) > line_len - 10:
                p.canaries.remove(c)
                continue
        # a space on each side, in place of a filler character (offsets kept): a canary
        # glued to a word is part of that word (``lorepypi-…``, ``graph/home/…``), not a value
        gap = filler[at:start]
        gap = ((" " + gap[1:]) if at and gap else gap)[:-1] + " " if gap else gap
        pieces.add(gap).plant(
            c.uid,
            live,
            control.ljust(len(live), "x")[: len(live)] if len(control) != len(live) else control,
        )
        at = start + len(live)
    tail = filler[at:line_len]
    pieces.add(" " + tail[1:] if at and tail else tail)
    doc = Doc().add(before).extend(pieces).add(after)
    if place == P_LONG_PAYLOAD:
        body_live, body_control = (doc.text(v) for v in (True, False))

        def md5_of(text: str) -> str:
            payload_start = text.index('\n\t{"blob"') + 2
            return hashlib.md5(text[payload_start : len(text) - 1].encode()).hexdigest()

        doc.parts[0] = (
            before.replace("@MD5@", md5_of(body_live)),
            before.replace("@MD5@", md5_of(body_control)),
            None,
        )
    add_doc(inp, rel, doc)
    inp.target = inp.check_target = rel


# -- text logs, debug folders, runtime profiles, captures ------------------------------------

TEXT_LOGS = (
    DATA / "captured" / "torch_logs" / "options.log",
    DATA / "captured" / "torch_logs" / "plus_dynamo.log",
    DATA / "captured" / "torch_logs" / "ranks.log",
    DATA / "captured" / "torch_logs" / "seed003_old_format.log",
)
_TEXT_PREFIX = re.compile(
    r"^(?:\[rank\d+\]:)?(?:[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]+\] |\[\d{4}-\d\d-\d\d [\d:,]+\] )"
    r"(?:\[[^\]]*\] ){0,2}"
)


def write_text_log(inp: Input, p: Planter) -> None:
    """A TORCH_LOGS text log with lines added (a PEM block's lines after its first line
    without a prefix, as a multi-line message prints) and canaries at the end of its own."""
    base = p.r.choice(TEXT_LOGS)
    lines = base.read_text(encoding="utf-8").split("\n")
    prefixes = [m.group() for line in lines if (m := _TEXT_PREFIX.match(line))]
    inserts: dict[int, list[Doc]] = defaultdict(list)
    appended: dict[int, list[Doc]] = defaultdict(list)
    first: list[Doc] = []
    last: list[Doc] = []
    for shape in p.queue.get(P_TEXT, []):
        c, plant = p.make(shape, P_TEXT)
        live, control = p.written(c, plant)
        at = p.r.randrange(1, len(lines))
        if not plant.multiline and p.r.random() < 0.3 and lines[at - 1]:
            appended[at - 1].append(Doc().add(" ").plant(c.uid, live, control))
        else:
            lead = p.r.choice(("", "    ", "GUARDS: ", "RuntimeError: "))
            inserts[at].append(
                Doc().add(p.r.choice(prefixes) + lead).plant(c.uid, live, control).add("\n")
            )
        if plant.companion is not None:
            c.companion = p.r.choice(("before", "after"))
            segs = plant.companion
            guard = (
                Doc()
                .add(prefixes[0])
                .plant(
                    -c.uid - 1,
                    "".join(seg_text(s, True) for s in segs),
                    "".join(seg_text(s, False) for s in segs),
                )
                .add("\n")
            )
            (first if c.companion == "before" else last).append(guard)
    doc = Doc()
    for d in first:
        doc.extend(d)
    for i, line in enumerate(lines):
        for d in inserts.get(i, []):
            doc.extend(d)
        doc.add(line)
        for d in appended.get(i, []):
            doc.extend(d)
        if i < len(lines) - 1:
            doc.add("\n")
    if lines and lines[-1] != "":
        doc.add("\n")
    for d in last:
        doc.extend(d)
    rel = "torch_logs.log"
    add_doc(inp, rel, doc)
    inp.target = inp.check_target = rel


DEBUG_BASE = DATA / "captured" / "debug_dir" / "inference" / "torch_compile_debug"


def write_debug(inp: Input, p: Planter) -> None:
    """A TORCH_COMPILE_DEBUG folder: canaries as comments (and string literals) of its
    Python files, lines of its text files, strings of its node mappings, names of entries."""
    r = p.r
    files = {
        path.relative_to(DEBUG_BASE).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(DEBUG_BASE.rglob("*"))
        if path.is_file()
    }
    py = [k for k in files if k.endswith(".py")]
    txt = [k for k in files if k.endswith((".txt", "debug.log"))]
    mapping = next(k for k in files if k.endswith("node_mappings.json"))
    graph_dir = mapping.rsplit("/", 1)[0]
    docs: dict[str, Doc] = {}
    # python files: a comment line anywhere, a multi-line value at the end (as a repro's)
    for name in py:
        lines = files[name].split("\n")
        ins: dict[int, list[Doc]] = defaultdict(list)
        tail: list[Doc] = []
        for shape in p.queue.get(P_DEBUG_PY, [])[py.index(name) :: len(py)]:
            c, plant = p.make(shape, P_DEBUG_PY)
            live, control = p.written(c, plant)
            if plant.multiline or r.random() < 0.3:
                q = '"""' if '"""' not in live and not live.endswith('"') else "'''"
                tail.append(Doc().add(f"_v{c.uid} = {q}").plant(c.uid, live, control).add(f"{q}\n"))
            else:
                indent = re.match(r"\s*", lines[(at := r.randrange(len(lines)))]).group()  # type: ignore[union-attr]
                ins[at].append(Doc().add(indent + "# ").plant(c.uid, live, control).add("\n"))
        doc = Doc()
        for i, line in enumerate(lines):
            for d in ins.get(i, []):
                doc.extend(d)
            doc.add(line + ("\n" if i < len(lines) - 1 else ""))
        if not files[name].endswith("\n"):
            doc.add("\n")
        for d in tail:
            doc.extend(d)
        docs[name] = doc
    for name in txt:
        lines = files[name].split("\n")
        ins = defaultdict(list)
        for shape in p.queue.get(P_DEBUG_TEXT, [])[txt.index(name) :: len(txt)]:
            c, plant = p.make(shape, P_DEBUG_TEXT)
            live, control = p.written(c, plant)
            ins[r.randrange(len(lines))].append(Doc().plant(c.uid, live, control).add("\n"))
        doc = Doc()
        for i, line in enumerate(lines):
            for d in ins.get(i, []):
                doc.extend(d)
            doc.add(line + ("\n" if i < len(lines) - 1 else ""))
        docs[name] = doc
    # node mappings: planted names of graph nodes (keys) and of what they became (values)
    data = json.loads(files[mapping])
    values: list[tuple[int, str, str]] = []
    for shape in p.queue.get(P_DEBUG_JSON, []):
        c, plant = p.make(shape, P_DEBUG_JSON)
        values.append((c.uid, *p.written(c, plant)))
    doc = Doc().add("{")
    for i, (key, table) in enumerate(data.items()):
        doc.add(("" if i == 0 else ", ") + json.dumps(key) + ": {")
        items = list(table.items())
        mine = values[i :: len(data)]
        for j, (k, v) in enumerate(items):
            doc.add(("" if j == 0 else ", ") + json.dumps(k) + ": " + json.dumps(v))
        for j, value in enumerate(mine):
            doc.add(", " if items or j else "")
            if j % 2:
                doc.add('"').plant(*value).add('": ["relu"]')
            else:
                doc.add(f'"planted_{value[0]}": ["').plant(*value).add('"]')
        doc.add("}")
    docs[mapping] = doc.add("}")
    root = "torch_compile_debug"
    for name, text in files.items():
        d = docs.get(name) or Doc().add(text)
        add_doc(inp, f"{root}/{name}", d)
    for shape in p.queue.get(P_DEBUG_NAME, []):
        c, plant = p.make(shape, P_DEBUG_NAME)
        live, control = plant.text(True), plant.text(False)
        c.written = live
        rel = f"{root}/{graph_dir}/{live}.txt"
        c.file = rel
        inp.files[rel] = (b"x\n", b"x\n")
        inp.names[rel] = f"{root}/{graph_dir}/{control}.txt"
    inp.target = inp.check_target = root


PROFILE_DIR = DATA / "captured" / "runtime_training"
PROFILE_NAME = "profile-12663"
#: Operator events of the profile kept (of 32,460).
PROFILE_OPS = 3000


def write_profile(inp: Input, p: Planter) -> None:
    """A trace folder with its runtime profile: canaries in the names and arguments of the
    profile's events and in its meta file."""
    r = p.r
    log = next(PROFILE_DIR.glob("*.log"))
    inp.files[f"run/{log.name}"] = (log.read_bytes(), log.read_bytes())
    data = json.loads(
        gzip.decompress((PROFILE_DIR / "runtime" / f"{PROFILE_NAME}.json.gz").read_bytes())
    )
    # the profile's own regions, compiles and annotations, and the first of its operators
    # (enough to plant in: builds of the whole profile take seconds)
    ops = [e for e in data["traceEvents"] if isinstance(e, dict) and e.get("cat") == "cpu_op"]
    data["traceEvents"] = [
        e for e in data["traceEvents"] if not (isinstance(e, dict) and e.get("cat") == "cpu_op")
    ] + ops[:PROFILE_OPS]
    events = ops[:PROFILE_OPS]  # operators: renamed, given arguments (regions stay as they are)
    marks: dict[str, tuple[int, str, str]] = {}
    for shape in p.queue.get(P_PROF_NAME, []):
        c, plant = p.make(shape, P_PROF_NAME)
        value = (c.uid, *p.written(c, plant))
        key = f"@PLANT{c.uid}@"
        marks[key] = value
        events.pop(r.randrange(len(events)))["name"] = key  # one canary an event
    for shape in p.queue.get(P_PROF_ARGS, []):
        c, plant = p.make(shape, P_PROF_ARGS)
        value = (c.uid, *p.written(c, plant))
        key = f"@PLANT{c.uid}@"
        marks[key] = value
        event = events.pop(r.randrange(len(events)))
        event.setdefault("args", {})[
            r.choice(("Input Dims", "Call stack", "Concrete Inputs", "note"))
        ] = key
    text = json.dumps(data, indent=2)
    doc = Doc()
    pos = 0
    for m in re.finditer(r"@PLANT\d+@", text):
        doc.add(text[pos : m.start()]).plant(*marks[m.group()])
        pos = m.end()
    doc.add(text[pos:])
    rel = f"run/runtime/{PROFILE_NAME}.json.gz"
    live_text, control_text = doc.text(True), doc.text(False)
    locate(inp.canaries, rel, doc, live_text)
    inp.files[rel] = (
        gzip.compress(live_text.encode(), mtime=0),
        gzip.compress(control_text.encode(), mtime=0),
    )
    meta = json.loads((PROFILE_DIR / "runtime" / f"{PROFILE_NAME}.meta.json").read_text())
    mdoc = Doc().add("{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in meta.items()))
    for shape in p.queue.get(P_PROF_META, []):
        c, plant = p.make(shape, P_PROF_META)
        mdoc.add(f', "{r.choice(("cmdline", "cwd", "host", "env"))}_{c.uid}": "').plant(
            c.uid, *p.written(c, plant)
        ).add('"')
    add_doc(inp, f"run/runtime/{PROFILE_NAME}.meta.json", mdoc.add("}\n"))
    inp.target = inp.check_target = "run"


def write_capture(inp: Input, p: Planter) -> None:
    """A capture cache holding one entry: its run failed, so its record's stderr tail is
    shown; canaries there, in its record's fields and in its trace log."""
    r = p.r
    key = hashlib.sha256(f"leak-{inp.n}".encode()).hexdigest()
    entry = f"captures/{key}"
    w = TraceWriter(p, r.choice(BASE_LOGS))
    w.plant_all({k: v for k, v in p.queue.items() if k in TRACE_PLACES}, TRACE_PLACES)
    add_doc(inp, f"{entry}/trace/dedicated_log_torch_trace_cap.log", w.doc())
    record: dict[str, Any] = {
        "key": key,
        "script": "scripts/prog.py",
        "started": 1795261896.3,
        "duration": 3.25,
        "status": "failed",
        "returncode": 1,
        "stderr_tail": "@STDERR@",
        "torch_version": "2.13.0+cpu",
        "source_key": "@SOURCE_KEY@",
        "python": "@PYTHON@",
        "format": 1,
    }
    text = json.dumps(record, indent=1, ensure_ascii=True)
    doc = Doc()
    stderr = Doc().add("Traceback (most recent call last):\\n")
    for shape in p.queue.get(P_CAP_STDERR, []):
        c, plant = p.make(shape, P_CAP_STDERR)
        stderr.add(r.choice(("  ", "E ", "RuntimeError: ", ""))).plant(
            c.uid, *p.written(c, plant)
        ).add("\\n")
    python = Doc().add("/usr/bin/python3")
    for shape in p.queue.get(P_CAP_FIELD, [])[:1]:
        c, plant = p.make(shape, P_CAP_FIELD)
        python = Doc().plant(c.uid, *p.written(c, plant))
    pos = 0
    for m in re.finditer(r"@(STDERR|PYTHON)@", text):
        doc.add(text[pos : m.start()]).extend(stderr if m.group(1) == "STDERR" else python)
        pos = m.end()
    doc.add(text[pos:] + "\n")
    add_doc(inp, f"{entry}/record.json", doc)
    inp.target = "captures"
    inp.check_target = f"{entry}/trace"


WRITERS: dict[str, Callable[..., None]] = {
    TRACE: write_trace,
    TRACE_GZ: write_trace,
    RANKS: write_ranks,
    TEXT: write_text_log,
    DEBUG: write_debug,
    PROFILE: write_profile,
    CAPTURE: write_capture,
}


def generate(
    n: int, kind: str, seed: int, count: int, work: Path, shapes: Sequence[str] = ()
) -> Input:
    """Input ``n`` of the campaign: a ``kind`` input holding ``count`` canaries (about)."""
    r = random.Random(f"{seed}:{n}:{kind}")
    inp = Input(n, kind)
    planter = Planter(r, n, kind, count, shapes)
    inp.canaries = planter.canaries  # the same list: docs locate canaries as they are added
    if kind in (LONG, TEXT_LONG):
        write_long(inp, planter, work)
    else:
        WRITERS[kind](inp, planter)
    return inp
