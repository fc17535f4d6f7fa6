"""Graph breaks as objects: each distinct break of a trace is a ``gb`` object of the
``torchtrace`` domain (``run/GB0025``), in ``objects.inv``, linked by the ``gb`` role, and
listed with every other trace's on the ``torchtrace-graph-breaks`` page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from sphinx_torchtrace.site.naming import break_object_name
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.failures import failure_groups

from .conftest import SHARED, SiteMaker, inventory, warnings_of

GRAPH_BREAKS = SHARED / "graph_breaks" / "dedicated_log_torch_trace_051e7f1c.log"

PAGE = """Breaks
======

.. torchtrace:: @DATA@/shared/graph_breaks/dedicated_log_torch_trace_051e7f1c.log
   :name: gb

The print: :torchtrace:gb:`gb/GB0059`; the explicit one: :torchtrace:gb:`GB0025`.

All of them:

.. torchtrace-graph-breaks::
"""


def _text(path: Path) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", path.read_text("utf-8"))))


def test_break_object_names() -> None:
    assert break_object_name("run", "GB0025") == "run/GB0025"
    name = break_object_name("run", "Call to `torch._dynamo.graph_break()`")
    assert name.startswith("run/gb/") and re.fullmatch(r"run/gb/[a-z0-9-]+", name)


def test_each_distinct_break_is_an_object_linked_by_its_role(
    make_site: SiteMaker,
) -> None:
    trace = load_trace(GRAPH_BREAKS)
    ids = {
        p.registry_id
        for r in trace.ranks
        for g in failure_groups(r.compiles)
        if g.category == "graph_break"
        for p in g.message.parts[:1]
        if p.registry_id
    }
    assert {"GB0025", "GB0059"} <= ids
    app = make_site("simple", pages={"index.rst": PAGE})
    assert "WARNING" not in warnings_of(app), warnings_of(app)  # every role resolved
    objects = inventory(app)["gb"]
    assert set(objects) == {f"gb/{i}" for i in ids}
    assert all(uri.startswith("torchtrace/gb/index.html#") for uri in objects.values())
    out = Path(app.outdir)
    index = (out / "index.html").read_text(encoding="utf-8")
    for target in ("gb/GB0059", "gb/GB0025"):
        anchor = objects[target].split("#", 1)[1]
        assert f'href="torchtrace/gb/index.html#{anchor}"' in index
        assert f'id="{anchor}"' in (out / "torchtrace/gb/index.html").read_text("utf-8")
    listed = _text(out / "index.html")
    assert "Call to `torch._dynamo.graph_break()` (GB0025): gb/GB0025" in listed
    assert "Failed to trace builtin operator (GB0059): gb/GB0059" in listed


def _words(blocks: object) -> str:
    """Every string of a page's blocks, joined (what a reader would read)."""
    out: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)
        elif hasattr(value, "__dataclass_fields__"):
            for name in value.__dataclass_fields__:
                walk(getattr(value, name))

    walk(blocks)
    return " ".join(out)


def test_the_installed_registry_adds_todays_wording_and_hints(tmp_path: Path) -> None:
    from sphinx_torchtrace.site.pages.overview import overview_page
    from sphinx_torchtrace.site.plan import PageSettings, plan_trace
    from sphinx_torchtrace.trace.analyses.break_registry import load_registry

    registry = tmp_path / "graph_break_registry.json"
    registry.write_text(
        json.dumps(
            {
                "GB0059": [
                    {
                        "Gb_type": "Unsupported builtin operator",
                        "Context": "builtin {fn}",
                        "Explanation": "Dynamo cannot trace {fn}",
                        "Hints": [
                            "Avoid calling builtin `{fn}`.",
                            "Move the call out of the compiled code.",
                        ],
                    }
                ],
                "GB9999": "not a list",
            }
        ),
        encoding="utf-8",
    )
    loaded = load_registry(registry)
    assert loaded is not None and "GB9999" not in loaded.entries
    plan = plan_trace("gb", load_trace(GRAPH_BREAKS), "torchtrace")
    plain = _words(overview_page(plan, PageSettings()).blocks)
    words = _words(overview_page(plan, PageSettings(break_registry=loaded)).blocks)
    assert "The installed PyTorch calls it" in words and "Unsupported builtin operator" in words
    assert "Move the call out of the compiled code." in words
    assert "{fn}" not in words  # templates are not hints
    assert "installed PyTorch" not in plain  # without it, the log's text alone
    assert load_registry(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("[" * 100_000, encoding="utf-8")
    assert load_registry(tmp_path / "bad.json") is None


def test_the_distinct_list_counts_every_graph_break(tmp_path: Path) -> None:
    """Every graph-break event of a trace is in one entry of the list, counted once: the
    entries' counts add up to the figure the glance gives (nothing hidden, nothing twice)."""
    from sphinx_torchtrace.site.pages.overview import overview_page
    from sphinx_torchtrace.site.plan import PageSettings, plan_trace
    from sphinx_torchtrace.trace.analyses.graph_breaks import break_counts

    kinds = SHARED.parent / "corpus" / "graph_break_kinds"
    for log in [GRAPH_BREAKS, *kinds.glob("*.log.gz")]:
        trace = load_trace(log)
        plan = plan_trace("t", trace, "torchtrace")
        words = _words(overview_page(plan, PageSettings()).blocks)
        listed = words.split("Distinct graph breaks", 1)[1].split("Distinct compile errors")[0]
        counted = sum(int(n) for n in re.findall(r": (\d+) times?\b", listed))
        expected = sum(break_counts(failure_groups(r.compiles)).graph_breaks for r in trace.ranks)
        assert counted == expected > 0, (log.name, counted, expected)


def test_a_frame_page_links_its_break_and_where_its_compilation_started(
    make_site: SiteMaker,
) -> None:
    """From a frame's failure, one click to the break among the distinct ones (every place
    it happened) and one to the stack-trie entry where the compilation started; both land."""
    app = make_site("simple", pages={"index.rst": PAGE})
    assert "WARNING" not in warnings_of(app), warnings_of(app)
    out = Path(app.outdir)
    gb_uris = set(inventory(app)["gb"].values())
    overview = (out / "torchtrace/gb/index.html").read_text("utf-8")
    frames = sorted((out / "torchtrace/gb").glob("frame-*.html"))
    linked_breaks = linked_starts = 0
    for page in frames:
        text = page.read_text("utf-8")
        if 'id="failures"' not in text:
            continue
        for href in re.findall(r'href="(index\.html#[^"]+)"', text):
            anchor = href.split("#", 1)[1]
            assert f'id="{anchor}"' in overview, (page.name, anchor)  # every link lands
            if anchor.startswith("start-"):
                linked_starts += 1
            elif f"torchtrace/gb/{href}" in gb_uris:
                linked_breaks += 1
    assert linked_breaks >= 3 and linked_starts >= 3, (linked_breaks, linked_starts)
