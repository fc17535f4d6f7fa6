"""Inductor provenance: which pre-grad node became which post-grad nodes and kernels.

With ``INDUCTOR_PROVENANCE=1`` Inductor logs ``inductor_provenance_tracking_node_mappings``
(JSON: ``preToPost``, ``postToPre``, ``cppCodeToPost``, ``postToCppCode``, optional
``version``; in version 2.0 kernel keys carry a debug handle, ``cpp_fused_relu_0:2``).  A
viewer needs those node links as *line* links between three texts: the pre-grad graph, the
post-grad graph and the generated code.  :func:`provenance_view` builds the same six line maps
as ``tlparse --inductor-provenance`` (``preToPost``, ``postToPre``, ``pyCodeToPost``,
``postToPyCode``, ``cppCodeToPost``, ``postToCppCode``) with tlparse's matching rules, so the
two agree on what is linked, but numbers lines differently:

**Numbering.**  Every line number here is a 1-based line of the payload text as the model
returns it (:meth:`Artifact.text`, i.e. the TAB-stripped payload lines).  tlparse numbers
graph panes the same way, but code panes as it renders them: it drops the leading empty lines
of the C++ wrapper (which starts with one, so tlparse's C++ line N is our line N+1), and it
numbers Python output code from its ``# AOT ID:`` line (tlparse's Python line N is our line N
plus the 0-based index of that line, which is 0 in every log seen).
:func:`tlparse_line_offset` gives the constant to add to ours to get tlparse's.

Differences kept on purpose: value lists are sorted and without duplicates (tlparse keeps
mapping order), and a code line reached by several kernels maps to the union of their nodes
(tlparse keeps one kernel's).  Bad input never raises: a mapping that is not JSON gives a view
with empty maps.

Like tlparse, :func:`provenance_view` pairs the **last** mapping of a compile with the last
pre-grad graph, post-grad graph and code of that compile; for a training compile (forward and
backward graphs under one compile id) :func:`provenance_views` gives one view per mapping.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..model import Artifact, Compile
from ..node_mappings import NodeMap, NodeMappings

MAPPING_ARTIFACT = "inductor_provenance_tracking_node_mappings"
#: Artifact names tried for each pane, in tlparse's order of preference.
PRE_GRAD_NAMES = ("before_pre_grad_graph", "inductor_pre_grad_graph")
POST_GRAD_NAMES = ("after_post_grad_graph", "inductor_post_grad_graph")
PYTHON_CODE_NAMES = ("inductor_output_code",)
CPP_CODE_NAMES = ("inductor_aot_wrapper_code",)
#: The six line maps, in tlparse's names.
MAP_KEYS = (
    "preToPost",
    "postToPre",
    "pyCodeToPost",
    "postToPyCode",
    "cppCodeToPost",
    "postToCppCode",
)

Language = Literal["python", "cpp"]
Pane = Literal["pre", "post", "python", "cpp"]
LineMap = dict[int, list[int]]

# `  cpp_fused_x_xnumel = 16;` declarations look like calls to the kernel; tlparse skips them.
_XNUMEL_DECL = re.compile(r"^\s*\w+\s.*_xnumel(?:_\d+)?\s*=")


@dataclass
class ProvenanceView:
    """One node mapping with the three texts it links, as line maps and node maps.

    ``line_maps[key]`` maps a 1-based payload line to the sorted lines it links to
    (see the module docstring for how this relates to tlparse's numbering).  ``code`` is the
    code pane: the Python output code when there is one, else the AOTInductor C++ wrapper.
    """

    mapping: Artifact
    pre_grad: Artifact | None
    post_grad: Artifact | None
    python_code: Artifact | None
    cpp_code: Artifact | None
    mappings: NodeMappings
    line_maps: dict[str, LineMap]
    pre_node_lines: dict[str, int]  # pre-grad node -> its line
    post_node_lines: dict[str, int]  # post-grad node -> its line
    python_kernel_lines: dict[str, list[int]]  # kernel key -> call lines in python_code
    cpp_kernel_lines: dict[str, list[int]]  # kernel key -> call lines in cpp_code

    @property
    def code(self) -> Artifact | None:
        return self.python_code if self.python_code is not None else self.cpp_code

    @property
    def language(self) -> Language:
        return "python" if self.python_code is not None or self.cpp_code is None else "cpp"

    @property
    def kernel_lines(self) -> dict[str, list[int]]:
        """Kernel key -> lines of :attr:`code` where the kernel is called."""
        return self.python_kernel_lines if self.language == "python" else self.cpp_kernel_lines

    @property
    def pre_to_post(self) -> NodeMap:
        """Pre-grad node -> the post-grad nodes it became."""
        return self.mappings.pre_to_post

    @property
    def post_to_pre(self) -> NodeMap:
        return self.mappings.post_to_pre

    @property
    def post_to_kernels(self) -> NodeMap:
        """Post-grad node -> kernel keys (``name`` or ``name:handle``) that compute it."""
        return self.mappings.post_to_kernel

    @property
    def kernel_to_post(self) -> NodeMap:
        return self.mappings.kernel_to_post

    @property
    def empty(self) -> bool:
        return not any(self.line_maps.values())

    @property
    def code_to_post(self) -> LineMap:
        """Code line -> post-grad lines, for whichever language :attr:`code` is."""
        return self.line_maps["pyCodeToPost" if self.language == "python" else "cppCodeToPost"]

    @property
    def post_to_code(self) -> LineMap:
        return self.line_maps["postToPyCode" if self.language == "python" else "postToCppCode"]


#: The pre-grad graph, the post-grad graph, the Python and the C++ code a view links.
_Linked = tuple[Artifact | None, Artifact | None, Artifact | None, Artifact | None]
#: A view's node mapping and what it links (:func:`provenance_sources`).
ViewSources = tuple[Artifact, Artifact | None, Artifact | None, Artifact | None, Artifact | None]


# -- entry points -------------------------------------------------------------


def provenance_view(compile_: Compile) -> ProvenanceView | None:
    """The provenance of a compile as tlparse shows it: the last of each artifact.

    None when the compile logged no node mappings.
    """
    mappings = compile_.artifacts_named(MAPPING_ARTIFACT)
    if not mappings:
        return None
    return _view(mappings[-1], *_linked(compile_.artifacts))


def provenance_views(compile_: Compile) -> list[ProvenanceView]:
    """One view per node mapping, each with the last texts logged before it.

    tlparse shows only the last mapping of a compile, which for a training compile is the
    backward graph's (usually empty, there being no pre-grad graph); this keeps the forward's.
    """
    return [_view(*sources) for sources in provenance_sources(compile_)]


def provenance_sources(compile_: Compile) -> list[ViewSources]:
    """What each view of :func:`provenance_views` is made of, without making it: its node
    mapping and the artifacts it links (pre-grad graph, post-grad graph, Python and C++
    code; None for each not logged).  Views made of the same texts are the same view."""
    sources = []
    for artifact in compile_.artifacts_named(MAPPING_ARTIFACT):
        before = [a for a in compile_.artifacts if a.ordinal < artifact.ordinal]
        sources.append((artifact, *_linked(before)))
    return sources


def _linked(artifacts: Sequence[Artifact]) -> _Linked:
    return (
        _last(artifacts, PRE_GRAD_NAMES),
        _last(artifacts, POST_GRAD_NAMES),
        _last(artifacts, PYTHON_CODE_NAMES),
        _last(artifacts, CPP_CODE_NAMES),
    )


def tlparse_line_offset(pane: Pane, text: str) -> int:
    """What to add to a line number of ours to get tlparse's for the same line of ``text``.

    Graph panes: 0.  C++ wrapper: minus its leading empty lines (tlparse drops them, as the
    ``<pre>`` it shows them in does).  Python output code: tlparse matches lines in its
    highlighted HTML, whose first line is ``<pre style=...>``, and counts from the
    ``# AOT ID:`` line: minus that line's 0-based index, or +1 when there is none.  It is 0
    (Python) and -1 (C++) in every log seen.
    """
    if pane in ("pre", "post"):
        return 0
    lines = _lines(text)
    if pane == "cpp":
        return -_leading_empty(lines)
    aot = _first_index(lines, lambda s: "# AOT ID:" in s)
    return 1 if aot is None else -aot


# -- building -------------------------------------------------------------------


def _view(
    mapping: Artifact,
    pre: Artifact | None,
    post: Artifact | None,
    python: Artifact | None,
    cpp: Artifact | None,
) -> ProvenanceView:
    nodes = NodeMappings.parse(mapping.text())
    kernels = list(nodes.kernel_to_post)
    pre_lines = node_lines(pre.text()) if pre is not None else {}
    post_lines = node_lines(post.text()) if post is not None else {}
    py_lines = python_kernel_lines(python.text(), kernels) if python is not None else {}
    cpp_lines = cpp_kernel_lines(cpp.text(), kernels) if cpp is not None else {}
    line_maps = {
        "preToPost": _node_to_node(nodes.pre_to_post, pre_lines, post_lines),
        "postToPre": _node_to_node(nodes.post_to_pre, post_lines, pre_lines),
        "pyCodeToPost": _kernel_to_node(nodes.kernel_to_post, py_lines, post_lines),
        "postToPyCode": _node_to_kernel(nodes.post_to_kernel, post_lines, py_lines),
        "cppCodeToPost": _kernel_to_node(nodes.kernel_to_post, cpp_lines, post_lines),
        "postToCppCode": _node_to_kernel(nodes.post_to_kernel, post_lines, cpp_lines),
    }
    return ProvenanceView(
        mapping=mapping,
        pre_grad=pre,
        post_grad=post,
        python_code=python,
        cpp_code=cpp,
        mappings=nodes,
        line_maps=line_maps,
        pre_node_lines=pre_lines,
        post_node_lines=post_lines,
        python_kernel_lines=py_lines,
        cpp_kernel_lines=cpp_lines,
    )


def _last(artifacts: Sequence[Artifact], names: Sequence[str]) -> Artifact | None:
    """The last artifact with the first name that occurs at all (tlparse's preference)."""
    for name in names:
        for artifact in reversed(artifacts):
            if artifact.name == name and artifact.payload is not None:
                return artifact
    return None


def node_lines(graph: str) -> dict[str, int]:
    """Node name -> 1-based line in a readable FX graph, by tlparse's rule.

    A line's name is its text before the first ``=`` and then before the first ``:``,
    stripped; blank lines and ``#`` comments have none; a repeated name keeps its last line.
    """
    found: dict[str, int] = {}
    for number, line in enumerate(_lines(graph), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        name = stripped.split("=", 1)[0].split(":", 1)[0].strip()
        if name:
            found[name] = number
    return found


def python_kernel_lines(code: str, kernels: Iterable[str]) -> dict[str, list[int]]:
    """Kernel key -> lines of Python output code that call it, by tlparse's rule.

    Only lines from ``def call(args)`` on count.  A key with a debug handle found in the code
    (the ``# [Provenance debug handles] name:N`` comment) maps to the next line naming the
    kernel; otherwise the key maps to every line naming it.
    """
    lines = _lines(code)
    start = _first_index(lines, lambda s: "def" in s and "call" in s and "(args)" in s) or 0
    found: dict[str, list[int]] = {}
    for key in kernels:
        pure = key.split(":", 1)[0]
        hits: list[int] = []
        if ":" in key:
            at = _next_containing(lines, key, start)
            if at is not None:
                call = _next_containing(lines, pure, at + 1)
                if call is not None:
                    hits = [call + 1]
        if not hits:
            hits = [i + 1 for i in range(start, len(lines)) if pure in lines[i]]
        if hits:
            found[key] = hits
    return found


def cpp_kernel_lines(code: str, kernels: Iterable[str]) -> dict[str, list[int]]:
    """Kernel key -> lines of an AOTInductor C++ wrapper that call it, by tlparse's rule.

    Only lines from ``::run_impl(`` on count.  A key with a debug handle found on a line
    that is no ``def`` / ``static inline void`` definition maps to the next line naming the
    kernel (the name being the key before its last ``:``) that is no ``_xnumel``
    declaration; otherwise the key maps to every line naming the kernel.
    """
    lines = _lines(code)
    start = _first_index(lines, lambda s: "::run_impl(" in s) or 0
    found: dict[str, list[int]] = {}
    for key in kernels:
        pure = key.rsplit(":", 1)[0] if ":" in key else key
        hits: list[int] = []
        if ":" in key:
            for i in range(start, len(lines)):
                stripped = lines[i].strip()
                if (
                    stripped
                    and not stripped.startswith("def")
                    and not stripped.startswith("static inline void")
                    and key in lines[i]
                ):
                    call = _next_containing(lines, pure, i + 1, skip=_XNUMEL_DECL)
                    if call is not None:
                        hits = [call + 1]
                        break
        if not hits:
            hits = [i + 1 for i in range(start, len(lines)) if pure in lines[i]]
        if hits:
            found[key] = hits
    return found


def _node_to_node(
    source: Mapping[str, list[str]], source_lines: dict[str, int], target_lines: dict[str, int]
) -> LineMap:
    result: dict[int, set[int]] = {}
    for node, targets in source.items():
        line = source_lines.get(node)
        if line is None:
            continue
        hits = {target_lines[t] for t in targets if t in target_lines}
        if hits:
            result.setdefault(line, set()).update(hits)
    return _sorted(result)


def _kernel_to_node(
    source: Mapping[str, list[str]],
    kernel_lines: dict[str, list[int]],
    node_lines_: dict[str, int],
) -> LineMap:
    result: dict[int, set[int]] = {}
    for kernel, nodes in source.items():
        hits = {node_lines_[n] for n in nodes if n in node_lines_}
        if not hits:
            continue
        for line in kernel_lines.get(kernel, ()):
            result.setdefault(line, set()).update(hits)
    return _sorted(result)


def _node_to_kernel(
    source: Mapping[str, list[str]],
    node_lines_: dict[str, int],
    kernel_lines: dict[str, list[int]],
) -> LineMap:
    result: dict[int, set[int]] = {}
    for node, kernels in source.items():
        line = node_lines_.get(node)
        if line is None:
            continue
        hits = {n for k in kernels for n in kernel_lines.get(k, ())}
        if hits:
            result.setdefault(line, set()).update(hits)
    return _sorted(result)


# -- small helpers ----------------------------------------------------------------


def _lines(text: str) -> list[str]:
    """Lines as Rust's ``str::lines`` cuts them: on ``\\n``, one ``\\r`` before it dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _leading_empty(lines: Sequence[str]) -> int:
    first = _first_index(lines, lambda s: s != "")
    return len(lines) if first is None else first


def _first_index(
    lines: Sequence[str], predicate: Callable[[str], bool], start: int = 0
) -> int | None:
    for i in range(start, len(lines)):
        if predicate(lines[i]):
            return i
    return None


def _next_containing(
    lines: Sequence[str], needle: str, start: int, skip: re.Pattern[str] | None = None
) -> int | None:
    """Index of the first line from ``start`` containing ``needle`` (and not matching skip)."""
    for i in range(start, len(lines)):
        if needle in lines[i] and (skip is None or not skip.match(lines[i])):
            return i
    return None


def _sorted(result: dict[int, set[int]]) -> LineMap:
    return {line: sorted(targets) for line, targets in sorted(result.items())}


__all__ = [
    "MAPPING_ARTIFACT",
    "MAP_KEYS",
    "ProvenanceView",
    "cpp_kernel_lines",
    "node_lines",
    "provenance_view",
    "provenance_views",
    "python_kernel_lines",
    "tlparse_line_offset",
]


STACK_TRACES_ARTIFACT = "inductor_provenance_tracking_kernel_stack_traces"
# [ \t], not \s: a run of blank lines must not be re-scanned from each of its lines.
_TRACE_FRAME = re.compile(r'^[ \t]*File "(?P<file>[^"]*)"', re.M)


def kernel_stack_traces(compile_: Compile, kernel: str, with_source: bool = True) -> list[str]:
    """Where in the user's code a kernel came from: readable Python tracebacks.

    Read from ``inductor_provenance_tracking_kernel_stack_traces`` (kernel key,
    with or without its ``:N`` debug handle, → tracebacks).  Some logs encode the
    newlines twice (a literal ``\\n``); those are decoded.  Within a traceback the
    frames of the user's code come first, PyTorch's after.  ``with_source=False``
    keeps only the ``File ..., line N, in f`` lines.
    """
    found: list[str] = []
    for artifact in compile_.artifacts:
        if artifact.name != STACK_TRACES_ARTIFACT or artifact.payload is None:
            continue
        value = artifact.json()
        if not isinstance(value, dict):
            continue
        for key, traces in value.items():
            if _kernel_name(str(key)) != kernel or not isinstance(traces, list):
                continue
            for trace in traces:
                text = _readable(str(trace))
                if not with_source:
                    text = "\n".join(line for line in text.split("\n") if 'File "' in line)
                if text not in found:
                    found.append(text)
    return found


def _kernel_name(key: str) -> str:
    """``cpp_fused_relu_0:2`` → ``cpp_fused_relu_0`` (names may hold colons themselves)."""
    head, sep, tail = key.rpartition(":")
    return head if sep and tail.isdigit() else key


def _readable(trace: str) -> str:
    if "\n" not in trace.rstrip("\n") and "\\n" in trace:
        trace = trace.replace("\\n", "\n")
    starts = [m.start() for m in _TRACE_FRAME.finditer(trace)]
    if len(starts) < 2:
        return trace.rstrip("\n")
    frames = [trace[a:b] for a, b in zip(starts, [*starts[1:], len(trace)], strict=True)]
    user = [f for f in frames if "/torch/" not in _frame_file(f)]
    library = [f for f in frames if "/torch/" in _frame_file(f)]
    return "".join(user + library).rstrip("\n")


def _frame_file(frame: str) -> str:
    match = _TRACE_FRAME.search(frame)
    return match.group("file") if match else ""
