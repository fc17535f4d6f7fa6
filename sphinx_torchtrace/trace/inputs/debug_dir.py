"""A ``TORCH_COMPILE_DEBUG`` folder as plain model objects.

``TORCH_COMPILE_DEBUG=1`` (with ``TORCHINDUCTOR_FORCE_DISABLE_CACHES=1``) writes
``torch_compile_debug/run_<timestamp>-pid_<pid>/`` holding ``torchdynamo/debug.log`` and
``torchinductor/`` with ``aot_model___<n>_debug.log`` and one folder per compiled graph,
``model__<n>_<inference|forward|backward>_<m>.<k>/`` (the graph's ATen graph, its graph
after the passes, a runnable repro, the loop-level IR before and after fusion, the generated
code, the provenance node mappings and, on torch-spyre, ``sdsc_<index>.json``).  torch 2.13
also writes a trace log under ``torch_compile_debug/tlparse/``.

A folder is as untrusted as a log: files are read up to a bound, links are followed only
inside the folder, anything not a regular file is skipped, and every problem is a
:class:`~.diagnostics.Diagnostic` (``debug_file``, ``debug_unknown``, ``skipped``), never an
error.  Graph folders are named after themselves: ``model__<n>`` is an AOT graph id, not a
compile id, and the debug logs carry none.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from ..diagnostics import Diagnostic, DiagnosticSubtype, quote
from ..folders import LEADS_OUT, NOT_A_FILE, UNREADABLE, real_root, refusal
from ..kernels import Kernel, split_output_code
from ..node_mappings import NodeMappings
from ..reader import load_json
from ..secrets import SecretScan, scan_text

#: Bytes read from one file of a debug folder at most; the rest is cut (a diagnostic says so).
MAX_FILE_BYTES = 8 * 1024 * 1024
#: Entries looked at per folder, and graph folders per run, at most.
MAX_ENTRIES = 10_000
MAX_GRAPHS = 2_000

RUN_FOLDER = re.compile(r"run_[0-9_]{1,64}-pid_[0-9]{1,12}\Z")
#: What an AOT graph folder holds (its name says it).
GraphKind = Literal["inference", "forward", "backward"]
GRAPH_FOLDER = re.compile(r"model__(\d{1,9})_(inference|forward|backward)_(\d{1,9})\.(\d{1,9})\Z")
AOT_LOG = re.compile(r"aot_model___(\d{1,9})_debug\.log\Z")
SDSC_FILE = re.compile(r"sdsc_(\d{1,9})\.json\Z")

#: The files of a graph folder, with the question each answers (seed 002).
GRAPH_FILES: dict[str, str] = {
    "fx_graph_readable.py": "the ATen graph after Dynamo capture: which operators, shapes, dtypes",
    "fx_graph_transformed.py": "the FX graph after Inductor's pre- and post-grad passes",
    "fx_graph_runnable.py": "a self-contained script that reruns the graph (a repro)",
    "ir_pre_fusion.txt": "the loop-level IR before fusion: buffers, loop ranges, strides",
    "ir_post_fusion.txt": "the loop-level IR after fusion: which nodes were fused",
    "output_code.py": "the generated code: kernels and the host code calling them",
    "inductor_provenance_tracking_node_mappings.json": "which graph nodes became which kernels",
}
#: Files that are real Python (the fx_graph_* printouts start ``class <lambda>``): one that
#: does not parse was cut short.
_PYTHON_FILES = ("fx_graph_runnable.py", "output_code.py")


@dataclass
class DebugFile:
    """One text file of a debug folder: ``relpath`` is relative to the folder given."""

    name: str
    relpath: str
    text: str | None  # None when unreadable or binary
    size: int
    cut: bool = False  # longer than MAX_FILE_BYTES: only the head was read
    secrets: SecretScan = field(default_factory=SecretScan)  # what looks secret in it


@dataclass
class SdscLayout:
    """One labeled data structure of an sdsc: a tensor the op reads or writes."""

    name: str
    role: str  # dsType_: INPUT, OUTPUT, ...
    data_format: str
    memories: list[str]


@dataclass
class SdscSpec:
    """What one ``sdsc_<index>.json`` (torch-spyre) says of its kernel, by the file's keys."""

    index: int
    file: DebugFile
    op: str = ""  # the top-level key, e.g. ``0_mul``
    aten_op: str = ""  # debug_handle_.aten_op
    ir_chain: list[str] = field(default_factory=list)
    cores: object = None  # numCoresUsed_
    slices_per_dim: dict[str, object] = field(default_factory=dict)  # numWkSlicesPerDim_
    core_slices: dict[str, dict[str, object]] = field(default_factory=dict)  # coreIdToWkSlice_
    sizes: dict[str, object] = field(default_factory=dict)  # dscs_[0][op].N_
    layouts: list[SdscLayout] = field(default_factory=list)  # labeledDs_
    # scheduleTree_ allocate nodes: (name, memory, layout dimension order)
    allocations: list[tuple[str, str, list[str]]] = field(default_factory=list)
    compute: list[tuple[str, str, list[str], list[str]]] = field(default_factory=list)
    valid: bool = True


@dataclass
class IrNode:
    name: str  # op1, op1_op2 (fused)
    node_type: str  # Inductor's class of it: SchedulerNode, FusedSchedulerNode ...
    buffers: list[str] = field(default_factory=list)


@dataclass
class Fusion:
    """The loop-level IR before and after fusion, summarised."""

    before: list[IrNode] = field(default_factory=list)
    after: list[IrNode] = field(default_factory=list)

    @property
    def fused(self) -> list[tuple[str, list[str]]]:
        """(node after fusion, the nodes before fusion it holds), for fused nodes only."""
        known = {n.name for n in self.before}
        out = []
        for node in self.after:
            parts = node.name.split("_")
            if len(parts) > 1 and all(p in known for p in parts):
                out.append((node.name, parts))
        return out


@dataclass
class GraphFolder:
    """``model__<n>_<kind>_<m>.<k>/``: one graph Inductor compiled."""

    name: str
    relpath: str
    aot_id: int
    kind: GraphKind
    files: dict[str, DebugFile] = field(default_factory=dict)
    sdsc: list[SdscSpec] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    mappings: NodeMappings | None = None
    fusion: Fusion | None = None

    def text(self, name: str) -> str | None:
        f = self.files.get(name)
        return f.text if f is not None else None

    @property
    def missing(self) -> list[str]:
        """Files every graph folder of this torch has and this one lacks."""
        core = (
            "fx_graph_readable.py",
            "fx_graph_transformed.py",
            "fx_graph_runnable.py",
            "ir_pre_fusion.txt",
            "ir_post_fusion.txt",
            "output_code.py",
        )
        return [n for n in core if n not in self.files]


@dataclass
class DebugRun:
    """``run_<timestamp>-pid_<pid>/`` (or a lone graph folder, ``name`` then its own)."""

    name: str
    relpath: str
    dynamo_log: DebugFile | None = None
    aot_logs: list[DebugFile] = field(default_factory=list)
    graphs: list[GraphFolder] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


@dataclass
class DebugDir:
    """What a debug folder holds: its runs, the trace logs torch wrote beside them, problems."""

    path: str  # as given
    shape: str  # "debug" (torch_compile_debug/), "run" (one run_*), "graph" (one graph folder)
    runs: list[DebugRun] = field(default_factory=list)
    trace_logs: list[Path] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def graphs(self) -> list[GraphFolder]:
        return [g for r in self.runs for g in r.graphs]

    def files(self) -> Iterator[DebugFile]:
        """Every file read, run by run: its logs, then its graph folders' files."""
        for run in self.runs:
            if run.dynamo_log is not None:
                yield run.dynamo_log
            yield from run.aot_logs
            for graph in run.graphs:
                yield from graph.files.values()


def debug_dir_shape(path: str | os.PathLike[str]) -> str | None:
    """``debug``, ``run`` or ``graph`` when ``path`` is a folder of that kind, else None."""
    p = Path(path)
    try:
        if not p.is_dir():
            return None
        if GRAPH_FOLDER.match(p.name):
            return "graph"
        root = real_root(p)
        if (
            RUN_FOLDER.match(p.name)
            or refusal(p / "torchinductor", root) == ""
            or refusal(p / "torchdynamo", root) == ""
        ):
            return "run"
        with os.scandir(p) as entries:
            for i, e in enumerate(entries):
                if i >= MAX_ENTRIES:
                    break
                if RUN_FOLDER.match(e.name) and e.is_dir(follow_symlinks=False):
                    return "debug"
    except OSError:
        return None
    return None


#: How a debug folder's warnings say why an entry is not read (:mod:`..folders` decides).
_REFUSED = {
    LEADS_OUT: "is a link leading out of the folder",
    UNREADABLE: "cannot be read (a broken link, a loop?)",
    NOT_A_FILE: "is not a regular file",
}


class _Reader:
    """Bounded reads under one root; links may not lead out of it (:func:`~..folders.refusal`,
    the rule every reader of a folder the user named follows)."""

    def __init__(self, root: Path, diagnostics: list[Diagnostic]) -> None:
        self.root = root
        self.real_root = real_root(root)
        self.diagnostics = diagnostics

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return path.name

    def note(self, kind: DiagnosticSubtype, message: str, path: Path, line: int = 0) -> None:
        self.diagnostics.append(Diagnostic(kind, message, str(path), line))

    def entries(self, folder: Path) -> list[tuple[str, Path, bool]]:
        """(name, path, is_dir) of the usable entries of a folder, sorted by name."""
        out: list[tuple[str, Path, bool]] = []
        try:
            with os.scandir(folder) as it:
                raw = []
                for i, e in enumerate(it):
                    if i >= MAX_ENTRIES:
                        self.note(
                            "limit",
                            f"more than {MAX_ENTRIES} entries; the rest are not read",
                            folder,
                        )
                        break
                    raw.append(e.name)
        except OSError as err:
            self.note("debug_file", f"cannot list the folder: {err.strerror or err}", folder)
            return out
        for name in sorted(raw):
            path = folder / name
            why = refusal(path, self.real_root)
            if why is None or why == "":
                out.append((name, path, why == ""))
            else:
                self.note("skipped", f"{quote(name)} {_REFUSED.get(why, why)}; not read", path)
        return out

    def read(self, path: Path, display: str) -> DebugFile:
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                data = f.read(min(MAX_FILE_BYTES, size) + 1)  # read(n) allocates n first
        except OSError as err:
            self.note("debug_file", f"cannot be read: {err.strerror or err}", path)
            return DebugFile(path.name, display, None, 0)
        cut = len(data) > MAX_FILE_BYTES
        if cut:
            data = data[:MAX_FILE_BYTES]
            self.note("limit", f"longer than {MAX_FILE_BYTES} bytes; only its head is shown", path)
        if b"\0" in data:
            self.note("debug_file", "holds binary data (NUL bytes), not text; not shown", path)
            return DebugFile(path.name, display, None, size, cut)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            if not (cut and err.start >= len(data) - 4):
                self.note(
                    "debug_file",
                    f"is not UTF-8 text (byte {err.start}); shown with replacement characters",
                    path,
                )
            text = data.decode("utf-8", "replace")
        return DebugFile(path.name, display, text, size, cut, scan_text(data))


def load_debug_dir(path: str | os.PathLike[str], shape: str | None = None) -> DebugDir:
    """Read a ``torch_compile_debug/`` folder, one ``run_*`` folder or one graph folder
    (``shape``: ``debug``, ``run`` or ``graph``; detected by default, else ``run``)."""
    root = Path(path)
    shape = shape or debug_dir_shape(root) or "run"
    debug = DebugDir(str(path), shape)
    reader = _Reader(root, debug.diagnostics)
    if shape == "graph":
        run = DebugRun(root.name, ".")
        run.graphs.append(_graph(reader, root, root.name))
        debug.runs.append(run)
    elif shape == "run":
        debug.runs.append(_run(reader, root, root.name, debug))
    else:
        for name, p, is_dir in reader.entries(root):
            if is_dir and RUN_FOLDER.match(name):
                debug.runs.append(_run(reader, p, name, debug))
            elif is_dir and name == "tlparse":
                debug.trace_logs.extend(_trace_logs(reader, p))
            else:
                _unknown(reader, debug.unknown, p, name)
    return debug


def _trace_logs(reader: _Reader, folder: Path) -> list[Path]:
    return [p for name, p, is_dir in reader.entries(folder) if not is_dir and name.endswith(".log")]


def _unknown(reader: _Reader, into: list[str], path: Path, name: str) -> None:
    into.append(name)
    reader.note(
        "debug_unknown",
        f"{quote(name)} is not a file TORCH_COMPILE_DEBUG writes; listed, not shown",
        path,
    )


def _run(reader: _Reader, folder: Path, name: str, debug: DebugDir) -> DebugRun:
    run = DebugRun(name, reader.rel(folder))
    for entry, p, is_dir in reader.entries(folder):
        if entry == "torchdynamo" and is_dir:
            for sub, q, sub_dir in reader.entries(p):
                if sub == "debug.log" and not sub_dir:
                    run.dynamo_log = reader.read(q, reader.rel(q))
                else:
                    _unknown(reader, run.unknown, q, f"torchdynamo/{sub}")
        elif entry == "torchinductor" and is_dir:
            for sub, q, sub_dir in reader.entries(p):
                if sub_dir and GRAPH_FOLDER.match(sub):
                    if len(run.graphs) >= MAX_GRAPHS:
                        reader.note(
                            "limit",
                            f"more than {MAX_GRAPHS} graph folders; the rest are not read",
                            p,
                        )
                        break
                    run.graphs.append(_graph(reader, q, sub))
                elif not sub_dir and AOT_LOG.match(sub):
                    run.aot_logs.append(reader.read(q, reader.rel(q)))
                else:
                    _unknown(reader, run.unknown, q, f"torchinductor/{sub}")
        elif entry == "tlparse" and is_dir:
            debug.trace_logs.extend(_trace_logs(reader, p))
        else:
            _unknown(reader, run.unknown, p, entry)
    run.graphs.sort(key=_graph_order)
    return run


def _graph_order(g: GraphFolder) -> tuple[int, ...]:
    m = GRAPH_FOLDER.match(g.name)
    assert m is not None
    return (int(m.group(1)), int(m.group(3)), int(m.group(4)))


def _graph(reader: _Reader, folder: Path, name: str) -> GraphFolder:
    m = GRAPH_FOLDER.match(name)
    graph = GraphFolder(
        name,
        reader.rel(folder),
        int(m.group(1)) if m else 0,
        cast(GraphKind, m.group(2)) if m else "inference",
    )
    for entry, p, is_dir in reader.entries(folder):
        sdsc = SDSC_FILE.match(entry)
        if is_dir or (entry not in GRAPH_FILES and sdsc is None):
            _unknown(reader, graph.unknown, p, entry)
            continue
        f = reader.read(p, reader.rel(p))
        if sdsc is not None:
            graph.sdsc.append(_sdsc(reader, int(sdsc.group(1)), f, p))
            continue
        graph.files[entry] = f
        bad_line = _syntax_error_line(f.text) if entry in _PYTHON_FILES and not f.cut else None
        if bad_line is not None:
            reader.note(
                "debug_file",
                "does not parse as Python: cut short (a run that "
                "crashed or a partial copy?); shown as it is",
                p,
                bad_line,
            )
    graph.sdsc.sort(key=lambda s: s.index)
    code = graph.text("output_code.py")
    if code is not None:
        graph.kernels = split_output_code(code, "inductor_output_code")
    mapping = graph.files.get("inductor_provenance_tracking_node_mappings.json")
    if mapping is not None and mapping.text is not None:
        graph.mappings = NodeMappings.parse(mapping.text)
        if not graph.mappings.valid:
            reader.note(
                "payload",
                "the node mappings are not a JSON object; no provenance",
                folder / mapping.name,
            )
    pre, post = graph.text("ir_pre_fusion.txt"), graph.text("ir_post_fusion.txt")
    if pre is not None or post is not None:
        graph.fusion = Fusion(ir_nodes(pre or ""), ir_nodes(post or ""))
    return graph


def _syntax_error_line(text: str | None) -> int | None:
    """None when ``text`` parses as Python (or is None), else the line it fails at (>= 1)."""
    if text is None:
        return None
    try:
        ast.parse(text)
    except SyntaxError as err:
        return max(1, err.lineno or 1)
    except (ValueError, RecursionError, MemoryError):
        return 1
    return None


# `op1: SchedulerNode(ComputedBuffer)`, `op1_op2: FusedSchedulerNode(NoneType)` followed by
# `op1_op2.snodes[0] =` and its parts' own headers (torch/_inductor/scheduler.py); `  buf1: ...`
_IR_NODE = re.compile(r"^(op\w{1,200}): (\w{1,100})\(")
_IR_BUFFER = re.compile(r"^\s{1,16}(buf\w{1,100}): \w")


def ir_nodes(text: str) -> list[IrNode]:
    """The scheduler nodes of an ``ir_*_fusion.txt`` with the buffers each writes."""
    nodes: list[IrNode] = []
    member = False  # the line before said `opX_opY.snodes[0] =`: a fused node's part follows
    for line in text.splitlines():
        m = _IR_NODE.match(line)
        if m is not None and "." not in m.group(1):
            if not member:
                nodes.append(IrNode(m.group(1), m.group(2)))
            member = False
            continue
        member = line.endswith("] =") and ".snodes[" in line
        b = _IR_BUFFER.match(line)
        if b is not None and nodes and b.group(1) not in nodes[-1].buffers:
            nodes[-1].buffers.append(b.group(1))
    return nodes


def _sdsc(reader: _Reader, index: int, f: DebugFile, path: Path) -> SdscSpec:
    spec = SdscSpec(index, f)
    if f.text is None:
        spec.valid = False
        return spec
    try:
        data = load_json(f.text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or len(data) != 1:
        reader.note("payload", "not an sdsc (a JSON object with one op key); shown as text", path)
        spec.valid = False
        return spec
    spec.op, root = next(iter(data.items()))
    if not isinstance(root, dict):
        spec.valid = False
        return spec
    handle = _dict(root.get("debug_handle_"))
    spec.aten_op = _str(handle.get("aten_op"))
    spec.ir_chain = [_str(x) for x in _list(handle.get("ir_chain"))]
    spec.cores = _scalar(root.get("numCoresUsed_"))
    slices = _dict(root.get("numWkSlicesPerDim_"))
    spec.slices_per_dim = {str(k): _scalar(v) for k, v in slices.items()}
    spec.core_slices = {
        str(k): {str(d): _scalar(n) for d, n in _dict(v).items()}
        for k, v in _dict(root.get("coreIdToWkSlice_")).items()
    }
    dscs = _list(root.get("dscs_"))
    inner = _dict(dscs[0]) if dscs else {}
    body = _dict(next(iter(inner.values()), None)) if len(inner) == 1 else {}
    spec.sizes = {str(k): _scalar(v) for k, v in _dict(body.get("N_")).items() if k != "name_"}
    for lds in _list(body.get("labeledDs_")):
        d = _dict(lds)
        spec.layouts.append(
            SdscLayout(
                _str(d.get("dsName_")),
                _str(d.get("dsType_")),
                _str(d.get("dataFormat_")),
                [str(k) for k, v in _dict(d.get("memOrg_")).items() if _dict(v).get("isPresent")],
            )
        )
    for node in _list(body.get("scheduleTree_")):
        n = _dict(node)
        if n.get("nodeType_") == "allocate":
            spec.allocations.append(
                (
                    _str(n.get("name_")),
                    _str(n.get("component_")),
                    [_str(x) for x in _list(n.get("layoutDimOrder_"))],
                )
            )
    for op in _list(body.get("computeOp_")):
        o = _dict(op)
        spec.compute.append(
            (
                _str(o.get("exUnit")),
                _str(o.get("opFuncName")),
                [_str(x) for x in _list(o.get("inputLabeledDs"))],
                [_str(x) for x in _list(o.get("outputLabeledDs"))],
            )
        )
    return spec


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(_scalar(value)))


def _scalar(value: Any) -> object:
    """Numbers and strings as they are; anything else as a short text (never a deep value)."""
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return quote(value) if not isinstance(value, (dict, list)) else type(value).__name__


def matching_compiles(debug: DebugDir, trace: Any) -> dict[str, list[Any]]:
    """Graph folder name -> the compiles of a trace of the same run whose artifacts match
    it by content (the folder's ``output_code.py`` or ATen graph equals an artifact of that
    compile), in log order, never by numbering: ``model__<n>`` is not a compile id."""
    wanted: dict[str, list[GraphFolder]] = {}
    for g in debug.graphs:
        for name in ("output_code.py", "fx_graph_readable.py"):
            text = g.text(name)
            if text and text.strip():
                wanted.setdefault(text.strip(), []).append(g)
    found: dict[str, list[Any]] = {}
    for rank in getattr(trace, "ranks", ()):
        for compile_ in rank.compiles:
            for artifact in compile_.artifacts:
                if artifact.payload is None or artifact.name not in _MATCHED_ARTIFACTS:
                    continue
                for g in wanted.get(artifact.text().strip(), ()):
                    compiles = found.setdefault(g.name, [])
                    if not any(c is compile_ for c in compiles):
                        compiles.append(compile_)
    return found


_MATCHED_ARTIFACTS = frozenset(
    {"inductor_output_code", "aot_inference_graph", "aot_forward_graph", "aot_backward_graph"}
)
