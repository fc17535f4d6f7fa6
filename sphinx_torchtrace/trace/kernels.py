"""Split Inductor's generated code into its kernels.

Inductor logs its output in three shapes: the JIT wrapper (a Python module
where every kernel is a string handed to ``async_compile.<backend>(...)`` and
``call(args)`` launches them), the AOTInductor C++ wrapper (``run_impl`` calls
``cpp_fused_*`` functions declared at the top, or ``call_triton_*`` helpers
that embed the Triton source in a comment), and the AOTInductor kernel file
(plain ``extern "C"`` C++ functions).  One pass over the lines finds the
definitions, their launches and the ``Source Nodes`` comments that tie both
to the user's graph.  The parser never raises: a truncated or foreign payload
yields whatever kernels could be recognised, because a report must still
render for a log that a crash cut short.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

#: What a kernel is; ``extern`` is a library call, not generated code.
KernelKind = Literal[
    "triton_pointwise",
    "triton_reduction",
    "triton_persistent_reduction",
    "triton_template",
    "triton_foreach",
    "triton",
    "combo",
    "cpp",
    "cuda",
    "extern",
]
#: Kernel kinds, for readers and tests.
KERNEL_KINDS: tuple[KernelKind, ...] = get_args(KernelKind)


@dataclass(slots=True)
class Kernel:
    """One generated kernel of an output-code artifact (or one extern kernel called by it).

    ``definition_line`` and ``launch_lines`` are 1-based lines of the payload;
    for an extern kernel, which has no definition, ``definition_line`` is its
    first launch.  ``backend`` is how the code was compiled: the
    ``async_compile`` method (``triton``, ``cpp_pybinding``, ``cuda`` ...),
    ``aoti`` for functions of AOTInductor C++ code, ``extern`` for calls.
    """

    name: str
    kind: KernelKind
    source: str
    definition_line: int
    source_nodes: list[str] = field(default_factory=list)
    aten_ops: list[str] = field(default_factory=list)
    launch_lines: list[int] = field(default_factory=list)
    # An extern's source nodes per call, one entry per launch line: each call of
    # ``extern_kernels.addmm`` is its own site (a linear layer), not one kernel.
    call_nodes: list[list[str]] = field(default_factory=list)
    backend: str = ""
    #: Inductor's ``# kernel path:`` comment above the definition: the file the kernel was
    #: written to (what tritonparse and a profiler's source view name); None where the code
    #: has none (C++ kernels, older torch).
    path: str | None = None
    #: Per launch line, the function of the output code it is in when that is a subgraph's
    #: (``partitioned_fw_subgraph_0_1``: a nested compile region, a ``cond`` branch), ""
    #: in the wrapper's own ``call``.
    launch_functions: list[str] = field(default_factory=list)
    #: Per launch line, how many places of the code reach it: 1 in ``call``; in a subgraph's
    #: function, the places that call that function (a region reused four times: 4).
    launch_reach: list[int] = field(default_factory=list)

    @property
    def calls(self) -> int:
        """The places of the code that launch it, a repeated subgraph's launches counted
        once per call of the subgraph (the lines alone undercount a reused region)."""
        return sum(self.launch_reach) if self.launch_reach else len(self.launch_lines)

    @property
    def subgraphs(self) -> list[str]:
        """The subgraph functions it is launched from, in order."""
        return [f for f in dict.fromkeys(self.launch_functions) if f]


# `# Topologically Sorted Source Nodes: [a, b], Original ATen: [aten.x]` (older
# torch: `# Source Nodes: ...`), in Python or C++ comments.
_SOURCE_NODES = re.compile(
    r"^\s*(?:#|//)\s*(?:Topologically Sorted )?Source Nodes:\s*\[([^\]]*)\]"
    r"(?:,\s*Original ATen:\s*\[([^\]]*)\])?"
)
# JIT: `name = async_compile.triton('name', '''` (also cpp_pybinding, cuda, multi_kernel ...).
_ASYNC_DEF = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*async_compile\.(\w+)\(")
# AOTI: `static inline void call_triton_poi_fused_0(` (a template<> line may precede it).
_AOTI_TRITON_DEF = re.compile(r"^(?:static\s+)?(?:inline\s+)?void\s+call_(triton_\w+)\s*\(")
# AOTI: `extern "C"  void cpp_fused_relu_0(float* in_out_ptr0,` (definition or declaration).
_AOTI_EXTERN_C_DEF = re.compile(r'^extern\s+"C"\s[\w\s\*&:<>]*?\b([A-Za-z_]\w*)\s*\(')
_HEURISTIC = re.compile(r"@triton_heuristics\.(\w+)\(")
# Launch statements: `kernel.run(...)` (CUDA: `kernel.kernel(...)`), `kernel(...)`,
# `buf1 = extern_kernels.mm(...)` ...
_METHOD_CALL = re.compile(r"^\s+([A-Za-z_]\w*)\.\w+\(")
# The assignment's targets start with a non-blank (or after the indentation's last two
# blanks): a line of blanks cannot be split between indentation and targets many ways.
_PLAIN_CALL = re.compile(r"^\s+(?:(?:[\w,\[\]][\w\s,\[\]]*|(?<=\s\s))=\s*)?([A-Za-z_]\w*)\(")
_PY_EXTERN = re.compile(
    r"^\s+(?:(?:[\w,\[\]][\w\s,\[\]]*|(?<=\s\s))=\s*)?((?:extern_kernels|torch\.ops|aten)\.[\w.]+)\("
)
# `# kernel path: /tmp/torchinductor_user/u7/cu7mirw....py` above a Triton kernel.
_KERNEL_PATH = re.compile(r"^\s*#\s*kernel path:\s*(\S[^\n]*?)\s*$")
# A function of the wrapper module at top level: a subgraph's (`def partitioned_fw_subgraph_0_1(
# args):`), or the wrapper's own `call` in older torch.
_TOP_DEF = re.compile(r"^def\s+([A-Za-z_]\w*)\s*\(")
#: Top-level functions that are the wrapper's own, not a subgraph's.
_WRAPPER_FUNCTIONS = frozenset({"call", "benchmark_compiled_module", "get_args"})
#: Depth to which calls of subgraph functions from other subgraph functions are followed.
_MAX_NESTING = 16
_AOTI_EXTERN = re.compile(
    r"\b(aoti_torch_(?:cpu|cuda|xpu|mps)_\w+|aoti_torch_proxy_executor_call_function)\("
)

_HEURISTIC_KIND: dict[str, KernelKind] = {
    "pointwise": "triton_pointwise",
    "reduction": "triton_reduction",
    "persistent_reduction": "triton_persistent_reduction",
    "cooperative_reduction": "triton_reduction",
    "split_scan": "triton_reduction",
    "template": "triton_template",
    "foreach": "triton_foreach",
}
_PREFIX_KIND: tuple[tuple[str, KernelKind], ...] = (
    ("triton_poi_", "triton_pointwise"),
    ("triton_red_", "triton_reduction"),
    ("triton_per_", "triton_persistent_reduction"),
    ("triton_tem_", "triton_template"),
    ("triton_for_", "triton_foreach"),
)


def _names(text: str | None) -> list[str]:
    """The non-empty items of a comment's ``[a, b, ]`` list (Inductor leaves empty slots)."""
    if not text:
        return []
    return [item for item in (part.strip() for part in text.split(",")) if item]


def _merge(into: list[str], items: list[str]) -> None:
    """Append the items not yet present: a kernel launched twice keeps one list, in order."""
    for item in items:
        if item not in into:
            into.append(item)


def _backend_kind(backend: str) -> KernelKind:
    """Kind of a non-Triton ``async_compile`` backend (Triton is classified from its source)."""
    if backend in ("cpp", "cpp_pybinding"):
        return "cpp"
    if backend in ("cuda", "rocm") or "cutlass" in backend or "cute" in backend:
        return "cuda"
    if "triton" in backend or backend == "multi_kernel":
        return "triton"
    return "cpp"  # halide, mps and other host-compiled backends: C-like generated code


def _triton_kind(name: str, heuristic: str | None, combo: bool) -> KernelKind:
    """Kind of a Triton kernel: its decorator first, then its name's prefix."""
    if heuristic == "foreach":
        return "triton_foreach"
    if combo:
        return "combo"
    if heuristic is not None:
        return _HEURISTIC_KIND.get(heuristic, "triton")
    for prefix, kind in _PREFIX_KIND:
        if name.startswith(prefix):
            return kind
    return "triton"


def _depth(text: str) -> int:
    """Brackets opened minus closed: where a multi-line call without a string ends."""
    return text.count("(") + text.count("[") - text.count(")") - text.count("]")


class _Open:
    """A kernel definition being read: where it started and how it ends."""

    __slots__ = (
        "kernel",
        "start",
        "mode",
        "quote",
        "indent",
        "depth",
        "braced",
        "heuristic",
        "combo",
    )

    def __init__(self, kernel: Kernel, start: int, mode: str) -> None:
        self.kernel = kernel
        self.start = start  # 0-based index of the first line
        self.mode = mode  # "quote" | "paren" | "brace"
        self.quote = "'''"
        self.indent = 0
        self.depth = 0
        self.braced = False
        self.heuristic: str | None = None
        self.combo = False


def split_output_code(code: str, artifact_name: str) -> list[Kernel]:
    """The kernels defined in one output-code payload, with their launches and externs.

    ``artifact_name`` is ``inductor_output_code`` (JIT), ``inductor_aot_wrapper_code``
    or ``inductor_aot_kernel_code``; the line patterns of all three are tried on
    any payload, so a mislabelled one is still split.  Never raises.
    """
    try:
        return _split(code)
    except Exception:  # noqa: BLE001 - a report must render even for a payload that defeats the parser
        return []


def _split(code: str) -> list[Kernel]:
    if "\r" in code:  # CRLF payloads: same lines, same numbers
        code = code.replace("\r\n", "\n")
    splitter = _Splitter(code.split("\n"))
    for i, line in enumerate(splitter.lines):
        splitter.read(i, line)
    return splitter.finish()


class _Splitter:
    """The one pass over a payload's lines: what is known between one line and the next.

    A line is either inside a definition being read (:meth:`_inside`), a comment that
    heads what follows (:meth:`_comment`), a definition's first line (:meth:`_async_definition`,
    :meth:`_top_level`), or an indented statement that may launch a kernel (:meth:`_launch`).
    """

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.kernels: dict[str, Kernel] = {}
        self.externs: dict[str, Kernel] = {}
        # Kernels whose source-node lists came from a comment at their definition:
        # launch comments then add nothing (they repeat, or mix in an extern's nodes).
        self.defined_nodes: set[str] = set()
        #: The last unconsumed Source Nodes comment.
        self.pending: tuple[list[str], list[str]] | None = None
        self.current: _Open | None = None
        self.declared_only: set[str] = set()  # C++ functions seen only as a declaration so far
        #: The last ``# kernel path:`` comment, for the next kernel.
        self.pending_path: str | None = None
        self.function = ""  # the subgraph function being read ("" in the wrapper's own code)
        self.functions: set[str] = set()  # subgraph functions defined at top level
        self.callers: dict[str, list[str]] = {}  # a function called -> the function of each call

    def read(self, i: int, line: str) -> None:
        """Read ``lines[i]``."""
        if self.current is not None:
            self._inside(self.current, i, line)
            return
        stripped = line.lstrip()
        if not stripped:
            return
        if stripped.startswith("#") or stripped.startswith("//"):
            self._comment(line, stripped)
            return
        if "async_compile." in line and self._async_definition(i, line, stripped):
            return
        if line[0] not in " \t":
            self._top_level(i, line)
            return
        self._launch(i, line, stripped)

    def finish(self) -> list[Kernel]:
        """The kernels and externs found, each launch with how many places reach it."""
        if self.current is not None:  # truncated in the middle of a definition: keep what there is
            self._close(self.current, len(self.lines) - 1)
        found = [*self.kernels.values(), *self.externs.values()]
        if self.functions:
            reach = _reach(self.callers)
            for k in found:
                k.launch_reach = [reach(f) for f in k.launch_functions]
        return found

    def _close(self, op: _Open, end: int) -> None:
        """Finish a definition whose last line is ``lines[end]`` (0-based)."""
        k = op.kernel
        k.source = "\n".join(self.lines[op.start : end + 1])
        if k.backend in ("triton", "aoti_triton"):
            k.kind = _triton_kind(k.name, op.heuristic, op.combo)
        seen = self.kernels.get(k.name)
        if seen is None:
            self.kernels[k.name] = k
        elif k.name in self.declared_only and op.braced:  # the body after a forward declaration
            seen.source, seen.definition_line = k.source, k.definition_line
            self.declared_only.discard(k.name)
            return
        else:
            return
        if op.mode == "brace" and not op.braced:
            self.declared_only.add(k.name)

    def _inside(self, op: _Open, i: int, line: str) -> None:
        """A line of the definition being read: its decorator, its Source Nodes, its end."""
        if "@triton_heuristics." in line and op.heuristic is None:
            m = _HEURISTIC.search(line)
            if m:
                op.heuristic = m.group(1)
        if "combo_grid_meta" in line:
            op.combo = True
        if "Source Nodes:" in line and op.kernel.name not in self.defined_nodes:
            m = _SOURCE_NODES.match(line)
            if m:
                op.kernel.source_nodes = _names(m.group(1))
                op.kernel.aten_ops = _names(m.group(2))
                self.defined_nodes.add(op.kernel.name)
        done = False
        if op.mode == "quote":
            if op.quote in line:
                stripped = line.lstrip()
                done = stripped.startswith(op.quote) and len(line) - len(stripped) <= op.indent
        elif op.mode == "paren":
            op.depth += _depth(line)
            done = op.depth <= 0
        else:  # brace: a C++ function, or only its declaration
            if not op.braced:
                if "{" in line:
                    op.braced = True
                elif line.rstrip().endswith(";"):
                    done = True
            if op.braced and line.startswith("}"):
                done = True
        if done:
            self._close(op, i)
            self.current = None

    def _comment(self, line: str, stripped: str) -> None:
        """A comment: the next kernel's path, or the Source Nodes of what follows."""
        if "kernel path:" in stripped:
            pm = _KERNEL_PATH.match(line)
            self.pending_path = pm.group(1) if pm else self.pending_path
        if "Source Nodes:" in stripped:
            m = _SOURCE_NODES.match(line)
            if m:
                self.pending = (_names(m.group(1)), _names(m.group(2)))

    def _async_definition(self, i: int, line: str, stripped: str) -> bool:
        """``name = async_compile.<backend>(...)``: a JIT kernel's definition starts (or is
        whole on this line); False where the line is no such definition."""
        m = _ASYNC_DEF.match(line)
        if not m:
            return False
        name, backend = m.group(1), m.group(2)
        kind = "triton" if backend == "triton" else _backend_kind(backend)
        k = Kernel(name, kind, "", i + 1, backend=backend, path=self.pending_path)
        self.pending_path = None
        op = _Open(k, i, "quote")
        op.indent = len(line) - len(stripped)
        if self.pending is not None:
            k.source_nodes, k.aten_ops = self.pending
            self.defined_nodes.add(name)
            self.pending = None
        rest = line[m.end() :]
        q = "'''" if "'''" in rest else '"""' if '"""' in rest else None
        if q is not None:
            op.quote = q
            if rest.count(q) >= 2:  # the whole string on this one line
                self._close(op, i)
                return True
            if "@triton_heuristics." in rest:
                hm = _HEURISTIC.search(rest)
                op.heuristic = hm.group(1) if hm else None
        else:
            op.mode = "paren"
            op.depth = 1 + _depth(rest)
            if op.depth <= 0:
                self._close(op, i)
                return True
        self.current = op
        return True

    def _top_level(self, i: int, line: str) -> None:
        """A statement at the top level: ends what a comment headed; may start a subgraph
        function, an AOTInductor ``extern "C"`` function or a ``call_triton_*`` helper."""
        self.pending = None  # a comment never reaches past the statement or function it heads
        self.pending_path = None
        self.function = ""
        if line.startswith("def "):
            dm = _TOP_DEF.match(line)
            if dm and dm.group(1) not in _WRAPPER_FUNCTIONS:
                self.function = dm.group(1)
                self.functions.add(self.function)
        if line.startswith("extern"):
            m = _AOTI_EXTERN_C_DEF.match(line)
            if m:
                k = Kernel(m.group(1), "cpp", "", i + 1, backend="aoti")
                op = _Open(k, i, "brace")
                if "{" in line:
                    op.braced = True
                elif line.rstrip().endswith(";"):
                    self._close(op, i)
                    return
                self.current = op
        elif "call_triton_" in line:
            m = _AOTI_TRITON_DEF.match(line)
            if m:
                k = Kernel(m.group(1), "triton", "", i + 1, backend="aoti_triton")
                op = _Open(k, i, "brace")
                op.braced = "{" in line
                self.current = op

    def _launch(self, i: int, line: str, stripped: str) -> None:
        """An indented statement outside any definition: a kernel's launch, an extern's
        call, or a subgraph function's call (counted for :func:`_reach`)."""
        target: Kernel | None = None
        if "." in line:
            m = _METHOD_CALL.match(line)
            if m:
                target = self.kernels.get(m.group(1))
        if target is None and "(" in line:
            m = _PLAIN_CALL.match(line)
            if m:
                name = m.group(1)
                target = self.kernels.get(name)
                if target is None and name.startswith("call_"):
                    target = self.kernels.get(name[5:])
                if target is None and name in self.functions:  # a subgraph called
                    self.callers.setdefault(name, []).append(self.function)
                    return
        if target is None:
            target = self._extern(i, line, stripped)
        if target is not None:
            target.launch_lines.append(i + 1)
            target.launch_functions.append(self.function)
            if target.kind == "extern":
                target.call_nodes.append(list(self.pending[0]) if self.pending is not None else [])
            if self.pending is not None:
                if target.name not in self.defined_nodes:
                    _merge(target.source_nodes, self.pending[0])
                    _merge(target.aten_ops, self.pending[1])
                self.pending = None

    def _extern(self, i: int, line: str, stripped: str) -> Kernel | None:
        """The library call a statement makes (``extern_kernels.mm``, ``torch.ops...``,
        ``aoti_torch_*``), one :class:`Kernel` per name; None where it makes none."""
        ext_name: str | None = None
        if "extern_kernels." in line or "torch.ops." in line or "aten." in line:
            m = _PY_EXTERN.match(line)
            if m:
                ext_name = m.group(1)
        if ext_name is None and "aoti_torch_" in line:
            m = _AOTI_EXTERN.search(line)
            if m:
                ext_name = m.group(1)
        if ext_name is None:
            return None
        target = self.externs.get(ext_name)
        if target is None:
            target = Kernel(ext_name, "extern", stripped, i + 1, backend="extern")
            self.externs[ext_name] = target
        return target


def _reach(callers: dict[str, list[str]]) -> Callable[[str], int]:
    """How many places of the code reach a function: 1 for the wrapper's own code; for a
    subgraph's, the sum over its calls of the places reaching the caller.  A function no
    call of which was found counts once (its launches are not hidden); calls in a cycle or
    nested past :data:`_MAX_NESTING` count once."""
    known: dict[str, int] = {}
    busy: set[str] = set()

    def reach(function: str, depth: int = 0) -> int:
        if not function or function in busy or depth > _MAX_NESTING:
            return 1
        if function in known:
            return known[function]
        sites = callers.get(function)
        if not sites:
            return 1
        busy.add(function)
        total = sum(reach(site, depth + 1) for site in sites)
        busy.discard(function)
        known[function] = total
        return total

    return reach
