"""Bounded damage from one bad record or cache file, and what the generating campaign
(``benchmarks/generate_campaign.py``) found, one test each; then a sample of that campaign.

Every build is a real Sphinx build of real inputs (a corpus log or cache entry with one
value made hostile, or inputs the campaign wrote): the build ends with status 0, the bad
value is one ``torchtrace.*`` warning at its line, and everything else renders.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import shutil
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_colors

from sphinx_torchtrace import cli

from .conftest import SHARED, SiteMaker, copy_testroot, generated_pages, warnings_of, write_page
from .tools.hostile_log import format_record, read_records

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
#: Two ranks of one job, each logging Inductor's runtime estimates and tensor metadata.
RANKS = SHARED / "tlparse-inputs" / "graph_exec_order_tests"
RUNTIME_META = "inductor_runtime_and_tensor_meta"


def copy_ranks(dest: Path) -> Path:
    """The two rank logs, rewritten record by record with every md5 as torch computes it
    (tlparse's test input was edited by hand: three payloads no longer match)."""
    dest.mkdir(parents=True)
    for log in RANKS.glob("*.log"):
        (dest / log.name).write_text(
            "".join(map(format_record, read_records(log))), encoding="utf-8"
        )
    return dest


def replace_payload(log: Path, name: str, payload: str) -> int:
    """The first payload of artifact ``name`` replaced (its md5 recomputed, as torch would
    have written it); returns the line of its record."""
    records = read_records(log)
    at = next(
        i for i, r in enumerate(records) if r.kind == "artifact" and r.artifact_name() == name
    )
    records[at].payload = payload
    texts = [format_record(r) for r in records]
    log.write_text("".join(texts), encoding="utf-8")
    return 1 + sum(t.count("\n") for t in texts[:at])


def warning_lines(app: SphinxTestApp) -> list[str]:
    """Every warning of a build, torchtrace's or not, without colours."""
    return [w for w in strip_colors(warnings_of(app)).splitlines() if "WARNING" in w]


@pytest.mark.parametrize("payload", ["[1, 2]", '"x"', "3"])
def test_a_runtime_estimate_payload_that_is_no_object_is_one_warning(
    make_site: SiteMaker, tmp_path: Path, payload: str
) -> None:
    """A JSON payload of another type than torch writes stopped every build (and
    ``summary``) of a multi-rank trace with an AttributeError: now it is one ``payload``
    warning at its record, and both ranks' pages render."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    log = next(copy_ranks(srcdir / "ranks").glob("*rank_0*.log"))
    line = replace_payload(log, RUNTIME_META, payload)
    write_page(srcdir, "index.rst", "Ranks\n=====\n\n.. torchtrace:: ranks\n   :name: job\n")
    app = make_site("simple", "html", srcdir=srcdir)
    assert app.statuscode == 0
    (warning,) = warning_lines(app)
    assert f"{log.name}:{line}: WARNING: the payload of artifact '{RUNTIME_META}' is " in warning
    assert warning.endswith("where torch writes a JSON object [torchtrace.payload]")
    pages = generated_pages(app)
    assert "torchtrace/job/index" in pages
    assert any(p.startswith("torchtrace/job/rank0/frame-") for p in pages)
    assert any(p.startswith("torchtrace/job/rank1/frame-") for p in pages)
    assert (app.outdir / "torchtrace/job/index.html").is_file()

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli.main(["summary", str(srcdir / "ranks")])
    assert status == 0 and err.getvalue() == ""
    assert "ranks:          2" in out.getvalue()


def test_runtime_estimates_past_any_number_are_left_out(tmp_path: Path) -> None:
    """A 400-digit estimate made ``float()`` raise; NaN and booleans are no estimates."""
    folder = copy_ranks(tmp_path / "ranks")
    log = next(folder.glob("*rank_0*.log"))
    values = ("9" * 400, "NaN", "true", "-5", "1e999", "Infinity")
    text = '{"ops": [' + ", ".join(f'{{"estimated_runtime_ns": {v}}}' for v in values) + "]}"
    replace_payload(log, RUNTIME_META, text)
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["summary", "--json", str(folder)]) == 0
    assert json.loads(out.getvalue())["ranks"] == 2


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file each run of the capture script appends a line to."""
    path = tmp_path / "runs.txt"
    monkeypatch.setenv("CAPTURE_RUNS", str(path))
    return path


def runs(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


#: A page with the capture alone (and the table of contents), and a page with a log.
CAPTURE_AND_TRACE = {
    "index.rst": "Captured\n========\n\n.. torchtrace-capture:: scripts/write_trace.py\n"
    "   :name: live\n\n.. toctree::\n\n   logged\n",
    "logged.rst": "Logged\n======\n\n.. torchtrace:: "
    "@DATA@/shared/simple/dedicated_log_torch_trace_5aek85xk.log\n   :name: simple\n",
}


@pytest.mark.parametrize(
    "field, value",
    [
        ("started", "yesterday"),
        ("duration", [1]),
        ("stderr_tail", 3),
        ("returncode", 1e999),
        ("status", None),
        ("started", 10**400),
    ],
)
def test_a_capture_record_with_a_value_of_another_type_is_a_cache_miss(
    make_site: SiteMaker, tmp_path: Path, counted: Path, field: str, value: object
) -> None:
    """A cache entry whose record.json held a value of another type failed every build until
    someone deleted the cache.  Now it is a miss: captured again (as any miss, silently),
    or, where nothing may run (``'never'``), one warning at the directive; the rest of the
    page renders either way."""
    srcdir = copy_testroot("capture", tmp_path / "site")
    cache = tmp_path / "captures"
    conf = {"torchtrace_capture_cache": str(cache)}
    never = {**conf, "torchtrace_capture": "never"}
    make_site("capture", srcdir=srcdir, pages=CAPTURE_AND_TRACE, confoverrides=conf)
    served = make_site("capture", srcdir=srcdir, confoverrides=never)  # CI's, on a docs host
    assert served.statuscode == 0 and runs(counted) == 1 and warning_lines(served) == []
    assert "torchtrace/live/index" in generated_pages(served)
    (record,) = cache.glob("*/record.json")
    data = json.loads(record.read_text(encoding="utf-8"))
    data[field] = value
    record.write_text(json.dumps(data).replace("Infinity", "1e999"), encoding="utf-8")

    # the same configuration, built again: the page that showed the capture is read again
    # (its directive has no pages now), or its toctree and links would name pages now gone
    damaged = make_site("capture", srcdir=srcdir, freshenv=False, confoverrides=never)
    assert damaged.statuscode == 0 and runs(counted) == 1
    (warning,) = warning_lines(damaged)
    assert "index.rst:4: WARNING: no cached capture of scripts/write_trace.py" in warning
    assert "1 cache entry with a record.json that cannot be read (damaged) ignored" in warning
    assert warning.endswith("[torchtrace.capture]")
    assert "torchtrace/live/index" not in generated_pages(damaged)
    assert "torchtrace/simple/index" in generated_pages(damaged)
    assert (damaged.outdir / "torchtrace/simple/index.html").is_file()

    again = make_site("capture", srcdir=srcdir, confoverrides=conf)
    assert again.statuscode == 0 and warning_lines(again) == []
    assert runs(counted) == 2  # the damaged entry is captured again, in its place
    assert {"torchtrace/live/index", "torchtrace/simple/index"} <= set(generated_pages(again))
    assert json.loads(record.read_text(encoding="utf-8"))[field] != value
    cached = make_site("capture", srcdir=srcdir, freshenv=False, confoverrides=conf)
    assert runs(counted) == 2 and warning_lines(cached) == []


# -- what the generating campaign found -----------------------------------------------------


def test_no_link_to_a_stack_trie_entry_the_overview_does_not_list(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A compile whose logged stack is torch's own frames alone has no line in the
    overview's stack trie: its frame page linked to an anchor no page had ('undefined
    label' in every builder)."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    lines = (
        (SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log")
        .read_text(encoding="utf-8")
        .split("\n")
    )
    start = next(i for i, line in enumerate(lines) if '{"dynamo_start"' in line)
    head, envelope = lines[start].split("] ", 1)
    record = json.loads(envelope)
    # string 0 is torch's convert_frame.py: the trie leaves torch's wrapper frames out
    record["dynamo_start"]["stack"] = [{"line": 1, "name": "_compile", "filename": 0}]
    lines[start] = f"{head}] {json.dumps(record)}"
    (srcdir / "torch_only.log").write_text("\n".join(lines), encoding="utf-8")
    write_page(srcdir, "index.rst", "Run\n===\n\n.. torchtrace:: torch_only.log\n   :name: run\n")
    app = make_site("simple", "text", srcdir=srcdir)
    assert app.statuscode == 0 and warnings_of(app) == ""
    frame = (app.outdir / "torchtrace/run/frame-0-0.txt").read_text(encoding="utf-8")
    assert "where this compilation started" not in frame


def test_a_debug_folder_links_the_frame_of_a_repeated_compile_id(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A debug folder's graph that matches a compile id logged again after a reset linked
    ``[0/0] #2`` (the compile's label), not its frame object ``[0/0]#2``: a Sphinx warning
    in every build."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    debug = SHARED.parent / "captured" / "debug_dir" / "inference" / "torch_compile_debug"
    shutil.copytree(debug, srcdir / "debug")
    (log,) = (srcdir / "debug" / "tlparse").glob("*.log")
    text = log.read_text(encoding="utf-8")
    log.write_text(text + ("" if text.endswith("\n") else "\n") + text, encoding="utf-8")
    write_page(srcdir, "index.rst", "Run\n===\n\n.. torchtrace:: debug\n   :name: infer\n")
    app = make_site("simple", "html", srcdir=srcdir)
    assert app.statuscode == 0 and warning_lines(app) == []
    graphs = [p for p in generated_pages(app) if "model" in p]
    page = (app.outdir / f"{graphs[0]}.html").read_text(encoding="utf-8")
    assert "infer-trace/frame-0-0.html" in page
    assert "infer-trace/frame-0-0-occurrence2.html" in page


def test_a_comparison_of_two_unrelated_programs_makes_no_orphan_pages(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """Nothing compared (no frame of one run is a frame of the other): the detail pages of
    the frames 'only in' one run were made but no toctree held them (a Sphinx warning per
    page); the comparison shows no frame then, and makes no page."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    runs = (SHARED / "simple", SHARED / "recompiles")
    text = ".. torchtrace-diff:: {}/{} {}/{}\n   :name: unrelated\n   :no-regressions:\n".format(
        *(p for run in runs for p in ("@DATA@/shared", run.name))
    )
    write_page(srcdir, "index.rst", f"Diff\n====\n\n{text}")
    app = make_site("simple", "text", srcdir=srcdir)
    assert app.statuscode == 0
    warnings = warning_lines(app)  # nothing compared; and their configs differ
    assert any("unrelated: nothing compared" in w for w in warnings)
    assert all(w.endswith("[torchtrace.comparability]") for w in warnings), warnings
    assert not list((srcdir / "torchtrace").rglob("diff-unrelated/*.rst"))


def test_two_identical_post_grad_graphs_with_mappings_have_distinct_sections(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A compile that logged its post-grad graph twice (the artifact and, as on a cache hit,
    the record of the same text) with a node mapping for each showed 'Kernels generated
    from each node' twice under one anchor: a duplicate target, and docutils stopped the
    build ('block-level target has children')."""
    log = SHARED / "provenance" / "dedicated_log_torch_trace_0ptegd0d.log"
    records = read_records(log)
    graph, mapping = (
        next(r for r in records if r.artifact_name() == name)
        for name in ("inductor_post_grad_graph", "inductor_provenance_tracking_node_mappings")
    )
    at = records.index(mapping) + 1  # the graph again, and a mapping made after it
    records[at:at] = [graph, mapping]
    srcdir = copy_testroot("simple", tmp_path / "site")
    (srcdir / "twice.log").write_text("".join(map(format_record, records)), encoding="utf-8")
    write_page(srcdir, "index.rst", "Twice\n=====\n\n.. torchtrace:: twice.log\n   :name: twice\n")
    app = make_site("simple", "text", srcdir=srcdir)
    assert app.statuscode == 0 and warning_lines(app) == []
    frame = (app.outdir / "torchtrace/twice/frame-0-0.txt").read_text(encoding="utf-8")
    assert frame.count("Kernels generated from each node") == 2


def _build_in_worker(srcdir: str) -> tuple[int, str]:
    from sphinx.cmd.build import build_main

    err = io.StringIO()
    with redirect_stderr(err), redirect_stdout(io.StringIO()):
        status = build_main(["-q", "-b", "html", srcdir, f"{srcdir}/_build"])
    return status, err.getvalue()


def test_a_build_in_a_pools_worker_renders(tmp_path: Path) -> None:
    """The campaign's own workers found it: a build in a daemonic process (a
    ``multiprocessing.Pool``'s worker, as a docs orchestrator may run builds) stopped with
    'daemonic processes are not allowed to have children' where the extension starts its
    highlighting process; there it highlights in the build's own process."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    with multiprocessing.get_context("fork").Pool(1) as pool:
        status, err = pool.apply(_build_in_worker, (str(srcdir),))
    assert status == 0, err
    assert "daemonic" not in err and "Traceback" not in err
    assert (srcdir / "_build" / "torchtrace" / "simple" / "index.html").is_file()


@pytest.mark.campaign
def test_a_sample_of_the_generating_campaign_finds_nothing(tmp_path: Path) -> None:
    """A few hundred generated inputs of every kind through reader, command line, plan and
    every page view, and a few of them built by Sphinx (html, text, latex, epub): nothing
    raises, no warning but torchtrace's (the whole campaign: ``nox -s generate``)."""
    sys.path.insert(0, str(BENCHMARKS))
    import generate_campaign as g

    args = g.parse_args(
        [
            "--inputs",
            "240",
            "--builds",
            "4",
            "--seed",
            "35",
            "--progress",
            "0",
            "--builders",
            "html,text,latex,epub",
        ]
    )
    report = g.campaign(args)
    assert report.tried == 240 and set(report.kinds) == set(g.KIND_WEIGHTS)
    assert report.built == 4 and report.pages > 1000
    assert {"chromium_event", "compilation_metrics", f"artifact {RUNTIME_META}"} <= report.written
    assert report.findings == {}, "\n\n".join(
        f"{key}: {case}\n{tb}" for key, (tb, case, _) in report.findings.items()
    )
