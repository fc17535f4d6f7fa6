"""Nothing hidden behind "same as rank N": a rank shares pages only when it logged the same.

A repeating rank's frames are shown on an earlier rank's pages, so anything it logged
differently would appear in no published file.  Sharing compares every record (artifacts
with or without pages, text-log lines, failures, cache events ...); what may differ
(metrics, timing events) is listed on the overview with the values.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from sphinx_torchtrace.site.plan import has_page, plan_trace
from sphinx_torchtrace.trace import load_trace

from .conftest import SiteMaker, copy_testroot, write_page

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_ranks import GLOO, rank_copies  # noqa: E402

from .tools.hostile_log import LogRecord, format_record, read_records  # noqa: E402

MARKER = "DiffersOnRank2Only"


def _four_ranks(folder: Path) -> list[Path]:
    """Ranks 0-3, made from the two gloo ranks: rank 2 repeats 0 and rank 3 repeats 1."""
    rank_copies(folder, 4, GLOO)
    return sorted(folder.glob("*.log"), key=lambda p: int(re.findall(r"rank_(\d+)", p.name)[0]))


def _edit(log: Path, change: Callable[[LogRecord], bool]) -> None:
    records = read_records(log)
    assert any(change(r) for r in records), "nothing to change"  # the first one only
    log.write_text("".join(format_record(r) for r in records), encoding="utf-8")


def _change_unpaged_artifact(record: LogRecord) -> bool:
    """The first ``compiled_fn_wrapper`` artifact (no page of its own) gets one more line."""
    if record.artifact_name() != "compiled_fn_wrapper" or record.payload is None:
        return False
    record.payload += f"\n# {MARKER}"
    return True


def _change_metric(record: LogRecord) -> bool:
    metrics = record.envelope.get("compilation_metrics")
    if not isinstance(metrics, dict) or "guard_count" not in metrics:
        return False
    metrics["guard_count"] = 424242
    return True


def test_a_rank_differing_in_an_artifact_without_a_page_is_not_shared(tmp_path: Path) -> None:
    logs = _four_ranks(tmp_path / "logs")
    trace = load_trace(tmp_path / "logs")
    plan = plan_trace("dist", trace, "torchtrace")
    assert [r.same_as is not None for r in plan.ranks] == [False, False, True, True]

    _edit(logs[2], _change_unpaged_artifact)
    trace = load_trace(tmp_path / "logs")
    changed = [a for c in trace.ranks[2].compiles for a in c.artifacts if MARKER in a.text()]
    assert changed and not has_page(changed[0])  # the case: no page of its own
    plan = plan_trace("dist", trace, "torchtrace")
    assert plan.ranks[2].same_as is None  # its own frames and pages now
    assert plan.ranks[3].same_as is plan.ranks[1]


def test_differing_metrics_are_listed_with_their_values(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    srcdir = copy_testroot("simple", tmp_path / "site")
    write_page(srcdir, "index.rst", "Ranks\n=====\n\n.. torchtrace:: logs\n   :name: dist\n")
    logs = _four_ranks(srcdir / "logs")
    _edit(logs[3], _change_metric)
    _edit(logs[2], _change_unpaged_artifact)
    app = make_site("simple", srcdir=srcdir)
    overview = html.unescape(
        (Path(app.outdir) / "torchtrace/dist/index.html").read_text(encoding="utf-8")
    )
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", overview))
    assert "rank 3 : same as rank 1; differs in guard_count (1 record)" in words
    assert "guard_count 12 424242" in words  # the value shown, beside rank 1's
    assert "rank 2 : same as" not in words
    # rank 2's own record is published: on one of its pages
    published = "".join(p.read_text(encoding="utf-8") for p in Path(app.outdir).rglob("*.html"))
    assert MARKER in published


def _change_graph_line(record: LogRecord) -> bool:
    """The first Dynamo graph of the log gets one more line."""
    if record.kind != "dynamo_output_graph" or record.payload is None:
        return False
    record.payload += f"\n# {MARKER}"
    return True


def test_sharing_is_per_frame_and_a_differing_frame_shows_what_differs(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """One graph line of one compile on rank 2: that compile alone gets a page of its own,
    saying what differs from rank 0's and showing the changed graph; every other compile
    of rank 2 stays on the earlier ranks' pages, and ranks 1 and 3 are untouched."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    write_page(srcdir, "index.rst", "Ranks\n=====\n\n.. torchtrace:: logs\n   :name: dist\n")
    logs = _four_ranks(srcdir / "logs")
    _edit(logs[2], _change_graph_line)
    trace = load_trace(srcdir / "logs")
    plan = plan_trace("dist", trace, "torchtrace")
    rank2 = plan.ranks[2]
    own = plan.own_frames(rank2)
    assert len(own) == 1 and rank2.same_as is None
    frame = own[0]
    assert frame.counterpart is not None and frame.counterpart.rank is trace.ranks[0]
    [(what, how)] = frame.differences
    assert what == "dynamo_output_graph" and re.fullmatch(r"(\d+) lines \(there: \d+\)", how)
    shared = [f for f in plan.frames_of(rank2) if f.same_as is not None]
    assert len(shared) == len(plan.frames_of(rank2)) - 1
    assert plan.ranks[3].same_as is plan.ranks[1]  # a class still: nothing of 3 changed
    # the graphs of the frame that did not change are not copied: shown on rank 0's pages
    alike = [g for g in frame.graphs if g.same_as is not None and g.same_label]
    assert alike and all(g.same_label == f"rank0 {frame.compile.label}" for g in alike)

    app = make_site("simple", srcdir=srcdir)
    out = Path(app.outdir)
    page = html.unescape((out / f"{frame.docname}.html").read_text(encoding="utf-8"))
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Compared with the first rank" in words
    assert f"What differs from rank0 {frame.compile.label}" in words
    assert MARKER in page  # the changed graph is on this rank's page (or one it links)
    overview = html.unescape((out / "torchtrace/dist/index.html").read_text(encoding="utf-8"))
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", overview))
    label = frame.compile.label
    assert f"rank 2 : differs in rank2/{label} ; its other compiles as rank 0" in words


def test_only_the_rank_s_own_number_is_left_out_wherever_a_case_blind_match_finds_it() -> None:
    """Ranks are told alike with their own number after the word ``rank`` (any case) left
    out, and no other number: not ``lowrank=64``, not a peer's rank. The fast path for
    ASCII text finds what matching the text case-blind finds, on every text of the
    corpus's distributed logs and on text made to tell the two apart."""
    from sphinx_torchtrace.trace.digests import without_rank_numbers

    blind = re.compile(r"(?<![a-z])(rank['\" _=:\-]{0,4})([0-9]{1,7})(?![0-9])", re.IGNORECASE)

    def expected(text: str, rank: int) -> str:
        if "ank" not in text and "ANK" not in text:
            return text  # not searched (a mixed-case "rAnK" stays)
        return blind.sub(
            lambda m: m.group(1) + "#" if int(m.group(2)) == rank else m.group(0), text
        )

    made = [
        "rank3",
        "RANK_12 and Rank=4",
        "rAnK: 7",
        "rAnK: 7 rank 8",
        "ranks 0-3",
        "rank",
        "{'size': 4, 'rank': 2}",
        '{"rank": 12}',
        "lowrank=3",
        "low_rank=3",
        "rank=03",
        "xrank99999999",
        "frank0",
        "RAN\u212a 5 rank2",
        "\u00e9 rank 3",
        "rank-\u0663",
        "rank" * 1000 + "1",
        "rank 30",
        "peer_rank=1, rank=3",
    ]
    data = Path(__file__).parent / "data"
    logs = [*data.glob("captured/*/*rank*.log"), *data.glob("corpus/ddp_*/*.log")]
    assert len(logs) >= 8
    texts = [
        a.text()
        for log in logs
        for rank in load_trace(log).ranks
        for c in rank.compiles
        for a in c.artifacts
    ]
    texts = [t for t in texts if "ank" in t.lower()]
    assert len(texts) > 50
    for text in made + texts:
        for rank in (0, 1, 3, 12):
            assert without_rank_numbers(text, rank) == expected(text, rank), (rank, text[:80])
    assert without_rank_numbers("RANK_12 and Rank=4, rank 0", 4) == "RANK_12 and Rank=#, rank 0"
    assert without_rank_numbers("lowrank=3, rank=3", 3) == "lowrank=3, rank=#"
    assert without_rank_numbers("rank=3", None) == "rank=3"  # a log of no rank: nothing


CORPUS = Path(__file__).parent / "data" / "corpus"
CAPTURED = Path(__file__).parent / "data" / "captured"


def test_what_differs_between_any_two_processes_is_left_out_and_nothing_else() -> None:
    """Real ranks log object addresses and ids, UUIDs, temporary folders, measured durations
    and config settings in a set's order, all of their own, in the forms torch writes
    them: left out of what ranks are compared on, each rule exact. A shape, any other
    number (a constant in hex, a seed, ``lowrank=64``), a graph line, the order of two ops
    or of two settings of one option are not."""
    from sphinx_torchtrace.trace.digests import comparable

    same = [
        (
            "___check_obj_id(G['torch'], 139962313686640)",
            "___check_obj_id(G['torch'], 94524242570160)",
        ),
        ("# graph id: 139961427217104", "# graph id: 139979212118672"),
        ("<function f at 0x7f4b583c9b20>", "<function f at 0x7f4f784d1b20>"),
        (
            "NULL + __compiled_fn_13_33fe20b4_5c7a_4516_82bf_40f4a303c784)",
            "NULL + __compiled_fn_13_609e7c26_415a_4a7a_ad04_d2eb2a9138e7)",
        ),
        (
            "os.environ['TORCHINDUCTOR_CACHE_DIR'] = '/tmp/torchinductor_user/tmp66o2th__'",
            "os.environ['TORCHINDUCTOR_CACHE_DIR'] = '/tmp/torchinductor_user/tmpdw1z131c'",
        ),
        ("Guard latency = 85.96 us", "Guard latency = 133.78 us"),
        (
            "x = 1\ntorch._inductor.config.a = 1\ntorch._inductor.config.b = 2\ny = 2",
            "x = 1\ntorch._inductor.config.b = 2\ntorch._inductor.config.a = 1\ny = 2",
        ),
        (
            "FAKE_SCRIPT_TYPE_MATCH: ___check_fake_script_type(G['dist'].group.WORLD, 94478641575200)",  # noqa: E501 - a value as logged
            "FAKE_SCRIPT_TYPE_MATCH: ___check_fake_script_type(G['dist'].group.WORLD, 945290531116)",  # noqa: E501 - a value as logged
        ),
        (
            "___check_obj_id(list(dict.keys(L['self'].state))[0], 139962313686640)",
            "___check_obj_id(list(dict.keys(L['self'].state))[0], 139962313600000)",
        ),
        (
            "os.environ['TORCHELASTIC_ERROR_FILE'] = '/tmp/torchinductor_user/torchelastic_1jdbv0t4/"  # noqa: E501 - a value as logged
            "6bd05d26-b62b-424f-9f95-998d01cb575f_0toww6z3/attempt_0/0/error.json'",
            "os.environ['TORCHELASTIC_ERROR_FILE'] = '/tmp/torchinductor_user/torchelastic_1jdbv0t4/"  # noqa: E501 - a value as logged
            "6bd05d26-b62b-424f-9f95-998d01cb575f_0toww6z3/attempt_0/3/error.json'",
        ),
        (
            "os.environ['_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR'] = '140468200066080'",
            "os.environ['_TORCHINDUCTOR_PYOBJECT_TENSOR_DATA_PTR'] = '140468211111111'",
        ),
        (
            '{"cache_state": "miss", "cache_event_time": 1795630277093449886, "x": 1}',
            '{"cache_state": "miss", "cache_event_time": 1795630275537807609, "x": 1}',
        ),
        (
            '{"graph_id": 140413143033936, "time_taken_ns": 1234}',
            '{"graph_id": 139765019841296, "time_taken_ns": 998}',
        ),
    ]
    for a, b in same:
        assert a != b and comparable(a) == comparable(b), a
    # each rank's own number, and no other
    mine = (
        "setup_fake_process_groups({'0': {'size': 4, 'rank': 2}})",
        "setup_fake_process_groups({'0': {'size': 4, 'rank': 0}})",
    )
    assert comparable(mine[0], 2) == comparable(mine[1], 0)
    assert comparable(mine[0], 0) != comparable(mine[1], 2)
    different = [
        ('L_x_: "f32[8, 16][16, 1]cpu"', 'L_x_: "f32[6, 16][16, 1]cpu"'),
        ("size=(123456789,)", "size=(123456788,)"),  # 9 digits: a size, not an address
        ("a = all_reduce(x)\nb = all_gather(y)", "b = all_gather(y)\na = all_reduce(x)"),
        (
            "torch._inductor.config.a = 1\nx = 1\ntorch._inductor.config.b = 2",
            "torch._inductor.config.b = 2\nx = 1\ntorch._inductor.config.a = 1",
        ),
        ("/tmp/torchinductor_user/tmp66o2th__/x.py", "/tmp/torchinductor_user/tmp66o2th__/y.py"),
        ("ratio = 85.96 us", "ratio = 85.97 us"),
        ("0xdeadbeef12 + 1", "0xdeadbeef12 + 2"),
        # what only looks like an address or an id: a constant, a mask, a seed, a size
        ("x & 0xdeadbeef12", "x & 0xdeadbeef13"),
        ("mask = 0x7f4b583c9b20", "mask = 0x7f4f784d1b20"),
        ("seed = 1234567890123", "seed = 1234567890124"),
        ("x.view(12345678901)", "x.view(12345678902)"),
        ("lowrank=64", "lowrank=32"),
        ("SVD(rank=64)", "SVD(rank=32)"),
        ('{"timeout": 30}', '{"timeout": 60}'),
        ("___check_len(L['x'], 1234567890)", "___check_len(L['x'], 1234567891)"),
        # two settings of one option: the last one wins, so their order matters
        (
            "torch._inductor.config.a = 1\ntorch._inductor.config.a = 2",
            "torch._inductor.config.a = 2\ntorch._inductor.config.a = 1",
        ),
    ]
    for a, b in different:
        assert comparable(a) != comparable(b), a


def test_real_ranks_that_ran_alike_are_one_class_and_those_that_did_not_are_apart() -> None:
    """The 4 ranks of a real DDP job logged the same but for what differs between any two
    processes: one class (each was its own class, with every frame a page of its own). In
    the collective-order capture, rank 1 had other shapes and rank 3 another collective
    order: the classes are what the cross-rank checks say."""
    from sphinx_torchtrace.site.rank_sharing import rank_classes

    assert rank_classes(load_trace(CORPUS / "ddp_4ranks")) == [[0, 1, 2, 3]]
    order = load_trace(CAPTURED / "ranks_collective_order")
    assert rank_classes(order) == [[0, 2], [1], [3]]
    plan = plan_trace("order", order, "torchtrace")
    [frame] = plan.own_frames(plan.ranks[1])
    shown = dict(frame.differences)
    assert shown["dynamo_output_graph"] == (
        '3 of 23 lines differ, in numbers only; first: "f32[8, → "f32[6,'
    )
    rank3 = {f.compile.label: dict(f.differences) for f in plan.own_frames(plan.ranks[3])}
    assert "in numbers only" not in rank3["[0/0]"]["dynamo_output_graph"]  # the order


def test_the_fast_path_leaves_out_what_the_expressions_leave_out() -> None:
    """ASCII text is searched with ``str.find`` and ``bytes.translate`` before any regular
    expression runs (a hundred milliseconds a rank, else): it must give what the
    expressions give, rule after rule, on every artifact text of the corpus's logs and on
    text made to tell them apart."""
    from sphinx_torchtrace.trace.volatile import volatile_by_regex, without_volatile

    made = [
        "1234567890",
        "x1234567890",
        "1234567890.5",
        "(1234567890)",
        ".1234567890 ",
        "123456789012345678901",
        "12345678901234567890",
        "a 1234567890_",
        "0x1234567890abc",
        "0x12345",
        "10x1234567",
        "id 0x7f4b583c9b20>",
        "0x" + "a" * 17,
        "0x7F4B583C9B20",
        "33fe20b4_5c7a_4516_82bf_40f4a303c784",
        "ab33fe20b4-5c7a-4516-82bf-40f4a303c784",
        "33fe20b4-5c7a-4516-82bf-40f4a303c784f",
        "33fe20b4-5c7a_4516-82bf-40f4a303c784",
        "-33fe2000-1234-4516-8200-123456789012-",
        "Guard latency = 85.96 us",
        "took 3s",
        "TIME: 12 ms",
        "timeout 5 s",
        "elapsed=1.5ms; time 2 ns",
        "runtime 3 s",
        "time  s",
        "/tmp/tmpabcdefgh",
        "/tmp/tmpabcdefgh/x",
        "C:\\tmp\\tmpab_cd123\\y",
        "/tmp/tmpABCDEFGH",
        "/x/tmpabcdefghi/",
        "'/tmp/tmp12345678'",
        "x/tmp/tmp12345678\ny",
        "torch._inductor.config.b = 1\ntorch._inductor.config.a = 2",
        "",
    ]
    data = Path(__file__).parent / "data"
    logs = [
        *data.glob("captured/*/*.log"),
        *data.glob("corpus/ddp_*/*.log*"),
        *data.glob("corpus/backends/*.log*"),
        *data.glob("shared/*/*.log"),
    ]
    texts = [
        a.text()
        for log in logs
        for rank in load_trace(log).ranks
        for c in rank.compiles
        for a in c.artifacts
    ]
    assert len(texts) > 1000
    changed = 0
    for text in made + texts:
        fast = without_volatile(text)
        assert fast == volatile_by_regex(text), text[:80]
        changed += fast != text
    assert changed > 100  # the corpus has what the rules are for


def test_a_shared_page_anchors_every_rank_it_stands_for_at_its_frame(tmp_path: Path) -> None:
    """Rank 1's [4/0] page stands for ranks 5 and 7 too, 42 objects in all: past the 16
    anchors a page gives, rank 7's frame shared the last one, a kernel of rank 5, and its
    links landed there. Frames come first, and the rest share the page's top."""
    from sphinx_torchtrace.site.blocks import OWN_ANCHORS, object_targets

    plan = plan_trace(
        "dist", load_trace(rank_copies(tmp_path / "logs", 8, GLOO, "differs")), "torchtrace"
    )
    docname = next(
        f.docname for f in plan.frames if f.rank.rank == 7 and f.compile.label == "[4/0]"
    )
    objects = plan.shared_objects(docname)
    assert len(objects) > OWN_ANCHORS
    targets = object_targets(objects)
    frames = {o[1] for o in objects if o[0] == "frame"}
    assert frames and {t.name for t in targets if t.objtype == "frame"} == frames
    declared = [t.name for t in targets] + [o[1] for o in targets[0].also]
    assert sorted(declared) == sorted(o[1] for o in objects)  # each once


def test_values_that_differ_are_compared_with_the_page_that_shows_them(tmp_path: Path) -> None:
    """Odd ranks copy rank 1, whose [0/0_1] is shown on rank 0's page: their values were
    compared with rank 1's, "on its page" a value no page shows, and each compile got two
    rows. Each value is compared with the compile whose page shows it."""
    plan = plan_trace(
        "dist", load_trace(rank_copies(tmp_path / "logs", 8, GLOO, "alike")), "torchtrace"
    )
    by_name = {f.name: f for f in plan.frames}
    originals: dict[tuple[str, str, str], set[str]] = {}
    for r in plan.ranks:
        for v in r.changed_values:
            originals.setdefault((v.compile, v.record, v.key), set()).add(v.original)
    assert originals
    pages = {
        f"{f.name.split('/')[1]} {f.compile.label}": f
        for f in by_name.values()
        if f.same_as is None
    }
    for (label, _record, key), values in originals.items():
        page = pages[label]  # "rank1 [4/0]": the page that shows it
        shown = {str(m.data.get(key)) for m in page.compile.metrics}
        assert values <= shown, (label, key, values, shown)


def _graph_line(line: str) -> Callable[[LogRecord], bool]:
    """The first Dynamo graph of a log gets ``line`` at its end."""

    def change(record: LogRecord) -> bool:
        if record.kind != "dynamo_output_graph" or record.payload is None:
            return False
        record.payload += "\n" + line
        return True

    return change


def _second_metrics_record(records: list[LogRecord]) -> None:
    """The first compile's metrics logged twice, the second with a value of its own."""
    at = next(
        i for i, r in enumerate(records) if isinstance(r.envelope.get("compilation_metrics"), dict)
    )
    copy = LogRecord(
        records[at].prefix, json.loads(json.dumps(records[at].envelope)), records[at].payload
    )
    copy.envelope["compilation_metrics"]["guard_count"] = 777
    records.insert(at + 1, copy)


def _metric(key: str, value: object) -> Callable[[LogRecord], bool]:
    def change(record: LogRecord) -> bool:
        metrics = record.envelope.get("compilation_metrics")
        if not isinstance(metrics, dict):
            return False
        metrics[key] = value
        return True

    return change


def test_what_only_one_rank_logged_is_never_set_aside(tmp_path: Path) -> None:
    """Each rule sets aside one exact form, so a value of rank 2's own that only looks like
    what a process owns keeps it apart from rank 0 (which it copies): a number after
    ``lowrank``, a constant in hex, a long number that is no id, the order of two settings
    of one option, a second metrics record. A metric naming a rank shows its values
    unless each side holds its own rank's number."""
    cases = [
        ("# lowrank=32", "# lowrank=64"),
        ("# mask = 0x7f4b583c9b20", "# mask = 0x7f4f784d1b20"),
        ("# seed = 12345678901234", "# seed = 12345678901299"),
        (
            "torch._inductor.config.a = 1\ntorch._inductor.config.a = 2",
            "torch._inductor.config.a = 2\ntorch._inductor.config.a = 1",
        ),
    ]
    for n, (first, second) in enumerate(cases):
        logs = _four_ranks(tmp_path / f"case{n}")
        _edit(logs[0], _graph_line(first))
        _edit(logs[2], _graph_line(second))
        plan = plan_trace("dist", load_trace(tmp_path / f"case{n}"), "torchtrace")
        assert plan.ranks[2].same_as is None, second  # pages of its own ...
        [frame] = [f for f in plan.own_frames(plan.ranks[2]) if f.differences]
        assert "dynamo_output_graph" in dict(frame.differences)  # ... saying what differs

    logs = _four_ranks(tmp_path / "metrics")
    records = read_records(logs[2])
    _second_metrics_record(records)
    logs[2].write_text("".join(format_record(r) for r in records), encoding="utf-8")
    _edit(logs[3], _metric("peer_rank", 5))
    plan = plan_trace("dist", load_trace(tmp_path / "metrics"), "torchtrace")
    assert plan.ranks[2].same_as is None  # one more record is a difference
    assert plan.ranks[3].same_as is plan.ranks[1]  # metrics' values are listed, not hidden
    assert any(d.startswith("peer_rank") for d in plan.ranks[3].differences)
    assert [v.value for v in plan.ranks[3].changed_values if v.key == "peer_rank"] == ["5"]


def test_a_class_lists_what_was_set_aside_with_an_example(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A real torchrun job: four ranks, each with torchelastic's own error-file folder and
    guard ids of its own, are one class, and the overview says what comparing them left
    out, rule by rule, each with an example as the log has it."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    write_page(srcdir, "index.rst", "Ranks\n=====\n\n.. torchtrace:: logs\n   :name: dist\n")
    shutil.copytree(
        CORPUS / "torchrun_ranks", srcdir / "logs", ignore=shutil.ignore_patterns("*.txt")
    )
    app = make_site("simple", srcdir=srcdir)
    overview = html.unescape(
        (Path(app.outdir) / "torchtrace/dist/index.html").read_text(encoding="utf-8")
    )
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", overview))
    assert "4 ranks in 1 class of ranks that logged alike" in words
    for rule, example in [
        ("temporary folders", "torchelastic_"),
        ("object ids", "___check_type_id("),
        ("object addresses", " at 0x"),
        ("measured durations and times", "Guard latency = "),
    ]:
        assert re.search(rf"Set aside, {re.escape(rule)}: [^\n]*?{re.escape(example)}", words), rule
