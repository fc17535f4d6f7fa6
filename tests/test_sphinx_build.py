"""Real Sphinx builds of sites with traces: pages, objects, roles, builders.

What a reader notices when it breaks: a missing page, a dead cross-reference,
a warning in their own ``-W`` build, a LaTeX document without the pages.
"""

from __future__ import annotations

import html as html_module
import json
import pickle
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util import texescape

from sphinx_torchtrace.site.naming import break_object_name
from sphinx_torchtrace.site.plan import has_page, plan_trace
from sphinx_torchtrace.trace import Trace, load_trace
from sphinx_torchtrace.trace.analyses.failures import failure_groups

from .conftest import SHARED, SIMPLE_LOG, SiteMaker, generated_pages, inventory

BuiltSite = Callable[..., SphinxTestApp]

#: The traces of the ``multi`` test root, by label.
MULTI_TRACES = {
    "errors": SHARED / "compile_error" / "dedicated_log_torch_trace_fqqib31t.log",
    "training": SHARED / "training" / "dedicated_log_torch_trace_ukjvghtw.log",
    "ranks": SHARED / "tlparse-inputs" / "inputs" / "multi_rank_messy_input",
}


def expected_objects(label: str, trace: Trace) -> dict[str, set[str]]:
    """The object names a reader can link to, written out from the model (not from the plan)."""
    frames, graphs, kernels = set(), set(), set()
    for rank in trace.ranks:
        prefix = f"rank{rank.rank}/" if trace.is_multi_rank else ""
        for c in rank.compiles:
            repeat = f"#{c.occurrence}" if c.occurrence > 1 else ""
            frame = f"{label}/{prefix}{c.id}{repeat}"
            frames.add(frame)
            graph_names = [a.name for a in c.artifacts if has_page(a)]
            kernel_names = [k.name for a in c.artifacts for k in a.kernels]
            for names, out in ((graph_names, graphs), (kernel_names, kernels)):
                for i, name in enumerate(names):
                    n = names[: i + 1].count(name)
                    out.add(f"{frame}/{name}" + (f"#{n}" if n > 1 else ""))
    breaks = {  # one object per distinct graph break of the trace: its id, else its type
        break_object_name(label, g.message.parts[0].key if g.message.parts else g.message.headline)
        for rank in trace.ranks
        for g in failure_groups(rank.compiles)
        if g.category == "graph_break"
    }
    found = {"frame": frames, "graph": graphs, "kernel": kernels}
    return found | ({"gb": breaks} if breaks else {})


def merged_expected(traces: dict[str, Path]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {"frame": set(), "graph": set(), "kernel": set()}
    for label, path in traces.items():
        for role, names in expected_objects(label, load_trace(path)).items():
            out.setdefault(role, set()).update(names)
    return out


def test_simple_site_html_has_no_warning_and_every_object(built_site: BuiltSite) -> None:
    app = built_site("simple", "html")
    assert app.warning.getvalue() == ""
    inv = inventory(app)
    expected = expected_objects("simple", load_trace(SIMPLE_LOG))
    assert {role: set(names) for role, names in inv.items()} == expected
    # the names a reader types, spelled out once
    assert "simple/[0/0]" in inv["frame"]
    assert "simple/[0/0]/dynamo_output_graph" in inv["graph"]
    assert "simple/[0/0]/cpp_fused_relu_0" in inv["kernel"]
    for uri in (u for names in inv.values() for u in names.values()):
        page = uri.split("#", 1)[0]
        assert (app.outdir / page).is_file(), uri


def test_one_page_per_compile_graph_and_kernel(built_site: BuiltSite) -> None:
    app = built_site("multi", "html", confoverrides={"torchtrace_fold_bytes": 0})
    assert app.warning.getvalue() == ""
    traces = {label: load_trace(path) for label, path in MULTI_TRACES.items()}
    compiles = [c for t in traces.values() for r in t.ranks for c in r.compiles]
    graphs = [a for c in compiles for a in c.artifacts if has_page(a)]
    kernels = [k for c in compiles for a in c.artifacts for k in a.kernels]
    # attempts ([3/0_1]) and repeats after torch._dynamo.reset() ([0/0] #2) are pages too
    assert {c.label for c in traces["errors"].ranks[0].compiles} >= {"[3/0_1]", "[0/0] #2"}
    # every compile, graph and kernel planned; a graph identical to an earlier one of its
    # frame, and a rank that repeats another, are shown on the pages of those
    plans = [plan_trace(label, t, "torchtrace", fold_bytes=0) for label, t in traces.items()]
    assert sum(len(p.frames) for p in plans) == len(compiles)
    assert sum(len(f.graphs) for p in plans for f in p.frames) == len(graphs)
    paged = [f for p in plans for f in p.paged_frames]
    assert len(generated_pages(app, "frame-")) == len(paged) < len(compiles)
    own_graphs = [g for f in paged for g in f.graphs if g.same_as is None]
    assert len(generated_pages(app, "graph-")) == len(own_graphs) > 0
    assert len(generated_pages(app, "kernel-")) == sum(len(f.kernels) for f in paged) > 0
    assert len(kernels) > 0
    assert {role: set(names) for role, names in inventory(app).items()} == merged_expected(
        MULTI_TRACES
    )
    assert "errors/[0/0]#2" in inventory(app)["frame"]
    assert "ranks/rank1/[0/0]" in inventory(app)["frame"]
    for docname in generated_pages(app):
        assert (app.outdir / f"{docname}.html").is_file(), docname


def test_frame_role_resolves_with_status_badge(built_site: BuiltSite) -> None:
    app = built_site("simple", "html")
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    links = re.findall(
        r'<a [^>]*href="([^"]*)"[^>]*><span class="([^"]*)">([^<]*)</span></a>', html
    )
    frame_links = [(href, text) for href, classes, text in links if "torchtrace-frame" in classes]
    # the short and the full name both resolve, to the frame page, shown as the compile id
    assert len(frame_links) == 2
    for href, text in frame_links:
        assert href.startswith("torchtrace/simple/frame-0-0.html#")
        assert text == "[0/0]"
    badges = [classes for _, classes, _ in links if "torchtrace-frame" in classes]
    assert all("torchtrace-status-ok" in c and "torchtrace-badge" in c for c in badges)
    graph_links = [href for href, classes, _ in links if "torchtrace-graph" in classes]
    kernel_links = [href for href, classes, _ in links if "torchtrace-kernel" in classes]
    # small graphs and their kernels are folded on the frame page, their objects there
    assert graph_links and graph_links[0].startswith("torchtrace/simple/frame-0-0.html#")
    assert graph_links[0].endswith("dynamo_output_graph")
    assert kernel_links and kernel_links[0].startswith("torchtrace/simple/frame-0-0.html#")
    assert kernel_links[0].endswith("cpp_fused_relu_0")
    page = (app.outdir / "torchtrace/simple/frame-0-0.html").read_text(encoding="utf-8")
    for href in (graph_links[0], kernel_links[0]):
        assert f'id="{href.split("#", 1)[1]}"' in page


def test_frame_role_on_generated_pages_resolves(built_site: BuiltSite) -> None:
    app = built_site("multi", "html")
    index = app.outdir / "torchtrace" / "errors" / "index.html"
    html = index.read_text(encoding="utf-8")
    for status in ("ok", "error", "break", "empty", "missing"):
        assert f"torchtrace-status-{status}" in html, status
    errors = (app.outdir / "errors.html").read_text(encoding="utf-8")
    assert ">[0/0]#2<" in errors and ">[3/0_1]<" in errors
    ranks = (app.outdir / "ranks.html").read_text(encoding="utf-8")
    assert ">rank1/[0/0]<" in ranks


def test_unknown_compile_id_warns(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        pages={
            "index.rst": (Path(__file__).parent / "roots/test-simple/index.rst").read_text()
            + "\nNo such compile: :torchtrace:frame:`[9/9]`.\n"
        },
    )
    warnings = app.warning.getvalue()
    assert "index.rst" in warnings
    assert "[9/9]" in warnings
    assert len(warnings.strip().splitlines()) == 1


def test_myst_page(built_site: BuiltSite) -> None:
    app = built_site("myst", "html")
    assert app.warning.getvalue() == ""
    inv = inventory(app)
    assert inv["frame"].keys() == {"mysimple/[0/0]", "mysimple/[-/-]"}
    html = (app.outdir / "index.html").read_text(encoding="utf-8")
    assert "torchtrace-status-ok" in html
    assert 'href="torchtrace/mysimple/index.html"' in html
    # :no-source: reached the generated pages: graphs keep file and line, not user code
    assert ", code: " in SIMPLE_LOG.read_text(encoding="utf-8")
    root = Path(app.outdir) / "torchtrace" / "mysimple"  # graphs folded on the frame page
    published = "".join(
        html_module.unescape(p.read_text(encoding="utf-8")) for p in root.rglob("*.html")
    )
    assert "# File: " in published
    assert ", code: " not in published


@pytest.mark.parametrize("buildername", ["dirhtml", "singlehtml", "latex", "text"])
def test_other_builders_have_no_warning(built_site: BuiltSite, buildername: str) -> None:
    app = built_site("simple", buildername)
    assert app.warning.getvalue() == ""
    out = list(Path(app.outdir).rglob("*"))
    assert out


def test_latex_holds_every_page(built_site: BuiltSite) -> None:
    app = built_site("multi", "latex")
    assert app.warning.getvalue() == ""
    tex = next(Path(app.outdir).glob("*.tex")).read_text(encoding="utf-8")
    tex = tex.replace("\\sphinxtorchtracebreak{}", "")  # where a long name may break
    pages = generated_pages(app)
    assert any("/graph-" in p for p in pages) and any("/kernel-" in p for p in pages)
    for docname in pages:
        title = app.env.titles[docname].astext()
        assert texescape.escape(title) in tex, (docname, title)


def test_text_builder_writes_generated_pages(built_site: BuiltSite) -> None:
    app = built_site("simple", "text")
    frame = Path(app.outdir) / "torchtrace" / "simple" / "frame-0-0.txt"
    assert "[0/0]" in frame.read_text(encoding="utf-8")


def test_linkcheck_finds_no_broken_link(built_site: BuiltSite) -> None:
    # no network in tests: external links (Perfetto, PyTorch docs) are left out
    app = built_site("simple", "linkcheck", confoverrides={"linkcheck_ignore": [r"https?://"]})
    assert app.warning.getvalue() == ""
    results = [
        json.loads(line)
        for line in (Path(app.outdir) / "output.json").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    assert [r for r in results if r["status"] == "broken"] == []
    assert {r["status"] for r in results} <= {"working", "unchecked", "ignored"}


def test_parallel_build_gives_the_same_site(built_site: BuiltSite) -> None:
    serial = built_site("multi", "html")
    parallel = built_site("multi", "html", parallel=2)
    assert parallel.warning.getvalue() == ""
    assert inventory(parallel) == inventory(serial)

    def html_files(app: SphinxTestApp) -> set[str]:
        return {p.relative_to(app.outdir).as_posix() for p in Path(app.outdir).rglob("*.html")}

    assert html_files(parallel) == html_files(serial)
    # cross-references resolved in the workers too
    errors = (Path(parallel.outdir) / "errors.html").read_text(encoding="utf-8")
    assert ">[0/0]#2<" in errors


def test_parsed_trace_is_not_pickled(built_site: BuiltSite) -> None:
    app = built_site("multi", "html")
    raw = (Path(app.doctreedir) / "environment.pickle").read_bytes()
    assert b"sphinx_torchtrace.trace" not in raw
    env = pickle.loads(raw)
    objects = env.domaindata["torchtrace"]["objects"]
    assert objects
    for key, entry in objects.items():
        assert all(type(v) is str for v in (*key, *entry)), (key, entry)
