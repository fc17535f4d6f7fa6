"""Properties of every site, checked on every bundled trace in real HTML builds (furo).

A feature is done when it holds on every log, not on the one it was written for: these
tests build sites of every trace under ``tests/data`` (the capture corpus, the shared
logs, the scenario captures and tlparse's own test logs) and check what a reader relies on:

- every internal ``href``/``src``, and every ``#anchor``, resolves;
- the first screen's figures agree with each other (glance, header, failures table) and
  with tlparse 0.4.3 on the same log (compile ids, the status of each id, one failure row
  of tlparse per graph break or compile error of ours that the metrics record);
- a row of the failures table counts exactly the compile ids it lists, each listed under
  its own break;
- nothing logged is hidden: every artifact of every compile is named on the page that
  shows its compile;
- ``[-/-]`` (records outside any compilation) is no compilation: not in the sidebar, not
  in previous/next, linked from the overview;
- ``objects.inv``, read back by Sphinx's own intersphinx reader, holds exactly the entries
  the site wrote, each of our roles, under a name no other has, pointing into the site;
  and every distinct graph break of a trace is an object of its own.

The traces past ``BIG_BYTES`` build in a site each, the others in a few sites of about the
same size (:func:`shards`).  Marked ``corpus``: minutes, run by ``nox -s tests`` (and CI),
left out of the version matrix.
"""

from __future__ import annotations

import html
import json
import posixpath
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from io import StringIO
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.site.count_words import counts_text, kinds_text
from sphinx_torchtrace.site.naming import break_object_name, is_object_name
from sphinx_torchtrace.site.plan import RANK_TABS, TracePlan, plan_trace
from sphinx_torchtrace.site.rank_sharing import rank_classes
from sphinx_torchtrace.trace import CompileId, Trace, load_trace
from sphinx_torchtrace.trace.analyses.failures import failure_groups
from sphinx_torchtrace.trace.analyses.glance import triage
from sphinx_torchtrace.trace.analyses.graph_breaks import break_events
from sphinx_torchtrace.trace.analyses.naming import rank_number
from sphinx_torchtrace.trace.analyses.status import frame_status

from .conftest import DATA, copy_testroot, write_page
from .test_sphinx_all_traces import good_traces
from .tools.inventory import inventory_problems, read_inventory

pytestmark = pytest.mark.corpus

PINNED = DATA / "expected" / "tlparse"
CORPUS = DATA / "corpus"
#: Traces larger than this (bytes of log, decompressed) build apart, in a site of their own.
BIG_BYTES = 8_000_000
#: Not a trace folder of one run: each log is a trace of its own.
_HREF = re.compile(r'\s(?:href|src)="([^"]*)"')
_ID = re.compile(r'\sid="([^"]*)"')


def corpus_traces() -> list[str]:
    """The capture corpus: a folder of rank logs is one trace, any other log one each."""
    found: list[str] = []
    if not CORPUS.is_dir():
        return found
    for folder in sorted(p for p in CORPUS.rglob("*") if p.is_dir()):
        logs = sorted(p for p in folder.iterdir() if _is_log(p))
        if any("_rank_" in p.name for p in logs):
            found.append(folder.relative_to(DATA).as_posix())
        else:
            found += [p.relative_to(DATA).as_posix() for p in logs]
    return found


def _is_log(path: Path) -> bool:
    return (
        path.is_file()
        and path.name.startswith("dedicated_log_torch_trace")
        and (path.suffix == ".log" or path.name.endswith(".log.gz"))
    )


def _size(rel: str) -> int:
    """Bytes of a trace's logs, decompressed (a gzip file's last 4 bytes say how many)."""
    path = DATA / rel
    return sum(_log_bytes(p) for p in (path.iterdir() if path.is_dir() else [path]))


def _log_bytes(path: Path) -> int:
    if not path.name.endswith(".gz"):
        return path.stat().st_size
    with path.open("rb") as f:
        f.seek(-4, 2)
        return int.from_bytes(f.read(4), "little")


def all_traces() -> list[str]:
    return [*corpus_traces(), *good_traces()]


@dataclass
class Site:
    """A built site and, per trace, its label, model and plan."""

    outdir: Path
    traces: dict[str, str]  # label -> path relative to tests/data
    models: dict[str, Trace]
    plans: dict[str, TracePlan]
    warnings: str


def _build(tmp: Path, labels: dict[str, str]) -> Site:
    """One site of the traces ``labels`` names (label -> path relative to tests/data)."""
    srcdir = copy_testroot("simple", tmp / "site")
    index = "All traces\n==========\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in labels)
    write_page(srcdir, "index.rst", index)
    for name, rel in labels.items():
        page = f"{name}\n{'=' * len(name)}\n\n.. torchtrace:: @DATA@/{rel}\n   :name: {name}\n"
        write_page(srcdir, f"{name}.rst", page)
    app = SphinxTestApp(
        "html",
        srcdir=srcdir,
        freshenv=True,
        confoverrides={"html_theme": "furo", "show_warning_types": True},
        status=StringIO(),
        warning=StringIO(),
    )
    try:
        app.build()
    finally:
        app.cleanup()
    models = {n: load_trace(DATA / rel) for n, rel in labels.items()}
    plans = {n: plan_trace(n, models[n], "torchtrace") for n in labels}
    return Site(Path(app.outdir), labels, models, plans, app.warning.getvalue())


@cache
def shards() -> dict[str, dict[str, str]]:
    """The sites the corpus is built in: each big trace alone, the others in ``SMALL_SITES``
    sites of about the same bytes of log (the largest first, each to the lightest site).

    Not one site of every trace: a theme's sidebar holds the whole site's toctree, resolved
    for every page (pages x toctree), so the 94 traces under 8 MB took 877 s in one site
    and take 271 s in eight (2 CPUs, with pytest-xdist).
    Labels are the traces' places in :func:`all_traces`, the same in every shard.
    """
    labels = {f"t{i:03d}": rel for i, rel in enumerate(all_traces())}
    sizes = {label: _size(rel) for label, rel in labels.items()}
    sites: dict[str, dict[str, str]] = {f"small-{i}": {} for i in range(SMALL_SITES)}
    weight = dict.fromkeys(sites, 0)
    for label in sorted(labels, key=lambda label: -sizes[label]):
        if sizes[label] > BIG_BYTES:
            sites[f"big-{label}"] = {label: labels[label]}
            continue
        lightest = min(weight, key=lambda name: weight[name])
        sites[lightest][label] = labels[label]
        weight[lightest] += sizes[label]
    return {name: dict(sorted(traces.items())) for name, traces in sites.items() if traces}


#: How many sites the traces up to ``BIG_BYTES`` are built in.
SMALL_SITES = 8


@pytest.fixture(scope="module", params=sorted(shards()))
def site(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Site:
    name: str = request.param
    return _build(tmp_path_factory.mktemp(f"invariants-{name}"), shards()[name])


# -- reading the output -----------------------------------------------------------------------


@cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def _ids(path: Path) -> frozenset[str]:
    return frozenset(html.unescape(i) for i in _ID.findall(_read(path)))


def _article(page: str) -> str:
    """The page's own content, without the theme's sidebars."""
    start = page.find('<article role="main"')
    end = page.find("</article>", start)
    return page[start:end] if start >= 0 else page


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _pages(site: Site) -> Iterator[Path]:
    yield from sorted(site.outdir.rglob("*.html"))


def dead_links(site: Site) -> list[str]:
    dead: list[str] = []
    resolved: dict[tuple[Path, str], bool] = {}  # sidebars repeat their links page after page
    for page in _pages(site):
        for raw in set(_HREF.findall(_read(page))):
            key = (page.parent, raw) if not raw.startswith("#") else (page, raw)
            ok = resolved.get(key)
            if ok is None:
                ok = resolved[key] = _resolves(page, html.unescape(raw))
            if not ok:
                dead.append(f"{page.relative_to(site.outdir)} -> {raw}")
    return dead


def _resolves(page: Path, url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or url.startswith(("mailto:", "javascript:")):
        return True
    target = page if not parts.path else page.parent / unquote(parts.path)
    target = Path(posixpath.normpath(target.as_posix()))
    if target.is_dir():
        target = target / "index.html"
    if not target.exists():
        return False
    return not parts.fragment or target.suffix != ".html" or unquote(parts.fragment) in _ids(target)


def _overview(site: Site, label: str) -> str:
    return _read(site.outdir / site.plans[label].index_docname.__add__(".html"))


def _glance(site: Site, label: str) -> str:
    page = _article(_overview(site, label))
    start = page.find('id="at-a-glance"')
    return _text(page[start : page.find("</section>", start)])


def _section(page: str, anchor: str) -> str:
    start = page.find(f'id="{anchor}"')
    if start < 0:
        return ""
    depth, i = 0, page.rfind("<section", 0, start)
    for match in re.finditer(r"<(/?)section\b", page[i:]):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return page[i : i + match.end()]
    return page[i:]


def _tlparse_pin(rel: str) -> dict | None:  # type: ignore[type-arg]
    pin = PINNED / f"{rel}.json"
    return json.loads(pin.read_text()) if pin.is_file() else None


def _rank_logs(rel: str) -> list[str]:
    path = DATA / rel
    if path.is_file():
        return [rel]
    return sorted(p.relative_to(DATA).as_posix() for p in path.iterdir() if _is_log(p))


# -- the invariants -------------------------------------------------------------------------


def check_site(site: Site) -> None:
    assert site.traces, "no trace built"
    assert unexpected_warnings(site) == []
    assert dead_links(site) == []
    check_inventory(site)
    for label in site.traces:
        check_figures(site, label)
        check_failure_rows(site, label)
        check_nothing_hidden(site, label)
        check_outside_group(site, label)


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def unexpected_warnings(site: Site) -> list[str]:
    """Warnings but the model's own diagnostics of damaged inputs (tlparse's test logs),
    the publish check's ``torchtrace.path`` (their machines' paths, as logged) and
    ``torchtrace.secret`` for a trace whose logs hold values that look secret (planted)."""
    expected = {"path"} | {d.subtype for trace in site.models.values() for d in trace.diagnostics}
    if any(r.secrets.found for trace in site.models.values() for r in trace.ranks):
        expected.add("secret")
    return [
        line
        for line in _ANSI.sub("", site.warnings).splitlines()
        if "WARNING" in line
        and not any(line.rstrip().endswith(f"[torchtrace.{kind}]") for kind in expected)
    ]


def check_inventory(site: Site) -> None:
    """intersphinx reads what the site wrote and nothing else; every name is a name (one
    token, nothing a role or objects.inv reads as syntax); distinct breaks, distinct names."""
    assert inventory_problems(site.outdir, site.traces) == []
    names = [name for role, name in read_inventory(site.outdir) if role.startswith("torchtrace")]
    assert [n for n in names if not is_object_name(n)] == []
    for label, trace in site.models.items():
        keys = {
            g.message.first_part.key
            for rank in trace.ranks
            for g in failure_groups(rank.compiles)
            if g.category == "graph_break"
        }
        assert len({break_object_name(label, k) for k in keys}) == len(keys), label


def check_figures(site: Site, label: str) -> None:
    """The glance, the header and the failures table say the same numbers, from
    :func:`triage`; and they are tlparse's."""
    trace = site.models[label]
    t = triage(trace)
    glance = _glance(site, label)
    assert f"({t.compile_ids} compile id" in glance, (label, glance)
    assert f"{t.attempts} attempt" in glance, (label, glance)
    header = _text(_section(_article(_overview(site, label)), "header") or "")
    if not trace.is_multi_rank and header:
        assert f"{t.compile_ids} compile id" in header, (label, header)
    if t.graph_breaks:
        figures = (t.graph_breaks, t.graph_break_types, *t.graph_break_places)
        said = counts_text(figures[0], "graph break", *figures[1:])
        assert said.split(" (")[0] in glance, (label, glance)
        assert kinds_text(*figures) in glance, (label, glance)
    else:
        assert "Graph breaks: none" in glance, (label, glance)
    if t.errors:
        assert f"{t.errors} compile error" in glance, (label, glance)
    else:
        assert "Compile errors: none" in glance, (label, glance)
    # the distinct graph breaks list every break once: their counts add up to the glance's
    failures = _text(_section(_article(_overview(site, label)), "failures-and-restarts") or "")
    listed = sum(int(n) for n in re.findall(r": (\d+) times?[ ;]", failures))
    # several ranks: a tab per class of alike ranks, its first rank's breaks standing for
    # each rank's (every rank of a class logged the same breaks)
    classes = rank_classes(trace) if trace.is_multi_rank else [[None]]
    by_number = {rank_number(trace, r): r for r in trace.ranks}
    firsts = [triage(by_number[c[0]]) if c[0] is not None else t for c in classes]
    assert listed == sum(f.graph_breaks for f in firsts[:RANK_TABS]), (label, listed)
    assert t.graph_breaks == sum(
        f.graph_breaks * len(c) for f, c in zip(firsts, classes, strict=True)
    ), (label, t.graph_breaks)
    # tlparse, log by log: one failure row per event of ours, the same compile ids, statuses
    for rank, rel in zip(trace.ranks, _rank_logs(site.traces[label]), strict=False):
        pin = _tlparse_pin(rel)
        if pin is None or pin.get("exit_code") != 0 or pin.get("failures_count") is None:
            continue
        # every row of tlparse's failures table is one event of ours; ours has, besides,
        # the breaks no restart repeats (tlparse reads the metrics only)
        mine = triage(rank)
        events = break_events([c for c in rank.compiles if not c.id.is_unknown])
        assert mine.graph_breaks + mine.errors + mine.restarts == len(events)
        assert sum(e.in_metrics for e in events) == pin["failures_count"], (rel, mine)
        assert all(e.failure.kind == "graph_break" for e in events if not e.in_metrics)
        theirs = {str(CompileId.parse(k).frame) for k in pin["compile_ids"] or {} if k != "[-/-]"}
        ours = {str(c.id.frame) for c in rank.compiles if not c.id.is_unknown}
        assert ours == theirs, rel
        for cid, status in (pin.get("statuses") or {}).items():
            assert frame_status(rank, CompileId.parse(cid)) == status, (rel, cid)


_ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.DOTALL)
_CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.DOTALL)


def check_failure_rows(site: Site, label: str) -> None:
    """Each row counts the compile ids it lists (``×k`` a compile's repeats, ``and N more``
    the rest); each listed id has an event of that row's break."""
    trace = site.models[label]
    section = _section(_article(_overview(site, label)), "failures-and-restarts")
    rows = [_CELL.findall(r) for r in _ROW.findall(section)]
    rows = [r for r in rows if len(r) == 4]
    # one tab per class of alike ranks (they logged the same failures): its first rank's
    shown = [r.rank for r in site.plans[label].ranks if r.same_as is None][:RANK_TABS]
    if not trace.is_multi_rank:
        shown = trace.ranks
    groups = [g for rank in shown for g in failure_groups(rank.compiles)]
    assert len(rows) == len(groups), label
    for cells, group in zip(rows, groups, strict=True):
        count = int(_text(cells[2]))
        assert count == group.count, (label, _text(cells[1]))
        places = cells[3]
        listed = len(re.findall(r"<a\s", places.split("; at ")[0]))
        more = re.search(r"and (\d+) more", _text(places))
        repeats = sum(int(k) - 1 for k in re.findall(r"×(\d+)", _text(places)))
        assert listed + repeats + (int(more.group(1)) if more else 0) == count, (label, places)
        for e in group.events:
            assert e.message.key == group.key and e.location == group.location


def check_nothing_hidden(site: Site, label: str) -> None:
    """Every artifact of a compile with a page is a row of that page's artifacts table; its
    metrics records and failure records are on that page, named by their line in the log;
    chromium events are a download of the overview."""
    plan = site.plans[label]
    for frame in plan.frames:
        shown = frame.same_as if frame.same_as is not None else frame
        page = _article(_read(site.outdir / f"{shown.docname}.html"))
        table = _section(page, "artifacts")
        rows = Counter(  # "inductor_output_code (backward)", "fx_graph_runnable#2",
            # "after_joint_graph#2 [subgraph_0]" (regional Inductor): the name
            re.split(r" \(| \[|#\d+", _text(cells[0]))[0]
            for r in _ROW.findall(table)
            if (cells := _CELL.findall(r))
        )
        logged = Counter(a.name for a in frame.compile.artifacts)
        missing = logged - rows
        assert not missing, (label, frame.compile.label, dict(missing))
        if frame.same_as is None:  # a shared page names its own rank's lines
            text = _text(page)
            for record in [*frame.compile.metrics, *frame.compile.failures]:
                assert f"line {record.line} of the log" in text, (label, frame.compile.label)
    if any(rank.chromium_events for rank in site.models[label].ranks):
        assert "chromium-events" in _overview(site, label), label


def check_outside_group(site: Site, label: str) -> None:
    """``[-/-]`` is linked from the overview, never a neighbour nor a toctree entry."""
    plan = site.plans[label]
    outside = [f for f in plan.paged_frames if f.compile.id.is_unknown]
    overview = _overview(site, label)
    for frame in outside:
        name = posixpath.basename(frame.docname) + ".html"
        assert name in _section(_article(overview), "compile-directory"), label
    for frame in plan.listed_frames:
        page = _read(site.outdir / f"{frame.docname}.html")
        for nav in re.findall(r'class="[^"]*torchtrace-prev-next[^"]*".*?</div>', page, re.S):
            for other in outside:
                assert posixpath.basename(other.docname) + ".html" not in nav, label


# -- tests ----------------------------------------------------------------------------------


def test_the_corpus_is_wide() -> None:
    corpus = corpus_traces()
    if not corpus:
        pytest.skip("no capture corpus in this checkout")
    assert len(corpus) >= 20
    assert all(_tlparse_pin(log) is not None for t in corpus for log in _rank_logs(t))


def test_every_trace_is_in_one_site() -> None:
    built = [rel for traces in shards().values() for rel in traces.values()]
    assert sorted(built) == sorted(all_traces())
    assert len(set(built)) == len(built)


def test_every_site_invariant_holds_on_every_trace(site: Site) -> None:
    check_site(site)
