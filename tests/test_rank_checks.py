"""Many ranks: the checks across ranks tlparse makes on its landing page, and more (one
merged timeline, ranks grouped by the shapes their graphs were compiled for)."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest

from sphinx_torchtrace.site.divergence_words import DIVERGENCE_WORDS, divergence_words
from sphinx_torchtrace.site.rank_group_words import rank_group_words
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.chromium import chromium_events_all_ranks
from sphinx_torchtrace.trace.analyses.divergence import (
    DIVERGENCE_ASPECTS,
    divergence,
    diverging_aspects,
)
from sphinx_torchtrace.trace.analyses.rank_groups import (
    SCHEDULE_ARTIFACTS,
    CacheLookups,
    CollectiveDiffers,
    Collectives,
    GraphsLogged,
    InputsDiffer,
    RankGroup,
    RankGroupFacts,
    ReferenceShapes,
    ShapesDiffer,
)

from .conftest import DATA, SiteMaker, warnings_of

GLOO = DATA / "captured" / "multi_rank_gloo"


def test_one_timeline_holds_every_rank_one_process_each(make_site: SiteMaker) -> None:
    trace = load_trace(GLOO)
    events = json.loads("".join(chromium_events_all_ranks(trace)))
    names = [e for e in events if e.get("ph") == "M"]
    assert [(e["pid"], e["args"]["name"]) for e in names] == [(0, "rank 0"), (1, "rank 1")]
    for rank in trace.ranks:
        mine = [e for e in events if e.get("ph") != "M" and e["pid"] == rank.rank]
        assert len(mine) == len(rank.chromium_events)  # every event, on its rank's row
    page = f".. torchtrace:: {'@DATA@/captured/multi_rank_gloo'}\n   :name: ddp\n"
    app = make_site("simple", pages={"index.rst": "Ranks\n=====\n\n" + page})
    assert "WARNING" not in warnings_of(app)
    out = Path(app.outdir)
    (merged,) = out.glob("_downloads/*/chromium-events-all-ranks.json")
    written = json.loads(merged.read_text("utf-8"))  # paths rewritten as on every page
    assert [(e["pid"], e.get("name"), e.get("ts")) for e in written] == [
        (e["pid"], e.get("name"), e.get("ts")) for e in events
    ]
    overview = (out / "torchtrace/ddp/index.html").read_text("utf-8")
    assert "All ranks in one timeline" in overview and "chromium-events-all-ranks.json" in overview


DIVERGENT = DATA / "corpus" / "ddp_4ranks_divergent"


def test_ranks_are_grouped_by_the_shapes_their_graphs_were_compiled_for() -> None:
    """The capture's rank 3 gets a batch of 6 where the others get 8: a divergence of its
    own, naming the compile ids and inputs that differ and what rank 0 had; rank 2, which
    differs in compile ids only, is with the ranks whose shapes agree."""
    groups = divergence(load_trace(DIVERGENT)).shape_groups
    assert [g.ranks for g in groups] == [[0, 1, 2], [3]]
    assert groups[0].facts == ReferenceShapes()
    assert groups[1].facts == ShapesDiffer(
        0,
        tuple(
            InputsDiffer(label, (("L_x_ f32[6, 16]", "f32[8, 16]"),))
            for label in ("[0/0]", "[1/0]")
        ),
    )
    assert rank_group_words(groups[1].facts) == (
        "[0/0] L_x_ f32[6, 16] (rank 0: f32[8, 16]); [1/0] L_x_ f32[6, 16] (rank 0: f32[8, 16])"
    )
    assert divergence(load_trace(DATA / "corpus" / "ddp_4ranks")).shape_groups == []
    assert divergence(load_trace(GLOO)).shape_groups == []


def test_the_overview_says_the_shapes_diverge() -> None:
    from sphinx_torchtrace.site.pages.overview import triage_blocks
    from sphinx_torchtrace.site.plan import PageSettings, plan_trace

    plan = plan_trace("ddp", load_trace(DIVERGENT), "torchtrace")
    said = repr(triage_blocks(plan, PageSettings()))
    assert "Diverging graph shapes" in said and "f32[6, 16] (rank 0: f32[8, 16])" in said


def test_a_compile_id_is_compared_over_its_attempts_and_its_functions() -> None:
    """The capture's rank 2 compiles other functions under [0/0] and [1/0]. Its [0/0]
    broke, then its restart compiled an empty graph: the id is *empty*, as rank 2's page,
    the glance and tlparse say (the statuses check said *break*, the first attempt's). And
    the ranks' [1/0] are three different functions, which the checks never said."""
    from sphinx_torchtrace.site.pages.overview import triage_blocks
    from sphinx_torchtrace.site.plan import PageSettings, plan_trace

    d = divergence(load_trace(DIVERGENT))
    assert [(x.label, x.ranks_by_status) for x in d.status_splits] == [
        ("[0/0]", {"ok": [0, 1, 3], "empty": [2]}),
        ("[1/0]", {"ok": [0, 1, 3], "break": [2]}),
    ]
    assert [(x.label, x.ranks_by_function) for x in d.function_splits] == [
        ("[0/0]", {"forward": [0, 1, 3], "<lambda>": [2]}),
        ("[1/0]", {"reduce_stats": [0, 3], "reduce_stats_and_max": [1], "forward_with_break": [2]}),
    ]
    said = inline_texts(
        triage_blocks(plan_trace("ddp", load_trace(DIVERGENT), "torchtrace"), PageSettings())
    )
    assert (
        "[1/0]: reduce_stats on ranks 0, 3; reduce_stats_and_max on rank 1; "
        "forward_with_break on rank 2" in said
    )
    assert "[0/0]: ok on ranks 0-1, 3; empty on rank 2" in said
    for alike in (DATA / "corpus" / "ddp_4ranks", GLOO):
        assert divergence(load_trace(alike)).function_splits == []
    # a frame page compares a compile with the first rank's of its id only where both
    # compiled one function (rank 2's <lambda> was "logged differently" from forward)
    plan = plan_trace("ddp", load_trace(DIVERGENT), "torchtrace")
    compared = {
        (f.rank.rank, f.compile.label): f.counterpart is not None
        for r in plan.ranks
        for f in plan.own_frames(r)
    }
    assert compared[(3, "[0/0]")] and compared[(3, "[1/0]")]  # forward, reduce_stats
    assert not compared[(2, "[0/0]")] and not compared[(1, "[1/0]")]
    from sphinx_torchtrace.site.pages.overview import overview_page

    from .test_hostile_values import page_text

    text = page_text(overview_page(plan, PageSettings()))
    assert "4 ranks in 4 classes: no two ranks logged alike" in text
    assert "rank 3: differs in ddp/rank3/[0/0], ddp/rank3/[1/0]\n" in text  # no "other compiles"


def inline_texts(blocks: object) -> str:
    """Every text of some page blocks, one piece a line."""
    from .test_hostile_values import block_strings

    assert isinstance(blocks, list)
    return "\n".join(text for b in blocks for text in block_strings(b))


INPUTS = DATA / "shared" / "tlparse-inputs"


def test_collective_schedules_are_grouped_as_tlparse_groups_them() -> None:
    """tlparse 0.4.3 --all-ranks-html on the same logs: "Collective operation sequence
    groups: Ranks 0, 2 / Ranks 1" (schedule), "5, 6 / 0-4" (runtime), "1 / 0" (exec order)."""
    expected = {
        "inputs/multi_rank_schedule": [[0, 2], [1]],
        "inputs/multi_rank_runtime": [[0, 1, 2, 3, 4], [5, 6]],
        "graph_exec_order_tests": [[0], [1]],
    }
    for folder, groups in expected.items():
        d = divergence(load_trace(INPUTS / folder))
        got = d.schedule_groups["inductor_collective_schedule"]
        assert sorted(g.ranks for g in got) == sorted(groups), folder
    runtime = divergence(load_trace(INPUTS / "inputs/multi_rank_runtime"))
    # tensor metadata: shapes, dtypes and strides (tlparse also splits ranks whose runtime
    # estimates alone differ; estimates are not metadata)
    assert [g.ranks for g in runtime.schedule_groups["inductor_runtime_and_tensor_meta"]] == [
        [0, 1, 2, 3],
        [4],
        [5, 6],
    ]
    order = divergence(load_trace(INPUTS / "graph_exec_order_tests"))
    assert [g.ranks for g in order.schedule_groups["graph_execution"]] == [[0], [1]]
    assert divergence(load_trace(INPUTS / "inputs/multi_rank_logs")).schedule_groups == {}


def test_copied_logs_that_claim_one_rank_are_told_apart_by_their_file_names() -> None:
    trace = load_trace(INPUTS / "inputs/multi_rank_schedule")  # every log says "rank": 0
    assert [r.rank for r in trace.ranks] == [0, 1, 2]
    said = [d.message for d in trace.diagnostics if d.subtype == "rank"]
    assert said == [
        f"the log says it is rank 0; its file name says rank {n}, which is used" for n in (1, 2)
    ]


def test_summary_gives_the_rank_classes_and_what_diverges() -> None:
    from .test_cli import run

    folder = INPUTS / "inputs/multi_rank_logs"
    text = run("summary", folder).stdout
    assert "rank classes:   3: 0, 2 | 1 | 3\n" in text  # ranks 0 and 2 logged the same
    diverging = "compile ids, functions, statuses, cache patterns"  # kernel vs fn: no shapes
    assert f"diverging:      {diverging}\n" in text
    data = json.loads(run("summary", folder, "--json").stdout)
    assert data["rank_classes"] == [[0, 2], [1], [3]]
    assert (
        "collective schedules"
        in json.loads(run("summary", INPUTS / "inputs/multi_rank_schedule", "--json").stdout)[
            "divergence"
        ]
    )


def test_divergence_can_fail_a_ci_docs_build(make_site: SiteMaker) -> None:
    page = "Ranks\n=====\n\n.. torchtrace:: @DATA@/corpus/ddp_4ranks_divergent\n   :name: ddp\n"
    quiet = make_site("simple", pages={"index.rst": page})
    assert "torchtrace.divergence" not in warnings_of(quiet)  # off by default: a note only
    loud = make_site(
        "simple", pages={"index.rst": page}, confoverrides={"torchtrace_warn_divergence": True}
    )
    (line,) = [w for w in warnings_of(loud).splitlines() if "torchtrace.divergence" in w]
    assert (
        "index.rst:4: WARNING: the ranks diverge in compile ids, functions, statuses, "
        "cache patterns, graph shapes" in line
    )


ORDER = DATA / "captured" / "ranks_collective_order"
TLPARSE_ORDER = DATA / "expected" / "tlparse_ranks_collective_order.json"


def test_collectives_parity_catches_an_order_that_tlparse_calls_consistent() -> None:
    """Rank 3 all_reduces ``b`` before ``a`` (same kernels, other shapes): tlparse's
    collective schedule compares kernel names and finds nothing; the parity check reads
    each graph's collectives with their shapes and names the first that differs."""
    d = divergence(load_trace(ORDER))
    groups = d.collective_groups["[0/0]"]
    assert [g.ranks for g in groups] == [[0, 1, 2], [3]]
    first = (
        "all_reduce_ f32[4, 8] 'sum' '0'",
        "all_reduce_ f32[8, 4] 'sum' '0'",
        "all_gather_into_tensor f32[16] 4 '0'",
    )
    assert groups[0].facts == Collectives(first)
    differs = groups[1].facts
    assert isinstance(differs, CollectiveDiffers)
    assert (differs.index, differs.mine, differs.theirs, differs.first_rank) == (
        0,
        first[1],
        first[0],
        0,
    )
    assert rank_group_words(groups[0].facts) == "3 collectives: " + ", ".join(first)
    assert rank_group_words(differs).startswith(
        "collective 1 is all_reduce_ f32[8, 4] 'sum' '0' (rank 0: all_reduce_ f32[4, 8] 'sum' '0')"
    )
    assert groups[1].labels == ["[0/0]"]  # linked: rank 3's frame
    assert list(d.collective_groups) == ["[0/0]"]  # [1/0]: one all_reduce of [16] everywhere
    assert "collectives_parity" in diverging_aspects(d)
    assert "collectives parity" in divergence_words(diverging_aspects(d))


def test_every_kind_of_divergence_has_words() -> None:
    """A kind the model tells apart that the pages cannot name would show its key."""
    named = set(DIVERGENCE_ASPECTS) | set(SCHEDULE_ARTIFACTS)
    assert named == set(DIVERGENCE_WORDS)


#: One of each kind of facts a group of ranks is shown with, and its line.
RANK_GROUP_LINES: list[tuple[RankGroupFacts, str]] = [
    (CacheLookups(()), "no cache lookups"),
    (
        CacheLookups((("fx_graph", (("hit", 2), ("miss", 1))), ("aotautograd", ()))),
        "fx_graph: 2 hit, 1 miss; aotautograd: ",
    ),
    (GraphsLogged(0), "nothing logged"),
    (GraphsLogged(1), "1 graph logged"),
    (GraphsLogged(3), "3 graphs logged"),
    (Collectives(()), "no collectives"),
    (Collectives(("a",)), "1 collective: a"),
    (Collectives(tuple("abcdef")), "6 collectives: a, b, c, d and 2 more"),
    (CollectiveDiffers(1, "x", "y", 0, 5), "collective 2 is x (rank 0: y); 5 in all"),
    (
        CollectiveDiffers(2, None, "y", 4, 2),
        "collective 3 is nothing (rank 4: y); 2 in all",
    ),
    (ReferenceShapes(), "the shapes the others are compared with"),
    (
        ShapesDiffer(
            0,
            (
                InputsDiffer("[0/0]", (("a f32[6]", "f32[8]"),), (2, 1)),
                InputsDiffer("[1/0]", (), (1, 3)),
                InputsDiffer("[2/0]", tuple((f"x{i} i64[{i}]", "i64[9]") for i in range(4))),
                InputsDiffer("[3/0]", (("b f32[1]", "f32[2]"),)),
                InputsDiffer("[4/0]", (("c f32[1]", "f32[2]"),)),
            ),
        ),
        "[0/0] a f32[6] (rank 0: f32[8]), 2 inputs (rank 0: 1); [1/0] 1 inputs (rank 0: 3); "
        "[2/0] x0 i64[0] (rank 0: i64[9]), x1 i64[1] (rank 0: i64[9]), x2 i64[2] (rank 0: "
        "i64[9]) and 2 more compile ids",
    ),
]


def test_every_kind_of_rank_group_has_words() -> None:
    """Each kind of facts the model groups ranks by has its line: the kinds the samples
    cover are all the model's, and each sample reads as the ranks section says it."""
    assert {type(facts) for facts, _ in RANK_GROUP_LINES} == set(typing.get_args(RankGroupFacts))
    assert [rank_group_words(facts) for facts, _ in RANK_GROUP_LINES] == [
        line for _, line in RANK_GROUP_LINES
    ]


def test_the_checks_tlparse_makes_agree_with_tlparse() -> None:
    """On the same capture, each check tlparse 0.4.3 makes groups the ranks as it does
    (tests/data/expected: its landing page, read by hand)."""
    expected = json.loads(TLPARSE_ORDER.read_text("utf-8"))["groups"]
    d = divergence(load_trace(ORDER))

    def ours(groups: list[RankGroup]) -> list[list[int]]:
        return sorted(g.ranks for g in groups) if groups else [[0, 1, 2, 3]]

    assert ours(d.cache_groups) == expected["Cache hit/miss sequence"]
    assert (
        ours(d.schedule_groups.get("inductor_collective_schedule", []))
        == (expected["Collectives Schedule"])
    )
    assert ours(d.schedule_groups.get("graph_execution", [])) == (expected["Graph execution order"])
    assert ours(d.schedule_groups["inductor_runtime_and_tensor_meta"]) == sorted(
        expected["Tensor Metadata Analysis"]
    )
    # and the shapes: rank 1 compiled scaled_sum for 6 rows, the others for 8
    assert [(g.ranks, g.labels) for g in d.shape_groups] == [([0, 2, 3], []), ([1], ["[1/0]"])]
    # CPU estimates are all 0 ns: a spread is given, no divergence
    assert [s.label for s in d.runtimes] == ["[0/0]", "[1/0]"] and not d.runtime_differs


def test_each_divergence_links_the_first_rank_of_its_group(make_site: SiteMaker) -> None:
    page = f".. torchtrace:: {'@DATA@/captured/ranks_collective_order'}\n   :name: order\n"
    app = make_site("simple", pages={"index.rst": "Ranks\n=====\n\n" + page})
    assert "WARNING" not in warnings_of(app)
    overview = (Path(app.outdir) / "torchtrace/order/index.html").read_text("utf-8")
    import html as html_module
    import re

    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html_module.unescape(overview)))
    assert "Collectives parity of [0/0]" in words
    assert "Rank 3: collective 1 is all_reduce_ f32[8, 4]" in words
    assert "; 3 in all; rank 3's rank3/[0/0] " in words  # its frame, linked
    assert re.search(r"Rank 1: \[1/0\] L_x_ f32\[6, 16\][^;]*; rank 1's rank1/\[1/0\]", words)
    assert 'href="rank3/frame-0-0.html' in overview


def test_diff_compares_each_pair_of_rank_classes_once(tmp_path: Path) -> None:
    """Eight alike ranks on each side, rank 5 of the new run changed in one graph: three
    comparisons (ranks 0, 2, 4, 6; ranks 1, 3, 7; rank 5), each saying which ranks it
    stands for, and the change found on rank 5 alone."""
    import sys

    from sphinx_torchtrace.trace.comparing.diff import diff_traces
    from sphinx_torchtrace.trace.comparing.json_form import diff_json
    from sphinx_torchtrace.trace.comparing.text_report import report_lines

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_ranks import rank_copies

    from .tools.hostile_log import format_record, read_records

    rank_copies(tmp_path / "old", 8)
    rank_copies(tmp_path / "new", 8)
    (log,) = (tmp_path / "new").glob("*rank_5_*.log")
    records = read_records(log)
    graph = next(r for r in records if r.kind == "dynamo_output_graph")
    graph.payload = (graph.payload or "").replace("torch.relu", "torch.sigmoid", 1) + "\n# new"
    log.write_text("".join(format_record(r) for r in records), encoding="utf-8")

    diff = diff_traces(load_trace(tmp_path / "old"), load_trace(tmp_path / "new"))
    assert [(r.rank, r.alike) for r in diff.ranks] == [(0, [2, 4, 6]), (1, [3, 7]), (5, [])]
    assert [r.rank for r in diff.ranks if r.changed] == [5]
    assert diff_json(diff)["ranks"][0]["alike"] == [2, 4, 6]
    lines = report_lines(diff)
    assert "rank 5: changed frame multi_rank_gloo.py:forward:" in lines
    changed = [line for line in lines if "compile time" not in line]  # times: every rank
    assert not any(line.startswith(("rank 0: ", "rank 1: ")) for line in changed)


def test_a_thousand_ranks_keep_a_bounded_number_of_logs_open(
    tmp_path: Path, monkeypatch: object
) -> None:
    """Each rank's payloads are read back from its log; with more ranks than
    ``OPEN_LOGS`` the logs read least recently are closed (the usual limit is 1,024 open
    files, a job has more ranks), and a closed log is opened again when read."""
    import os
    import sys

    import pytest

    from sphinx_torchtrace.trace import reader

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(reader, "OPEN_LOGS", 3)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_ranks import rank_copies

    rank_copies(tmp_path / "logs", 8)
    trace = load_trace(tmp_path / "logs")

    def open_logs() -> int:
        targets = [
            os.readlink(f"/proc/self/fd/{fd}")
            for fd in os.listdir("/proc/self/fd")
            if os.path.exists(f"/proc/self/fd/{fd}")
        ]
        return sum(1 for t in targets if t.startswith(str(tmp_path / "logs")))

    first = [[a.text() for c in r.compiles for a in c.artifacts] for r in trace.ranks]
    assert open_logs() <= 3
    again = [[a.text() for c in r.compiles for a in c.artifacts] for r in trace.ranks]
    assert again == first and any(any(t) for t in first)  # closed logs read again, alike
    assert open_logs() <= 3


def test_a_thousand_gzip_ranks_keep_a_bounded_number_of_files_open(
    tmp_path: Path, monkeypatch: object
) -> None:
    """A gzip log read back is decompressed into a spill file: past ``OPEN_LOGS`` logs, the
    ones read least recently close their stream and drop their spill (a thousand ranks'
    spills would be a thousand open files and gigabytes on disk); read again, alike."""
    import gzip
    import os
    import sys

    import pytest

    from sphinx_torchtrace.trace import reader

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(reader, "OPEN_LOGS", 3)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_ranks import rank_copies

    for log in rank_copies(tmp_path / "plain", 8).iterdir():
        (tmp_path / "logs").mkdir(exist_ok=True)
        (tmp_path / "logs" / f"{log.name}.gz").write_bytes(gzip.compress(log.read_bytes()))

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    before = open_files()
    trace = load_trace(tmp_path / "logs")
    first = [[a.text() for c in r.compiles for a in c.artifacts] for r in trace.ranks]
    assert open_files() - before <= 2 * 3
    again = [[a.text() for c in r.compiles for a in c.artifacts] for r in trace.ranks]
    assert again == first and any(any(t) for t in first)  # dropped spills made again, alike
    assert open_files() - before <= 2 * 3


def test_many_logs_are_parsed_by_workers_then_read_from_the_cache(tmp_path: Path) -> None:
    """A folder of eight or more logs is parsed in worker processes (one per core, fresh
    ones every few logs: a cold thousand-rank build is mostly parsing, and memory a
    parsing process keeps); the build then reads each model from the cache, the same
    model a plain read gives."""
    import sys

    from sphinx_torchtrace.trace.inputs.loader import PARALLEL_LOGS, warm_cache

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_ranks import rank_copies

    rank_copies(tmp_path / "logs", PARALLEL_LOGS)
    logs = sorted((tmp_path / "logs").iterdir())
    cache = tmp_path / "cache"
    warm_cache(logs, cache)
    cached = [p for p in cache.rglob("*") if p.is_file()]
    assert len(cached) == PARALLEL_LOGS  # each model made by a worker, not by this process
    mtimes = sorted(p.stat().st_mtime_ns for p in cached)

    def shape(trace: object) -> list[object]:
        return [
            (r.rank, r.path, [(c.label, c.status, c.digest, len(c.artifacts)) for c in r.compiles])
            for r in trace.ranks
        ]  # type: ignore[attr-defined]

    assert shape(load_trace(tmp_path / "logs", cache_dir=cache)) == shape(
        load_trace(tmp_path / "logs")
    )
    assert sorted(p.stat().st_mtime_ns for p in cached) == mtimes  # read, not made again
    import multiprocessing

    def no_workers(*args: object, **kwargs: object) -> None:
        raise AssertionError("workers started for models the cache holds")

    context, multiprocessing.get_context = multiprocessing.get_context, no_workers  # type: ignore[assignment]
    try:  # a rebuild: every model cached, none loaded twice (by a worker, then here)
        warm_cache(logs, cache)
    finally:
        multiprocessing.get_context = context


def test_a_rebuild_of_many_logs_reads_each_log_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild of a job's ranks reads each log once to know its model cached, and loads
    the model under that digest without reading the log again; a log written since it
    was read is read again."""
    import sys

    from sphinx_torchtrace.trace import reader
    from sphinx_torchtrace.trace.inputs import cache as cache_module
    from sphinx_torchtrace.trace.inputs.loader import PARALLEL_LOGS, read_log

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from bench_ranks import rank_copies

    rank_copies(tmp_path / "logs", PARALLEL_LOGS)
    cache = tmp_path / "cache"
    first = load_trace(tmp_path / "logs", cache_dir=cache)
    read: list[str] = []
    real = reader.file_sha256

    def counted(path: object) -> tuple[str, bool]:
        read.append(str(path))
        return real(path)  # type: ignore[arg-type]

    for module in (reader, cache_module):
        monkeypatch.setattr(module, "file_sha256", counted)
    again = load_trace(tmp_path / "logs", cache_dir=cache)
    assert sorted(read) == sorted(str(p) for p in (tmp_path / "logs").iterdir())
    assert [r.sha256 for r in again.ranks] == [r.sha256 for r in first.ranks]

    log = next((tmp_path / "logs").iterdir())
    known = reader.file_digest(log)
    with log.open("a", encoding="utf-8") as f:
        f.write("\n")  # a blank line: the same model, another file
    read.clear()
    rank = read_log(log, cache_dir=cache, known=known)
    assert read == [str(log)] and rank.sha256 == real(log)[0] != known.sha256
