"""Compile regions and kernel keys on real logs.

``tests/data/captured/regions`` (``tests/capture/regions.py``, torch 2.13 CPU): a nested
compile region called four times (forward and backward through Inductor), then regional
Inductor compiling two annotated regions (``subgraph_name``).  tlparse's own
``subgraph_name.log`` (its test input for grouping by ``subgraph_name``) and its
``simple.log`` (Triton kernels with ``# kernel path:`` comments) are read as they are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.trace import RankTrace, load_trace
from sphinx_torchtrace.trace.analyses.regions import compile_regions, tritonparse_name
from sphinx_torchtrace.trace.compile_id import CompileId

from .conftest import DATA, SHARED, page_words, warnings_of

REGIONS = DATA / "captured" / "regions" / "dedicated_log_torch_trace_w_k0uwsk.log"
TLPARSE = SHARED / "tlparse-inputs"
SUBGRAPH_NAME = TLPARSE / "from-index-meta-pytorch-newer" / "inputs" / "subgraph_name.log"
TRITON = TLPARSE / "inputs" / "simple.log"


@cache
def _rank(path: Path) -> RankTrace:
    return load_trace(path).ranks[0]


def test_a_region_called_four_times_is_one_region_reused_three_times() -> None:
    c = _rank(REGIONS).compile("[0/0]")
    [graph] = c.artifacts_named("dynamo_output_graph")
    assert graph.region_calls == {"subgraph_0": 4}
    found = compile_regions(c)
    assert found is not None
    assert [(u.identifier, u.calls, u.reused, u.graph.line) for u in found.reused] == [
        ("subgraph_0", 4, 3, 284)
    ]
    backward = c.artifacts_named("aot_backward_graph")[0].region_calls
    assert backward == {"partitioned_bw_subgraph_0_0": 1, "partitioned_bw_subgraph_0_1": 3}
    # why two backward subgraphs: torch logged a second backward variant (line 932)
    [variant] = found.variants
    assert (variant.forward, variant.backward, variant.variants) == (
        "subgraph_0",
        "bw_subgraph_0_1",
        2,
    )
    assert variant.artifact.line == 932 and found.backward_count("subgraph_0") == 2
    assert {"new_variant", "explanation", "suggested_action"} <= set(variant.other_fields)


def test_kernels_inside_a_repeated_subgraph_count_its_calls() -> None:
    forward = _rank(REGIONS).compile("[0/0]").artifacts_named("inductor_output_code")[0]
    kernels = {k.name: k for k in forward.kernels}
    fused = kernels["cpp_fused_add_le_relu_sin_0"]
    assert fused.launch_lines == [109, 123]  # one line in each subgraph function
    assert fused.subgraphs == ["partitioned_fw_subgraph_0_1", "partitioned_fw_subgraph_0_0"]
    assert fused.launch_reach == [3, 1] and fused.calls == 4  # four blocks, four launches
    assert kernels["extern_kernels.mm"].calls == 4
    assert kernels["cpp_fused_sum_1"].calls == 1  # in the wrapper's own call
    found = compile_regions(_rank(REGIONS).compile("[0/0]"))
    assert found is not None
    assert [(f.function, f.calls) for f in found.functions] == [
        ("partitioned_fw_subgraph_0_1", 3),
        ("partitioned_fw_subgraph_0_0", 1),
        ("partitioned_bw_subgraph_0_0", 1),
        ("partitioned_bw_subgraph_0_1", 3),
    ]


def test_records_are_grouped_under_their_subgraph_name() -> None:
    found = compile_regions(_rank(REGIONS).compile("[1/0]"))
    assert found is not None
    assert [g.name for g in found.groups] == [
        "__marked_inductor_submod1",
        "__marked_inductor_submod0",
    ]
    for group in found.groups:  # forward and backward of each region, with their kernels
        codes = [a for a in group.artifacts if a.name == "inductor_output_code"]
        assert len(codes) == 2 and len(group.kernels) == 2
    theirs = compile_regions(_rank(SUBGRAPH_NAME).compile("[0/0]"))
    assert theirs is not None
    assert [(g.name, [(a.name, a.line) for a in g.artifacts]) for g in theirs.groups] == [
        ("repeated_subgraph0", [("fx_graph_runnable", 3)]),
        ("partitioned_bw_subgraph_1_0", [("fx_graph_runnable", 5)]),
    ]


def test_kernel_paths_are_read_and_tritonparse_names_its_compiles() -> None:
    code = _rank(TRITON).compile("[0/0]").artifacts_named("inductor_output_code")[0]
    paths = {k.name: k.path for k in code.kernels if k.kind != "extern"}
    assert paths["triton_poi_fused_native_dropout_0"] == (
        "/tmp/tmprds_hch0/ke/ckedh2vjam5uo7wobyr5yq2et3clblzbzgykujgmjbmkj5uyimpl.py"
    )
    assert all(paths.values())
    # tritonparse's own cases (tests/cpu/test_kernel_attribution.py)
    assert tritonparse_name(CompileId(None, 0, 1, 0)) == "f0_fc1_a0_cai-"
    assert tritonparse_name(CompileId(5, 3, 2, 1)) == "f3_fc2_a1_cai5"
    assert tritonparse_name(CompileId()) is None


@pytest.fixture(scope="module")
def site(built_site: Callable[..., SphinxTestApp]) -> SphinxTestApp:
    return built_site("regions", "html")


def _page(site: SphinxTestApp, trace: str, contains: str) -> str:
    """The text of the one page of a trace's folder that holds ``contains``."""
    pages = [
        text
        for path in sorted((site.outdir / "torchtrace" / trace).rglob("*.html"))
        if contains in (text := page_words(path))
    ]
    assert pages, contains
    return pages[0]


def test_the_frame_page_says_the_regions_and_their_reuse(site: SphinxTestApp) -> None:
    assert warnings_of(site) == ""
    page = _page(site, "regions", "Compile regions")
    assert (
        "subgraph_0 is called 4 times in dynamo_output_graph (line 284): one traced region, "
        "reused 3 times; its backward traced 2 times (2 variants, "
        "invoke_subgraph_backward_duplicate line 932)." in page
    )
    # torch's record of the second backward, its tangents and its other fields
    assert (
        "subgraph_0 : another backward graph, bw_subgraph_0_1 , 2 for this identifier now "
        "( invoke_subgraph_backward_duplicate , line 932); its tangents: " in page
    )
    assert "suggested_action" in page
    assert "partitioned_fw_subgraph_0_1 3 places cpp_fused_add_le_relu_sin_0" in page
    assert "extern, 4 calls" in page  # mm: two lines, four calls
    glance = page_words(site.outdir / "torchtrace" / "regions" / "index.html")
    assert re.search(
        r"Compile regions: subgraph_0 called 4 times in \S+ \(one traced region, reused 3 "
        r"times; 2 backward variants\); 2 subgraphs compiled by regional Inductor in \S+ "
        r"\( ?__marked_inductor_submod1 ?, __marked_inductor_submod0 ?\)",
        glance,
    ), glance[:3000]


def test_subgraph_names_appear_on_the_pages(site: SphinxTestApp) -> None:
    page = _page(site, "subgraph-name", "Compile regions")
    assert "repeated_subgraph0 : 1 artifact, line 3 of the log" in page
    assert "partitioned_bw_subgraph_1_0 : 1 artifact, line 5 of the log" in page
    assert "fx_graph_runnable [repeated_subgraph0]" in page  # the artifacts table tells them
    regional = _page(site, "regions", "__marked_inductor_submod0 : 28 artifacts")
    assert "output code 2 [__marked_inductor_submod0]" in regional  # the kernels' code


def test_a_kernel_page_carries_its_path_and_tritonparse_name(site: SphinxTestApp) -> None:
    page = _page(site, "triton", "Kernel path:")
    assert (
        "Kernel path: /tmp/tmprds_hch0/ke/ckedh2vjam5uo7wobyr5yq2et3clblzbzgykujgmjbmkj5uyimpl.py"
        in page
    )
    assert "tritonparse: f0_fc0_a0_cai-.ndjson , kernel triton_poi_fused_native_dropout_0" in page
    index = (site.outdir / "searchindex.js").read_text(encoding="utf-8")
    terms = json.loads(index[index.index("(") + 1 : index.rindex(")")])["terms"]
    # a tritonparse file name, a kernel file's hash, a profiler's kernel name: each found
    for word in ("f0_fc0_a0_cai", "ckedh2vjam5uo7wobyr5yq2et3clblzbzgykujgmjbmkj5uyimpl"):
        assert word in terms, word
