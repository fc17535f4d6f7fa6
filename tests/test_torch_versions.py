"""Logs of torch 2.14 and 2.15 (``tests/capture/newer_torch.py``, cold and warm) build,
and the pages say what their records say.

The expected facts come from the records themselves, read here by a reader of a few lines
(an envelope line, then its payload lines starting with a tab), not from our model: the
compile ids, the records under each ``subgraph_name``, a region's ``invoke_subgraph`` calls
in Dynamo's graph, torch's backward-variant records, the kernels a repeated subgraph
launches, the compile a worker's report names in its payload and the sidecar a failure
names.  tlparse 0.4.3's view of the same logs is pinned in ``tests/data/expected/tlparse``
and held by ``test_tlparse_parity.py``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.trace import RankTrace, load_trace
from sphinx_torchtrace.trace.analyses.regions import compile_regions
from sphinx_torchtrace.trace.analyses.workers import compile_jobs

from .conftest import DATA, build_once, copy_testroot, page_words, warnings_of

CAPTURED = DATA / "captured"
VERSIONS = ("t214", "t215")
LOGS = [CAPTURED / f"newer_torch_{v}" / f"{run}.log" for v in VERSIONS for run in ("cold", "warm")]
IDS = [f"{p.parent.name.removeprefix('newer_torch_')}-{p.stem}" for p in LOGS]
_ENVELOPE = re.compile(r"^[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]*\] (\{.*)$")
_INVOKE = re.compile(r"invoke_subgraph\(\w+, '(\w+)'")
_DEF = re.compile(r"^def (\w+)\(args\):$")
_LAUNCH = re.compile(r"^\s+(cpp_fused_\w+|extern_kernels\.\w+)\(")
_SUBGRAPH_CALL = re.compile(r"= (partitioned_\w+)\(")


# -- the oracle: the log's records as written ---------------------------------------------


@dataclass
class Rec:
    line: int
    envelope: dict[str, Any]
    payload: str

    @property
    def kind(self) -> str:
        return next(k for k in self.envelope if k not in ("frame_id", "rank"))

    @property
    def name(self) -> str:
        inner = self.envelope.get("artifact")
        return str(inner["name"]) if isinstance(inner, dict) else self.kind

    @property
    def label(self) -> str | None:
        e = self.envelope
        if "frame_id" not in e:
            return None
        attempt = f"_{e['attempt']}" if e.get("attempt") else ""
        return f"[{e['frame_id']}/{e['frame_compile_id']}{attempt}]"


@cache
def records(path: Path) -> list[Rec]:
    found: list[Rec] = []
    payload: list[str] = []
    for number, text in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if text.startswith("\t"):
            payload.append(text[1:])
            continue
        match = _ENVELOPE.match(text)
        if match:
            if found:
                found[-1].payload = "\n".join(payload)
            payload = []
            found.append(Rec(number, json.loads(match.group(1)), ""))
    if found:
        found[-1].payload = "\n".join(payload)
    return found


def named(path: Path, name: str) -> Iterator[Rec]:
    return (r for r in records(path) if r.name == name)


def expected_launches(code: str) -> dict[str, int]:
    """Each kernel's launches per run of an output code: its lines in ``call`` once, its
    lines in a subgraph function once per run of that function (the runs of each caller,
    ``call`` or another subgraph function, times its calls there)."""
    launches: dict[str, list[str]] = {"call": []}
    calls: dict[str, Counter[str]] = {"call": Counter()}  # caller -> callee -> calls
    function = ""
    for text in code.split("\n"):
        head = _DEF.match(text)
        if head:
            function = head.group(1)
            launches[function], calls[function] = [], Counter()
            continue
        if text.startswith("    def call(self, args):"):
            function = "call"
            continue
        if text and not text[0].isspace():
            function = ""
        if function:
            launch = _LAUNCH.match(text)
            launches[function] += [launch.group(1)] if launch else []
            calls[function].update(_SUBGRAPH_CALL.findall(text))

    def runs(fn: str) -> int:
        if fn == "call":
            return 1
        return sum(runs(caller) * n[fn] for caller, n in calls.items() if n[fn])

    counted: Counter[str] = Counter()
    for fn, kernels in launches.items():
        for kernel in kernels:
            counted[kernel] += runs(fn)
    return dict(counted)


@cache
def rank(path: Path) -> RankTrace:
    return load_trace(path).ranks[0]


# -- the model against the records ---------------------------------------------------------


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_each_log_reads_clean_with_the_compile_ids_it_logged(log: Path) -> None:
    r = rank(log)
    assert load_trace(log).diagnostics == [] and r.diagnostics == []
    logged = list(dict.fromkeys(x.label for x in records(log) if x.label))
    assert [c.label for c in r.compiles if not c.id.is_unknown] == sorted(logged, key=logged.index)
    assert len(logged) == 10  # regions, regional Inductor, 3 x step + resume, 2 workers
    version = next(named(log, "torch_version")).payload
    assert json.loads(version)["pytorch_version"].startswith(
        "2.14." if "t214" in str(log) else "2.15."
    )
    assert all(a.known for c in r.compiles for a in c.artifacts)  # every kind read


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_records_under_a_subgraph_name_are_grouped_as_logged(log: Path) -> None:
    theirs: dict[str, list[int]] = {}
    for x in records(log):
        if "subgraph_name" in x.envelope and x.kind != "chromium_event":
            theirs.setdefault(x.envelope["subgraph_name"], []).append(x.line)
    assert set(theirs) == {"__marked_inductor_submod0", "__marked_inductor_submod1"}
    found = compile_regions(rank(log).compile("[1/0]"))
    assert found is not None
    assert {g.name: [a.line for a in g.artifacts] for g in found.groups} == theirs


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_region_calls_and_kernels_of_repeated_subgraphs_as_logged(log: Path) -> None:
    [graph] = [x for x in named(log, "dynamo_output_graph") if x.label == "[0/0]"]
    calls = Counter(_INVOKE.findall(graph.payload))
    assert calls == {"subgraph_0": 4, "subgraph_1": 2}  # block four times, head twice
    c = rank(log).compile("[0/0]")
    found = compile_regions(c)
    assert found is not None
    assert {u.identifier: u.calls for u in found.reused} == dict(calls)
    codes = [x for x in named(log, "inductor_output_code") if x.label == "[0/0]"]
    ours = c.artifacts_named("inductor_output_code")
    assert [a.line for a in ours] == [x.line for x in codes] and len(codes) == 2
    for mine, theirs in zip(ours, codes, strict=True):
        expected = expected_launches(theirs.payload)
        assert 4 in expected.values()  # a kernel of block's subgraph: four calls
        assert {k.name: k.calls for k in mine.kernels} == expected


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_backward_variants_are_read_as_logged(log: Path) -> None:
    logged = list(named(log, "invoke_subgraph_backward_duplicate"))
    if log.stem == "warm":  # AOT autograd's cache hit: nothing traced, no variant logged
        assert logged == []
        found = compile_regions(rank(log).compile("[0/0]"))
        assert found is not None and found.variants == []
        return
    [dup] = logged
    data = json.loads(dup.payload)
    found = compile_regions(rank(log).compile(str(dup.label)))
    assert found is not None
    [variant] = found.variants
    assert (variant.forward, variant.backward, variant.variants, variant.artifact.line) == (
        data["forward_identifier"],
        data["backward_identifier"],
        data["num_variants_for_identifier"],
        dup.line,
    )
    assert variant.other_fields["new_variant"] == data["new_variant"]  # kept, not dropped
    assert found.backward_count(data["forward_identifier"]) == 2


@pytest.mark.parametrize("log", LOGS, ids=IDS)
def test_worker_reports_sit_under_the_compile_their_payload_names(log: Path) -> None:
    reports = list(named(log, "compile_worker_status"))
    assert reports and all(x.label is None for x in reports)  # no compile id in the envelope
    r = rank(log)
    for x in reports:
        where = [c for c in r.compiles if any(a.line == x.line for a in c.artifacts)]
        assert [c.label for c in where] == [f"[{json.loads(x.payload)['compile_id']}]"]
    jobs = compile_jobs(r.compile("[4/0]"))
    assert [(j.job_id, [p.line for p in j.reports]) for j in jobs] == [
        (0, [x.line for x in reports])
    ]


# -- the pages ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> SphinxTestApp:
    """One build of the four logs (each its own trace)."""
    srcdir = copy_testroot("regions", tmp_path_factory.mktemp("versions") / "src")
    logs = srcdir / "logs"
    page = "Newer torch\n===========\n\n"
    for log, name in zip(LOGS, IDS, strict=True):
        (logs / name).mkdir(parents=True)
        shutil.copy(log, logs / name / log.name)
        page += f".. torchtrace:: logs/{name}/{log.name}\n   :name: {name}\n\n"
    (srcdir / "index.rst").write_text(page, encoding="utf-8")
    return build_once(srcdir)


def _pages(site: SphinxTestApp, name: str) -> dict[str, str]:
    folder = site.outdir / "torchtrace" / name
    return {p.stem: page_words(p) for p in sorted(folder.glob("*.html"))}


def test_the_four_logs_build_without_a_warning(site: SphinxTestApp) -> None:
    assert warnings_of(site) == ""
    for name in IDS:
        assert len(_pages(site, name)) == 12  # overview, 10 compiles, records without one


@pytest.mark.parametrize(("log", "name"), list(zip(LOGS, IDS, strict=True)), ids=IDS)
def test_the_pages_say_what_the_records_say(site: SphinxTestApp, log: Path, name: str) -> None:
    pages = _pages(site, name)
    glance = pages["index"].split("This is the")[0]
    [graph] = [x for x in named(log, "dynamo_output_graph") if x.label == "[0/0]"]
    frame = pages["frame-0-0"]
    # the regions and their reuse, on the frame page and at a glance
    assert (
        f"subgraph_0 is called 4 times in dynamo_output_graph (line {graph.line}): one "
        "traced region, reused 3 times." in frame
    )
    reuse = (
        f"subgraph_1 is called 2 times in dynamo_output_graph (line {graph.line}): one "
        "traced region, reused 1 time"
    )
    variants = "; 2 backward variants" if log.stem == "cold" else ""
    for dup in named(log, "invoke_subgraph_backward_duplicate"):  # the cold start's only
        reuse += (
            "; its backward traced 2 times (2 variants, invoke_subgraph_backward_duplicate "
            f"line {dup.line})"
        )
        data = json.loads(dup.payload)
        said = f"subgraph_1 : another backward graph, {data['backward_identifier']} , 2 for"
        assert said in frame
    assert reuse + "." in frame
    assert re.search(
        r"Compile regions: subgraph_0 called 4 times in \S+ \(one traced region, reused 3 "
        rf"times\); subgraph_1 called 2 times in \S+ \(one traced region, reused 1 time"
        rf"{variants}\); 2 subgraphs compiled by regional Inductor in \S+",
        glance,
    ), glance
    # the subgraph names with their records
    for sub in ("__marked_inductor_submod0", "__marked_inductor_submod1"):
        n = sum(
            1
            for x in records(log)
            if x.envelope.get("subgraph_name") == sub and x.kind != "chromium_event"
        )
        assert f"{sub} : {n} artifacts" in pages["frame-1-0"]
    # the compile workers: reports under the compile their payload names, the dead sidecar
    reports = list(named(log, "compile_worker_status"))
    longest = max(json.loads(x.payload)["elapsed_s"] for x in reports)
    [death] = named(log, "compile_worker_sidecar_death")
    pid, code = re.match(r"sidecar pid=(\d+) returncode=(-?\d+)", death.payload).groups()  # type: ignore[union-attr]
    [failed] = [
        x
        for x in named(log, "compilation_metrics")
        if f"sidecar (pid {pid})" in str(json.loads(x.payload or "{}").get("fail_reason"))
        or f"sidecar (pid {pid})" in json.dumps(x.envelope)
    ]
    failed_id = failed.envelope["compilation_metrics"]["compile_id"]
    assert re.search(
        rf"Compile workers: 1 job of \S+ still running when reported \(the longest "
        rf"{longest} s, line {reports[-1].line}\); the compile worker sidecar \(pid {pid}\) "
        rf"died with return code {code} \(line {death.line}\), failing \S+",
        glance,
    ), glance
    assert "The watchdog reported 1 job of this compile still running" in pages["frame-4-0"]
    assert f"frame-{failed_id.replace('/', '-')}" == "frame-5-0"
    assert (
        f"The compile worker sidecar (pid {pid}) exited with return code {code} while "
        f"compiles waited on it (line {death.line} of the log). This compile's failure "
        "names that process" in pages["frame-5-0"]
    )
    # recompiles, the graph break, the caches
    breaks = len(list(named(log, "dynamo_graph_break_reason")))
    recompiles = len(list(named(log, "recompile_reasons")))
    assert f"Graph breaks: {breaks} graph breaks" in glance and breaks == 3
    assert f"Recompiles: {recompiles} recompiles" in glance and recompiles == 4
    results = Counter(  # a bundled FX graph's load is no lookup (test_bundled_cache.py)
        x.name.rsplit("_cache_", 1)[1]
        for x in records(log)
        if "_cache_" in x.name and x.name != "fx_graph_bundled_cache_hit"
    )
    said = ", ".join(
        f"{results[r]} {r}{'s' if r == 'hit' else 'es'}"
        for r in ("hit", "miss", "bypass")
        if results[r]
    )
    assert f"Cache lookups: {said}" in glance
    assert ("hit" in results) == (log.stem == "warm") and ("miss" in results) == (
        log.stem == "cold"
    )


# -- nested regions --------------------------------------------------------------------------

NESTED = [CAPTURED / f"nested_regions_{v}" / "cold.log" for v in VERSIONS]


@pytest.mark.parametrize("log", NESTED, ids=VERSIONS)
def test_a_region_nested_in_another_counts_once_per_call_of_it(log: Path, tmp_path: Path) -> None:
    """``inner`` is called three times in ``outer``'s body, ``outer`` twice: Dynamo prints
    the three calls once, inside ``outer``'s class; the output code runs ``inner``'s kernel
    six times, and the pages say six calls, as the kernel counts do."""
    [graph] = [x for x in named(log, "dynamo_output_graph") if x.label == "[0/0]"]
    calls = Counter(_INVOKE.findall(graph.payload))
    assert calls == {"subgraph_1": 2, "subgraph_0": 3}
    lines = graph.payload.split("\n")
    holder = next(i for i, t in enumerate(lines) if t.strip().startswith("class subgraph_1("))
    assert all(
        i > holder for i, t in enumerate(lines) if "'subgraph_0'" in t
    )  # every call of subgraph_0 is in subgraph_1's body
    [forward, _backward] = [x for x in named(log, "inductor_output_code") if x.label == "[0/0]"]
    expected = expected_launches(forward.payload)
    relu = next(k for k in expected if "relu" in k and k.startswith("cpp_fused"))
    assert expected[relu] == 6  # inner's kernel: three calls in each of outer's two
    c = rank(log).compile("[0/0]")
    ours = {k.name: k.calls for k in c.artifacts_named("inductor_output_code")[0].kernels}
    assert ours == expected
    found = compile_regions(c)
    assert found is not None
    [use] = [u for u in found.reused if u.identifier == "subgraph_0"]
    assert (use.calls, use.runs, use.reused, use.inside) == (3, 6, 5, ("subgraph_1", 2))
    # the pages
    shutil.copy(log, tmp_path / log.name)
    app = build_once(_one_log_root(tmp_path, log.name))
    assert warnings_of(app) == ""
    folder = app.outdir / "torchtrace" / "nested"
    assert (
        f"subgraph_0 is called 3 times in dynamo_output_graph (line {graph.line}), in the "
        "body of subgraph_1 , which runs 2 times: 6 calls per run of the graph; one traced "
        "region, reused 5 times." in page_words(folder / "frame-0-0.html")
    )
    assert "subgraph_0 3 (6 per run) 5" in page_words(folder / "frame-0-0.html")  # the table
    glance = page_words(folder / "index.html").split("This is the")[0]
    assert re.search(
        r"subgraph_0 called 6 times in \S+ \(3 in each of subgraph_1 's calls; one traced "
        r"region, reused 5 times\)",
        glance,
    ), glance


def _one_log_root(tmp_path: Path, log: str) -> Path:
    srcdir = copy_testroot("regions", tmp_path / "src")
    (srcdir / "logs").mkdir()
    shutil.copy(tmp_path / log, srcdir / "logs" / log)
    page = f"Nested\n======\n\n.. torchtrace:: logs/{log}\n   :name: nested\n"
    (srcdir / "index.rst").write_text(page, encoding="utf-8")
    return srcdir


# -- record kinds a newer torch may add ------------------------------------------------------


def test_a_record_kind_we_do_not_know_keeps_its_fields_on_the_page(tmp_path: Path) -> None:
    """A torch 2.15 log with two records of kinds no torch we know logs (as a newer one
    may): their envelope fields and payload are shown as logged, none dropped, no warning."""
    log = CAPTURED / "newer_torch_t215" / "cold.log"
    lines = log.read_text(encoding="utf-8").split("\n")
    at = next(i for i, t in enumerate(lines) if '"compile_worker_status"' in t)
    prefix = lines[at].split("] ")[0] + "] "
    payload = '{"job_id": 7, "queue": [3, 1]}'
    md5 = hashlib.md5(payload.encode()).hexdigest()
    ids = {"frame_id": 4, "frame_compile_id": 0, "attempt": 0}
    added = [
        prefix
        + json.dumps({"worker_heartbeat": {"slot": 3, "phase": "link"}, **ids, "has_payload": md5}),
        "\t" + payload,
        prefix + json.dumps({"worker_census": {"alive": 2, "note": "<b>x</b>"}, **ids}),
    ]
    (tmp_path / "added.log").write_text("\n".join(lines[:at] + added + lines[at:]), "utf-8")
    rank = load_trace(tmp_path / "added.log").ranks[0]
    assert not rank.diagnostics
    kinds = {a.event: a for a in rank.compile("[4/0]").artifacts if not a.known}
    assert set(kinds) == {"worker_heartbeat", "worker_census"}
    app = build_once(_one_log_root(tmp_path, "added.log"))
    assert warnings_of(app) == ""
    page = page_words(app.outdir / "torchtrace" / "nested" / "frame-4-0.html")
    page = page.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
    assert 'The record\'s own fields: {"phase": "link", "slot": 3}' in page
    assert '{"job_id": 7, "queue": [3, 1]}' in page
    assert 'worker_census 0 B {"alive": 2, "note": "<b>x</b>"}' in page  # no payload: the cell
    raw = (app.outdir / "torchtrace" / "nested" / "frame-4-0.html").read_text("utf-8")
    assert "<b>x</b>" not in raw  # data, never markup
