"""Comparisons a CI job can trust: like for like or said otherwise, nothing compared is
exit 2, every finding names its records (``show`` prints them), and the formats CI
reads (JSON with a schema, Markdown, GitHub annotations, JUnit) hold any log text."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import xmlschema
from markdown_it import MarkdownIt
from markdown_it.token import Token

from sphinx_torchtrace.render.diff_formats import Report, github, junit, markdown
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.comparing.diff import diff_traces
from sphinx_torchtrace.trace.comparing.regressions import Regression, regressions

from .conftest import DATA, SIMPLE_LOG
from .test_cli import run
from .tools.hostile_log import format_record, read_records

PAIRS = DATA / "captured" / "pairs"
GLOO = DATA / "captured" / "multi_rank_gloo"
SCHEMA = Path(__file__).parents[1] / "sphinx_torchtrace" / "schemas" / "diff.schema.json"
JUNIT_XSD = DATA / "schemas" / "junit.xsd"


def _pair(name: str) -> tuple[Path, Path]:
    return PAIRS / name / "baseline", PAIRS / name / "new"


def test_two_different_programs_compare_nothing_and_exit_2() -> None:
    other = next((PAIRS / "recompile" / "new").glob("*.log"))
    result = run("diff", SIMPLE_LOG, other)
    assert result.returncode == 2, result.stdout
    assert "nothing compared: no frame of the baseline matches one of the new run" in (
        result.stdout
    )


def test_logs_of_two_ranks_share_no_rank_unless_paired() -> None:
    rank0, rank1 = sorted(GLOO.glob("*.log"))
    result = run("diff", rank0, rank1)
    assert result.returncode == 2
    assert "the runs share no rank (baseline ranks 0, new ranks 1)" in result.stdout
    assert "--ranks BASELINE:NEW" in result.stdout
    paired = run("diff", rank0, rank1, "--ranks", "0:1")
    assert paired.returncode in (0, 1), paired.stdout + paired.stderr
    assert "nothing compared" not in paired.stdout
    assert run("diff", rank0, rank1, "--ranks", "zero").returncode == 2


def test_another_torch_build_is_not_like_for_like(tmp_path: Path) -> None:
    """A baseline made with another PyTorch: said in the header, in JSON, and still
    compared (the frames match)."""
    (log,) = (PAIRS / "recompile" / "baseline").glob("*.log")
    other = tmp_path / "other.log"
    other.write_text(
        log.read_text("utf-8").replace('"2.13.0+cpu"', '"2.15.0+cu132"'), encoding="utf-8"
    )
    result = run("diff", other, PAIRS / "recompile" / "new")
    assert result.returncode == 1  # the recompile is still found
    assert (
        "not like for like: PyTorch 2.15.0+cu132 (commit cf30153c4c13) in the baseline, "
        "2.13.0+cpu (commit cf30153c4c13) in the new run"
    ) in result.stdout
    data = json.loads(run("diff", other, PAIRS / "recompile" / "new", "--json").stdout)
    assert data["setup"]["baseline"]["torch"] == ["2.15.0+cu132 (commit cf30153c4c13)"]
    assert data["setup"]["differences"] and data["nothing_compared"] is None


@pytest.mark.parametrize("name", ["graph_break_fixed", "recompile", "compile_error", "cache_warm"])
def test_every_finding_has_evidence_that_show_prints(name: str) -> None:
    """Both ways round (a fix one way is a regression the other): every regression and
    every changed frame names ``log:line`` records; ``show`` prints each, its first line
    the record's envelope; the JSON holds to its schema."""
    schema = json.loads(SCHEMA.read_text("utf-8"))
    old, new = _pair(name)
    for a, b in ((old, new), (new, old)):
        result = run("diff", a, b, "--json", "--fail-on", "error,graph_break,recompile,kernels")
        data = json.loads(result.stdout)
        jsonschema.validate(data, schema)
        assert data["exit_status"] == result.returncode
        places = [w for g in data["regressions"] for w in g["evidence"].values()]
        for r in data["ranks"]:
            for f in r["frames"]:
                assert f["match"] in ("matched", "ambiguous", "new", "gone")
                places += f["evidence"].values()
            places += [
                s["evidence"]
                for k in ("graph_breaks_new", "graph_breaks_fixed", "errors_new", "errors_fixed")
                for s in r[k]
            ]
        assert data["regressions"] == [] or all(g["evidence"] for g in data["regressions"])
        for where in places[:12]:
            shown = run("show", where)
            assert shown.returncode == 0, shown.stderr
            first = shown.stdout.splitlines()[1]
            assert re.match(r"  [VIWE]\d{4} ", first), first  # a glog record, indented


def test_show_refuses_what_is_not_there(tmp_path: Path) -> None:
    assert run("show", f"{SIMPLE_LOG}:999999").returncode == 2
    assert run("show", "nothing.log:1").returncode == 2
    assert run("show", str(SIMPLE_LOG)).returncode == 2


HOSTILE = "step\n::error file=x.py::pwned\x1b[31m,%0A"


def _hostile_report(tmp_path: Path) -> Report:
    """A real comparison (a new compile error), plus findings whose texts and evidence
    carry a workflow command, an ESC sequence and percent escapes: formats treat every
    string of a log, and every input name, as untrusted."""
    diff = diff_traces(*(load_trace(p) for p in _pair("compile_error")))
    found = regressions(diff)
    assert found
    found.append(
        Regression(
            "graph_break",
            0,
            None,
            f"new graph break: {HOSTILE} | `x` <b>",
            (("new", f"{HOSTILE}.log:12"),),
        )
    )
    return Report(diff, found, "base\n::error::x", "new|`<i>`", {})


def test_github_annotations_cannot_be_forged(tmp_path: Path) -> None:
    out = github(_hostile_report(tmp_path))
    lines = out.splitlines()
    assert len(lines) == out.count("\n")  # no input made a line of its own
    for line in lines:
        # one command per line, its properties whole (no input ":" or "," ends one early);
        # what follows the second "::" is data, which GitHub never reads as a command
        match = re.fullmatch(r"::(error|warning|notice) (\w+=[^,:]*(?:,\w+=[^,:]*)*)::(.*)", line)
        assert match, line
        assert "\x1b" not in line and "\r" not in line
    assert "%250A" in out  # the input's own "%0A" is encoded, not read as a newline
    forged = next(line for line in lines if "pwned" in line)
    assert forged.startswith("::error file=step\\x0a%3A%3Aerror file=x.py%3A%3Apwned")


def test_markdown_is_markdown_without_markup_from_the_log(tmp_path: Path) -> None:
    out = markdown(_hostile_report(tmp_path))
    tokens = MarkdownIt().enable("table").parse(out)
    kinds = {t.type for t in tokens}
    assert {"table_open", "heading_open"} <= kinds
    assert "html_inline" not in kinds  # no HTML from the log (details/summary are blocks)
    inline = [t for t in tokens if t.type == "html_block"]
    assert all(t.content.startswith(("<details>", "</details>")) for t in inline), inline
    assert "\x1b" not in out


#: What GitHub makes active in Markdown text: a team mention, a bare URL, a ``www.`` link,
#: an e-mail address, an issue reference, math, an emoji, HTML, an entity, a link, an image,
#: a run of backquotes (to close a code span), a pipe (to end a table cell), a backslash.
ACTIVE = (
    "@org/team http://evil.example/x www.evil.example a@b.example #12 org/repo#3 $x^2$ "
    ":tada: <b>x</b> &amp; [l](http://e.example) ![i](http://e.example/i.png) ``` | \\| _u_"
)


def _renamed_copy(log: Path, out: Path, old: str, new: str) -> Path:
    """The log with the function ``old`` named ``new`` in every envelope string."""

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace(old, new)
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        return [rename(v) for v in value] if isinstance(value, list) else value

    records = read_records(log)
    for record in records:
        record.envelope = rename(record.envelope)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(format_record(r) for r in records), encoding="utf-8")
    return out


def _tokens(tokens: list[Token]) -> list[Token]:
    """Every token, inline children included."""
    return [x for t in tokens for x in (t, *_tokens(t.children or []))]


@pytest.mark.parametrize(("pair", "function"), [("compile_error", "clip"), ("recompile", "scale")])
def test_markdown_holds_input_text_in_code_only(tmp_path: Path, pair: str, function: str) -> None:
    """A real comparison whose function and inputs are named with everything GitHub makes
    active: each name is in code spans and the code block only (where GitHub links,
    mentions and renders nothing), whole, as given; the rest is the report's own."""
    name = f"f {ACTIVE}"
    logs = [
        _renamed_copy(next(p.glob("*.log")), tmp_path / side / "run.log", function, name)
        for side, p in zip(("baseline", "new"), _pair(pair), strict=True)
    ]
    diff = diff_traces(*(load_trace(p) for p in logs))
    found = regressions(diff)
    assert found
    out = markdown(Report(diff, found, f"base {ACTIVE}", f"new {ACTIVE}", {}))
    parser = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    if importlib.util.find_spec("linkify_it") is not None:
        parser.enable("linkify").set({"linkify": True})
    tokens = _tokens(parser.parse(out))
    code = [t.content for t in tokens if t.type in ("code_inline", "fence")]
    assert any(name in c for c in code)  # whole: no "|" or backquote cut it short
    if pair == "recompile":  # the regression's own cell
        assert any(c.startswith(f"program.py:{name}: compiled 3 times") for c in code)
    assert f"base {ACTIVE}" in code and f"new {ACTIVE}" in code
    assert {t.type for t in tokens}.isdisjoint({"link_open", "image", "html_block_open"})
    html = [t.content.strip() for t in tokens if t.type in ("html_inline", "html_block")]
    assert set(html) <= {"<br>", "<details><summary>Every change</summary>", "</details>"}
    words = ("@org", "evil", "a@b", "#12", "$x", ":tada:", "<b>", "&amp;", "http", "_u_")
    prose = [t.content for t in tokens if t.type == "text"]
    assert [p for p in prose if any(w in p for w in words)] == []


def test_junit_validates_and_fails_the_frames_that_regressed(tmp_path: Path) -> None:
    report = _hostile_report(tmp_path)
    out = junit(report)
    schema = xmlschema.XMLSchema(str(JUNIT_XSD))
    schema.validate(out)
    data = schema.to_dict(out)
    suite = data["testsuite"][0]
    assert int(suite["@failures"]) >= 1 and int(suite["@tests"]) >= 2
    plain = run("diff", *_pair("recompile"), "--format", "junit")
    assert plain.returncode == 1
    schema.validate(plain.stdout)
    assert 'name="program.py:scale"' in plain.stdout and "<failure" in plain.stdout


def test_map_settles_a_renamed_function(tmp_path: Path) -> None:
    """A function renamed between the runs: gone and new without the map, matched with it."""
    old, new = _pair("recompile")
    (log,) = new.glob("*.log")
    renamed = tmp_path / "renamed"
    renamed.mkdir()
    shutil.copy(log, renamed / log.name)
    text = (
        (renamed / log.name)
        .read_text("utf-8")
        .replace('"co_name": "scale"', '"co_name": "rescale"')
    )
    (renamed / log.name).write_text(text, encoding="utf-8")
    plain = json.loads(run("diff", old, renamed, "--json").stdout)
    matches = {f["function"]: f["match"] for f in plain["ranks"][0]["frames"]}
    assert matches.get("scale") == "gone" and matches.get("rescale") == "new"
    table = tmp_path / "map.json"
    table.write_text(json.dumps({"scale": "rescale"}), encoding="utf-8")
    mapped = json.loads(run("diff", old, renamed, "--json", "--map", table).stdout)
    matches = {f["function"]: f["match"] for f in mapped["ranks"][0]["frames"]}
    assert matches.get("rescale") == "matched" and "scale" not in matches
    assert run("diff", old, renamed, "--map", tmp_path / "none.json").returncode == 2


def test_object_ids_in_global_names_are_not_changes() -> None:
    from sphinx_torchtrace.trace.comparing.run_frames import _no_numbers

    a = "___optimizer_140234567890_140234567999_c8"
    b = "___optimizer_139999999999_139888888888_c8"
    assert _no_numbers(a) == _no_numbers(b)
