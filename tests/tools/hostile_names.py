"""A real log whose names are written to break every format that holds a name.

:func:`write_hostile_names_log` takes the bundled ``simple`` log (frame ``[0/0]``) and
renames what becomes object names and titles:

- graphs (artifacts with a page of their own) named with spaces, a newline, ``$``, an
  ``objects.inv`` line of another domain pointing to an outside host
  (:data:`INVENTORY_LINE`), a URL, rST role syntax, and characters XML 1.0 cannot hold;
  beside them graphs whose names equal another's escaped form, or its slug (names must
  stay one-to-one);
- the compiled function (its title, in every page's title and the inventory's display
  names);
- two graph breaks with no registry id whose types differ only in case and punctuation
  (one slug), and one with a hostile type.

Payload md5s are recomputed as torch computes them, so the log is still valid.
"""

from __future__ import annotations

import json
from pathlib import Path

from .hostile_log import COMPILE_ERROR_LOG, SIMPLE_LOG, LogRecord, format_record, read_records

#: An objects.inv line of its own, Sphinx's std domain, an outside host.
INVENTORY_LINE = "pwned std:label -1 https://evil.example/pwned Pwned"
#: Characters XML 1.0 cannot hold (a C0 control, the noncharacters) and Unicode's breaks.
XML_ILLEGAL = "\x01\x0b\ufffe\uffff\x85\u2028"
#: A name with every hazard, in one.
HOSTILE = (
    f"g x {INVENTORY_LINE}\n$x$ torchtrace:graph 1 http://evil.example/$ - "
    f"www.evil.example @org/team `b` <t> a\\b/c #u0020 ##{XML_ILLEGAL}\t\u202eend"
)
#: The graphs' names as logged: each still a graph with a page (``_graph``), pairwise
#: different, and a careless escape or slug would merge some of them.
GRAPH_NAMES = (
    f"{HOSTILE}_graph",
    "a b_graph",
    "a#u0020b_graph",
    "a/b_graph",
    "a_b_graph",
    "A B_graph",
)
FUNCTION = f"fn {INVENTORY_LINE}\nstd:doc{XML_ILLEGAL}"
#: Graph-break types with no registry id: one slug, two breaks; and a hostile one.
BREAK_TYPES = ("Unsupported call", "unsupported: call!", "Bad " + HOSTILE.replace("\n", " "))


def write_hostile_names_log(folder: Path) -> Path:
    """Write ``hostile_names.log`` into ``folder``; its path."""
    records = read_records(SIMPLE_LOG)
    like = next(r for r in records if r.artifact_name() == "after_pre_grad_graph")
    extra = []
    for name in GRAPH_NAMES:
        envelope = json.loads(json.dumps(like.envelope))
        envelope["artifact"]["name"] = name
        extra.append(LogRecord(like.prefix, envelope, like.payload))
    extra += [_graph_break(t) for t in BREAK_TYPES]
    for record in records:
        if record.kind == "dynamo_start":
            record.envelope["dynamo_start"]["stack"][-1]["name"] = FUNCTION
        elif record.kind == "compilation_metrics":
            record.envelope["compilation_metrics"]["co_name"] = FUNCTION
    end_of_frame_0 = next(i for i, r in enumerate(records) if r.kind == "compilation_metrics")
    records[end_of_frame_0:end_of_frame_0] = extra
    path = folder / "hostile_names.log"
    path.write_text("".join(format_record(r) for r in records), encoding="utf-8")
    return path


def _graph_break(kind: str) -> LogRecord:
    """The compile_error log's first graph break in frame 0/0, its type ``kind``, its
    registry link taken out (torch before the registry logged none)."""
    record = next(
        r
        for r in read_records(COMPILE_ERROR_LOG)
        if r.artifact_name() == "dynamo_graph_break_reason"
    )
    record.envelope.update(frame_id=0, frame_compile_id=0, attempt=0)
    lines = (record.payload or "").split("\n")
    lines = [line for line in lines if "compile-graph-break-site" not in line]
    at = lines.index("Call to `torch._dynamo.graph_break()`")
    lines[at] = kind
    record.payload = "\n".join(lines)
    return record
