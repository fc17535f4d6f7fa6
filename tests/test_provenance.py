"""Provenance line maps: parity with ``tlparse --inductor-provenance`` and robustness.

The parity test compares, per log and per compile, our six line maps with those tlparse
0.4.3 embeds in ``<script id="lineMappings">`` of ``provenance_tracking_<dir>.html``: the
pinned values in tests/data/expected/tlparse/ (tests/tools/tlparse_reference.py) when there
are some, else a live ``tlparse`` run (skipped when tlparse is not installed).  Our lines are
payload lines; :func:`tlparse_line_offset` is the only translation applied.  tlparse's value
lists are compared as sorted sets (ours are sorted and without duplicates).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from sphinx_torchtrace.trace import CompileId, read_log
from sphinx_torchtrace.trace.analyses.provenance import (
    MAP_KEYS,
    Pane,
    ProvenanceView,
    cpp_kernel_lines,
    node_lines,
    provenance_view,
    provenance_views,
    python_kernel_lines,
    tlparse_line_offset,
)
from sphinx_torchtrace.trace.model import Compile
from sphinx_torchtrace.trace.node_mappings import NodeMappings

DATA = Path(__file__).parent / "data"
PINNED = DATA / "expected" / "tlparse"
SINGLE_OP = DATA / "captured" / "single_op_provenance"
TRIGGER = b"inductor_provenance_tracking_node_mappings"
#: The panes each map goes from and to.
MAP_PANES: dict[str, tuple[Pane, Pane]] = {
    "preToPost": ("pre", "post"),
    "postToPre": ("post", "pre"),
    "pyCodeToPost": ("python", "post"),
    "postToPyCode": ("post", "python"),
    "cppCodeToPost": ("cpp", "post"),
    "postToCppCode": ("post", "cpp"),
}

TlMaps = dict[str, dict[str, list[int]]]


def _provenance_logs() -> list[Path]:
    """Every bundled log that carries node mappings (tlparse's own test inputs, ours)."""
    found = []
    for path in sorted(DATA.rglob("*")):
        if PINNED in path.parents or path.suffix not in (".log", ".txt") or not path.is_file():
            continue
        if TRIGGER in path.read_bytes():
            found.append(path)
    return found


def tlparse_dir(compile_id: CompileId) -> str:
    """tlparse's directory name for a compile id: ``-_0_0_0``; ``-_-_-_-`` for no compile."""
    attempt = "-" if compile_id.is_unknown and compile_id.attempt == 0 else compile_id.attempt
    return compile_id.slug.rsplit("_", 1)[0] + f"_{attempt}"


def _merged_compiles(log: Path) -> dict[str, Compile]:
    """One compile per tlparse directory: tlparse merges repeated compile ids into one."""
    groups: dict[str, list[Compile]] = {}
    for c in read_log(log).compiles:
        groups.setdefault(tlparse_dir(c.id), []).append(c)
    merged = {}
    for name, compiles in groups.items():
        artifacts = sorted((a for c in compiles for a in c.artifacts), key=lambda a: a.ordinal)
        merged[name] = Compile(compiles[0].id, 1, compiles[0].first_line, artifacts=artifacts)
    return merged


def _cases() -> list[tuple[Path, str]]:
    cases = []
    for log in _provenance_logs():
        for name, compile_ in _merged_compiles(log).items():
            if provenance_view(compile_) is not None:
                cases.append((log, name))
    return cases


CASES = _cases()


def _params(cases: list[tuple[Path, str]]) -> list[Any]:
    """One pytest param per (log, compile dir); marked ``tlparse`` where no pin exists."""
    return [
        pytest.param(
            log,
            directory,
            id=f"{log.relative_to(DATA)}::{directory}",
            marks=() if _pin_path(log).is_file() else (pytest.mark.tlparse,),
        )
        for log, directory in cases
    ]


def _pin_path(log: Path) -> Path:
    return PINNED / (str(log.relative_to(DATA)) + ".json")


def _empty_maps() -> TlMaps:
    return {key: {} for key in MAP_KEYS}


@cache
def tlparse_maps(log: Path) -> dict[str, TlMaps] | None:
    """tlparse's six maps per compile directory with a provenance page; None: unknown."""
    pin = _pin_path(log)
    if not pin.is_file():
        return run_tlparse(log)
    provenance = json.loads(pin.read_text()).get("provenance")
    if not provenance or provenance.get("exit_code") != 0:
        return None
    pinned = provenance.get("maps", {})
    result = {}
    for page in provenance.get("pages", []):
        name = page[len("provenance_tracking_") : -len(".html")]
        # Pages whose six maps are all empty are not pinned.
        result[name] = pinned[name]["maps"] if name in pinned else _empty_maps()
    return result


def run_tlparse(log: Path) -> dict[str, TlMaps] | None:
    """The maps of a live ``tlparse --inductor-provenance`` run; None without tlparse."""
    if shutil.which("tlparse") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="prov_") as tmp:
        args = [str(log), "-o", tmp, "--no-browser", "--overwrite", "--inductor-provenance"]
        run = subprocess.run(["tlparse", *args], capture_output=True, timeout=300, check=False)
        if run.returncode != 0:
            return None
        result = {}
        for page in Path(tmp).glob("provenance_tracking_*.html"):
            name = page.name[len("provenance_tracking_") : -len(".html")]
            text = page.read_text(encoding="utf-8", errors="replace")
            match = re.search(r'<script id="lineMappings"[^>]*>(.*?)</script>', text, re.S)
            raw: dict[str, Any] = json.loads(match.group(1)) if match else {}
            result[name] = {key: raw.get(key) or {} for key in MAP_KEYS}
        return result


def in_tlparse_numbering(view: ProvenanceView) -> TlMaps:
    """Our maps with lines renumbered as tlparse numbers them, keys as strings."""
    texts = {
        "python": view.python_code.text() if view.python_code else "",
        "cpp": view.cpp_code.text() if view.cpp_code else "",
    }
    panes: tuple[Pane, ...] = ("pre", "post", "python", "cpp")
    offset = {pane: tlparse_line_offset(pane, texts.get(pane, "")) for pane in panes}
    out: TlMaps = {}
    for key, (src, dst) in MAP_PANES.items():
        out[key] = {
            str(line + offset[src]): [t + offset[dst] for t in targets]
            for line, targets in view.line_maps[key].items()
        }
    return out


@pytest.mark.parametrize(("log", "directory"), _params(CASES))
def test_line_maps_match_tlparse(log: Path, directory: str) -> None:
    theirs_by_dir = tlparse_maps(log)
    if theirs_by_dir is None:
        pytest.skip("no pinned tlparse output for this log and no tlparse binary")
    assert directory in theirs_by_dir, "tlparse wrote no provenance page for this compile"
    theirs = {
        key: {line: sorted(set(targets)) for line, targets in theirs_by_dir[directory][key].items()}
        for key in MAP_KEYS
    }
    view = provenance_view(_merged_compiles(log)[directory])
    assert view is not None
    assert in_tlparse_numbering(view) == theirs


def test_parity_covers_the_logs_named_in_the_brief() -> None:
    names = {log.name for log, _ in CASES}
    for expected in (
        "inductor_provenance_aot_cuda_log.txt",
        "inductor_provenance_aot_debug_handle_log.txt",
        "inductor_provenance_aot_log.txt",
        "inductor_provenance_aot_log_old.txt",
        "inductor_provenance_extended_log.txt",
        "inductor_provenance_jit_cuda_log.txt",
        "inductor_provenance_jit_debug_handle_log.txt",
        "inductor_provenance_jit_log.txt",
        "dedicated_log_torch_trace_0ptegd0d.log",
    ):
        assert expected in names


# -- the offsets ------------------------------------------------------------------


def test_offsets() -> None:
    assert tlparse_line_offset("pre", "\n\nx = 1") == 0
    assert tlparse_line_offset("post", "\nx = 1") == 0
    assert tlparse_line_offset("cpp", "\n\n#include <x>\n") == -2
    assert tlparse_line_offset("cpp", "#include <x>\n") == 0
    assert tlparse_line_offset("python", "# AOT ID: ['0_inference']\nimport torch\n") == 0
    assert tlparse_line_offset("python", "\n# hdr\n# AOT ID: ['0']\n") == -2
    assert tlparse_line_offset("python", "import torch\n") == 1


@pytest.mark.parametrize(("log", "directory"), _params(CASES))
def test_code_offset_matches_pinned_pane(log: Path, directory: str) -> None:
    """The code pane tlparse shows is numbered like its maps (pinned pane alignment)."""
    pin = _pin_path(log)
    if not pin.is_file():
        pytest.skip("no pinned tlparse output")
    entry = (json.loads(pin.read_text()).get("provenance") or {}).get("maps", {}).get(directory)
    if entry is None:
        pytest.skip("tlparse's maps are empty for this compile (page not pinned)")
    alignment = entry["panes"]["generatedCode"]["alignment"]
    view = provenance_view(_merged_compiles(log)[directory])
    assert view is not None and view.code is not None
    if alignment.get("source") == "inductor_aot_wrapper_code":
        assert tlparse_line_offset("cpp", view.code.text()) == alignment["offset"]
    else:
        assert alignment.get("source") == "inductor_output_code"
        assert tlparse_line_offset("python", view.code.text()) == alignment["offset"]


# -- the real logs ------------------------------------------------------------------

PROVENANCE_LOG = DATA / "shared" / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log"
JIT_LOG = DATA / "shared" / "tlparse-inputs" / "inputs" / "inductor_provenance_jit_log.txt"
AOT_LOG = DATA / "shared" / "tlparse-inputs" / "inputs" / "inductor_provenance_aot_log.txt"


def test_node_maps_link_kernels_and_nodes() -> None:
    rank = read_log(PROVENANCE_LOG)
    view = provenance_view(rank.compile("[0/0]"))
    assert view is not None and view.language == "python"
    assert view.code is view.python_code and view.code is not None
    assert view.mappings.version == 2.0
    # Every kernel key that tlparse can place is placed on a line that calls that kernel.
    code = view.code.text().split("\n")
    assert view.kernel_lines
    for key, lines in view.kernel_lines.items():
        for line in lines:
            assert key.split(":")[0] in code[line - 1]
    for post, kernels in view.post_to_kernels.items():
        for kernel in kernels:
            assert post in view.kernel_to_post[kernel]
    for pre, posts in view.pre_to_post.items():
        for post in posts:
            assert pre in view.post_to_pre[post]
    # Line maps are node maps seen through the node lines.
    for pre, posts in view.pre_to_post.items():
        lines = [view.post_node_lines[p] for p in posts if p in view.post_node_lines]
        if pre in view.pre_node_lines and lines:
            assert view.line_maps["preToPost"][view.pre_node_lines[pre]] == sorted(set(lines))
    assert view.code_to_post is view.line_maps["pyCodeToPost"]
    assert view.post_to_code is view.line_maps["postToPyCode"]


def test_aot_view_is_cpp() -> None:
    view = provenance_view(read_log(AOT_LOG).compiles[0])
    assert view is not None
    assert view.language == "cpp" and view.code is view.cpp_code
    assert view.line_maps["cppCodeToPost"] and not view.line_maps["pyCodeToPost"]
    assert view.code_to_post is view.line_maps["cppCodeToPost"]


def test_training_compile_keeps_the_forward_in_provenance_views() -> None:
    compile_ = read_log(PROVENANCE_LOG).compile("[0/1]")
    last = provenance_view(compile_)
    assert last is not None and last.empty  # the backward's mapping, as tlparse shows
    views = provenance_views(compile_)
    assert len(views) == 2
    forward, backward = views
    assert not forward.empty and forward.line_maps["preToPost"]
    assert backward.empty
    assert forward.post_grad is not None and backward.post_grad is not None
    assert forward.post_grad.ordinal < forward.mapping.ordinal < backward.post_grad.ordinal


def test_no_mappings_no_view() -> None:
    rank = read_log(DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log")
    assert all(provenance_view(c) is None for c in rank.compiles)
    assert all(provenance_views(c) == [] for c in rank.compiles)


# -- the single operator ------------------------------------------------------------


def _single_op_logs() -> list[Path]:
    return sorted(SINGLE_OP.glob("*.log")) if SINGLE_OP.is_dir() else []


@pytest.mark.skipif(
    not _single_op_logs(),
    reason=f"the single-operator capture {SINGLE_OP.relative_to(DATA)}/*.log is missing",
)
def test_single_operator_maps() -> None:
    """One op (tlparse's viewer is known to fail on it upstream): we still link all three."""
    views = [
        v
        for log in _single_op_logs()
        for c in read_log(log).compiles
        if (v := provenance_view(c)) is not None and not v.empty
    ]
    assert views
    view = views[0]
    assert view.pre_grad is not None and view.post_grad is not None and view.code is not None
    assert len(view.pre_to_post) == 1 and len(view.kernel_to_post) == 1
    ((pre, posts),) = view.pre_to_post.items()
    ((kernel, kernel_posts),) = view.kernel_to_post.items()
    assert len(posts) == 1 and kernel_posts == posts
    post = posts[0]
    pre_line, post_line = view.pre_node_lines[pre], view.post_node_lines[post]
    (code_line,) = view.kernel_lines[kernel]
    assert view.line_maps["preToPost"] == {pre_line: [post_line]}
    assert view.line_maps["postToPre"] == {post_line: [pre_line]}
    assert view.code_to_post == {code_line: [post_line]}
    assert view.post_to_code == {post_line: [code_line]}
    pre_text = view.pre_grad.text().split("\n")[pre_line - 1]
    post_text = view.post_grad.text().split("\n")[post_line - 1]
    assert pre_text.strip().startswith(pre) and post_text.strip().startswith(post)
    assert kernel.rsplit(":", 1)[0] in view.code.text().split("\n")[code_line - 1]


# -- bad input never raises ------------------------------------------------------------


def _log(tmp_path: Path, records: list[tuple[dict[str, Any], str | None]]) -> Path:
    """A synthetic log: envelope + optional payload per record, with correct md5s."""
    out = []
    for i, (envelope, payload) in enumerate(records):
        env = {**envelope, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}
        if payload is not None:
            env["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
        out.append(f"V1121 11:50:48.{i:06d} 5896 torch/x.py:1] {json.dumps(env)}")
        if payload is not None:
            out.extend("\t" + line for line in payload.split("\n"))
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    path.write_text("\n".join(out) + "\n")
    return path


PRE = """class GraphModule(torch.nn.Module):
    def forward(self, x):
        relu = torch.relu(x)
        return (relu,)"""
POST = """class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "f32[4]"):
        relu: "f32[4]" = torch.ops.aten.relu.default(arg0_1)
        return (relu,)"""
CODE = """# AOT ID: ['0_inference']
cpp_fused_relu_0 = async_compile.cpp_pybinding([])
def call(args):
    buf0 = empty()
    # [Provenance debug handles] cpp_fused_relu_0:1
    cpp_fused_relu_0(arg0_1, buf0)
    return (buf0, )"""
GOOD = json.dumps(
    {
        "preToPost": {"relu": ["relu"]},
        "postToPre": {"relu": ["relu"]},
        "cppCodeToPost": {"cpp_fused_relu_0:1": ["relu"]},
        "postToCppCode": {"relu": ["cpp_fused_relu_0:1"]},
        "version": 2.0,
    }
)


def _compile(tmp_path: Path, mapping: str | None, panes: bool = True) -> Compile:
    records: list[tuple[dict[str, Any], str | None]] = []
    if panes:
        records += [
            ({"artifact": {"name": "before_pre_grad_graph", "encoding": "string"}}, PRE),
            ({"artifact": {"name": "after_post_grad_graph", "encoding": "string"}}, POST),
            ({"inductor_output_code": {"filename": "x.py"}}, CODE),
        ]
    records.append(
        (
            {
                "artifact": {
                    "name": "inductor_provenance_tracking_node_mappings",
                    "encoding": "json",
                }
            },
            mapping,
        )
    )
    (compile_,) = read_log(_log(tmp_path, records)).compiles
    return compile_


def test_synthetic_good(tmp_path: Path) -> None:
    view = provenance_view(_compile(tmp_path, GOOD))
    assert view is not None
    assert view.line_maps["preToPost"] == {3: [3]}
    assert view.line_maps["pyCodeToPost"] == {6: [3]}
    assert view.line_maps["postToPyCode"] == {3: [6]}
    assert view.kernel_lines == {"cpp_fused_relu_0:1": [6]}


@pytest.mark.parametrize(
    "mapping",
    [
        None,
        "",
        "{not json",
        "[1, 2]",
        '"text"',
        "null",
        '{"preToPost": 3, "postToPre": [1], "cppCodeToPost": {"k": "relu"}, "version": "2"}',
        '{"preToPost": {"relu": [1, null, {}]}, "postToCppCode": {"relu": [7]}}',
        "[" * 100000,
    ],
)
def test_bad_mapping_gives_empty_maps(tmp_path: Path, mapping: str | None) -> None:
    view = provenance_view(_compile(tmp_path, mapping))
    assert view is not None
    assert view.empty
    assert set(view.line_maps) == set(MAP_KEYS)


def test_missing_panes_give_empty_maps(tmp_path: Path) -> None:
    view = provenance_view(_compile(tmp_path, GOOD, panes=False))
    assert view is not None and view.empty
    assert view.code is None and view.language == "python"
    assert view.pre_to_post == {"relu": ["relu"]}  # the node maps survive


def test_version_1_keys_without_handles() -> None:
    code = (
        "# AOT ID: ['0']\ntriton_poi_0 = k()\ndef call(args):\n"
        "    triton_poi_0.run(a)\n    x\n    triton_poi_0.run(b)"
    )
    assert python_kernel_lines(code, ["triton_poi_0"]) == {"triton_poi_0": [4, 6]}
    assert python_kernel_lines(code, ["missing:3"]) == {}
    assert python_kernel_lines(code, ["triton_poi_0:9"]) == {"triton_poi_0:9": [4, 6]}


def test_cpp_rules() -> None:
    code = (
        "\nstatic inline void kernel_a(int x) {}\nvoid AOTInductorModel::run_impl(\n"
        "    // Provenance debug handles: kernel_a:1\n    int64_t kernel_a_xnumel = 4;\n"
        "    call_kernel_a(buf0);\n    extern_kernels::mm(a, b);\n"
    )
    assert cpp_kernel_lines(code, ["kernel_a:1"]) == {"kernel_a:1": [6]}
    # The name is the key before its *last* colon.
    assert cpp_kernel_lines(code, ["extern_kernels::mm:2"]) == {"extern_kernels::mm:2": [7]}


def test_node_lines_rule() -> None:
    graph = '# c\n  a: "f32" = x\n\n  b = y\n  a = z\n  return (a,)'
    assert node_lines(graph) == {"a": 5, "b": 4, "return (a,)": 6}


def test_node_mappings_parse() -> None:
    parsed = NodeMappings.parse(GOOD)
    assert parsed.valid and parsed.version == 2.0 and not parsed.empty
    assert NodeMappings.parse('{"version": 2.0}').empty
    assert not NodeMappings.parse("nope").valid


def test_line_reached_by_two_kernels_maps_to_both(tmp_path: Path) -> None:
    """tlparse's substring rule puts ``k_1`` on the ``k_10(...)`` line too; there tlparse keeps
    one kernel's nodes ({4: [4]}) and repeats lines in ``postToPyCode``; we keep the union."""
    mapping = json.dumps(
        {
            "cppCodeToPost": {"k_1": ["relu"], "k_10": ["mm"]},
            "postToCppCode": {"relu": ["k_1"], "mm": ["k_10", "k_1"]},
        }
    )
    post = POST.replace(
        "return (relu,)", 'mm: "f32[4]" = torch.ops.aten.mm.default(relu)\n        return (relu,)'
    )
    code = "# AOT ID: ['0']\ndef call(args):\n    k_1(x)\n    k_10(y)"
    records: list[tuple[dict[str, Any], str | None]] = [
        ({"artifact": {"name": "after_post_grad_graph", "encoding": "string"}}, post),
        ({"inductor_output_code": {"filename": "x.py"}}, code),
        (
            {
                "artifact": {
                    "name": "inductor_provenance_tracking_node_mappings",
                    "encoding": "json",
                }
            },
            mapping,
        ),
    ]
    (compile_,) = read_log(_log(tmp_path, records)).compiles
    view = provenance_view(compile_)
    assert view is not None
    assert view.python_kernel_lines == {"k_1": [3, 4], "k_10": [4]}
    assert view.line_maps["pyCodeToPost"] == {3: [3], 4: [3, 4]}
    assert view.line_maps["postToPyCode"] == {3: [3, 4], 4: [3, 4]}


@pytest.mark.parametrize("log", _provenance_logs(), ids=lambda p: str(p.relative_to(DATA)))
def test_every_compile_tlparse_links_has_a_view(log: Path) -> None:
    """No compile directory where tlparse links lines is missed (ours: no view at all)."""
    theirs = tlparse_maps(log)
    if theirs is None:
        pytest.skip("no pinned tlparse output for this log and no tlparse binary")
    linked = {name for name, maps in theirs.items() if any(maps.values())}
    assert linked <= {d for other, d in CASES if other == log}


def test_kernel_stack_traces_are_readable() -> None:
    from sphinx_torchtrace.trace.analyses.provenance import _readable, kernel_stack_traces

    rank = read_log(DATA / "shared" / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log")
    (trace,) = kernel_stack_traces(rank.compile("[0/0]"), "cpp_fused_relu_0")
    assert trace.startswith('  File "/home/user/project/provenance.py", line 21, in forward')
    assert "\n    x = torch.relu(self.fc1(x))" in trace
    (bare,) = kernel_stack_traces(rank.compile("[0/0]"), "cpp_fused_relu_0", with_source=False)
    assert "torch.relu" not in bare and "line 21" in bare
    # tlparse's extended test log encodes the newlines twice
    assert _readable('  File "x.py", line 1\\n  foo()\\n') == '  File "x.py", line 1\n  foo()'
    # user frames first, PyTorch's after
    mixed = (
        '  File "/a/site-packages/torch/nn/m.py", line 5, in f\n'
        '  File "/p/model.py", line 3, in g\n'
    )
    assert _readable(mixed).startswith('  File "/p/model.py"')
