"""A comparison of two runs in the formats CI reads: text, JSON, Markdown, GitHub
workflow commands and JUnit XML (``sphinx-torchtrace diff --format``).

Every string of a log is data in each of them: escaped for a terminal (no control
character reaches it, no line starts with log text), for Markdown (in code spans and
code blocks only, where GitHub makes no link, mention, emoji, math or HTML of it), for
GitHub's workflow commands (no input can end a command or start one:
``%``, CR, LF, and ``:`` ``,`` in properties are percent-encoded, as the runner's
own toolkit does) and for XML (characters XML 1.0 forbids are escaped first).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..site.characters import console_json, console_text
from ..trace.comparing.changes import FrameDiff, TraceDiff
from ..trace.comparing.json_form import diff_json, regressions_json
from ..trace.comparing.regressions import Regression
from ..trace.comparing.text_report import header_lines, report_lines
from ..trace.comparing.trend import Trend, trend_lines

FORMATS = ("text", "json", "markdown", "github", "junit")


@dataclass(frozen=True)
class Report:
    """What every format shows: the comparison, its regressions, the inputs' names."""

    diff: TraceDiff
    found: list[Regression]
    baseline: str  # the inputs as the user named them
    new: str
    settings: dict[str, Any]
    trend: Trend | None = None  # three runs or more: each function over all of them

    @property
    def exit_status(self) -> int:
        """2: nothing compared (a CI job must not pass); 1: a regression; 2: something of
        the inputs not read (a gate never passes on what it did not read); 0: none."""
        if self.diff.nothing_compared:
            return 2
        if self.found:
            return 1
        return 2 if self.diff.unread else 0


def render(report: Report, fmt: str) -> str:
    """The report in one of :data:`FORMATS`, ready to print (ends with a newline)."""
    renderers: dict[str, Callable[[Report], str]] = {
        "text": text,
        "json": as_json,
        "markdown": markdown,
        "github": github,
        "junit": junit,
    }
    return renderers[fmt](report)


# -- text -----------------------------------------------------------------------------------


def text(report: Report) -> str:
    lines = trend_lines(report.trend) if report.trend is not None else []
    if lines:
        lines.append("the last two runs:")
    lines += header_lines(report.diff, report.baseline, report.new)
    lines += report_lines(report.diff)
    if report.found:
        lines.append(f"{len(report.found)} regression(s):")
        for g in report.found:
            lines.append(f"  [{g.kind}] {g.message}")
            for side, where in g.evidence:
                lines.append(f"    evidence: {side} {where}")
    return "".join(console_text(line) + "\n" for line in lines)


# -- JSON -----------------------------------------------------------------------------------


def as_json(report: Report) -> str:
    data = diff_json(report.diff)
    data["inputs"] = {"baseline": report.baseline, "new": report.new}
    data["regressions"] = regressions_json(report.found)
    data["fail_on"] = report.settings
    data["exit_status"] = report.exit_status
    if report.trend is not None:
        data["trend"] = trend_json(report.trend)
    return console_json(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


# -- Markdown -------------------------------------------------------------------------------

_BACKQUOTES = re.compile("`+")


def md(value: object, cell: bool = True) -> str:
    """Input text as Markdown: one line (controls made visible) in a code span, the one
    inline GitHub shows as it is.  Outside code, escaping is not enough: GitHub links
    ``@org/team``, ``#12``, bare URLs, ``www.`` and e-mail addresses, renders ``$..$``
    as math and ``:name:`` as emoji in text a backslash escape leaves as text.

    The span is delimited by one backquote more than the text's longest run of them, so
    nothing in it can end it.  In a table ``cell`` each ``|`` is ``\\|``: GitHub's table
    reads it before the span (a bare one would end the cell, and the span with it).
    """
    flat = console_text(str(value))
    if not flat:
        return ""
    fence = "`" * (max(map(len, _BACKQUOTES.findall(flat)), default=0) + 1)
    # a span that starts or ends with a backquote or space is padded: one space each side
    # is taken off again when both are spaces
    pad = " " if flat[0] in "` " or flat[-1] in "` " else ""
    span = f"{fence}{pad}{flat}{pad}{fence}"
    return span.replace("|", "\\|") if cell else span


def md_block(lines: list[str], info: str = "text") -> list[str]:
    """Lines as a fenced code block whose fence no line of theirs can close or extend."""
    longest = max((len(r) for line in lines for r in _BACKQUOTES.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *lines, fence]


def markdown(report: Report) -> str:
    """For ``$GITHUB_STEP_SUMMARY`` or a pull-request comment: the verdict, the setup, a
    table of regressions and one of improvements, the details folded."""
    diff = report.diff
    out = ["## torch.compile: baseline vs new run", ""]
    if diff.nothing_compared:
        verdict = f"**Nothing compared**: {md(diff.nothing_compared, cell=False)}"
    elif report.found:
        verdict = f"**{len(report.found)} regression(s)**"
    elif diff.unread:
        verdict = f"**Not everything read**: {len(diff.unread)} input problem(s), below"
    else:
        verdict = "**No regression**" + (" (no change in compilation)" if diff.unchanged else "")
    out += [verdict, "", "| | Input | Built with |", "|---|---|---|"]
    for name, path, facts in (
        ("Baseline", report.baseline, diff.baseline_facts),
        ("New run", report.new, diff.new_facts),
    ):
        out.append(f"| {name} | {md(path)} | {md(facts.describe()) if facts else ''} |")
    out.append("")
    if diff.setup:
        out.append("> [!WARNING]")
        out.append("> Not like for like:")
        out += [f"> - {md(d, cell=False)}" for d in diff.setup]
        out.append("")
    if diff.unread:
        out.append("> [!CAUTION]")
        out.append("> Not read, so not compared (the verdict cannot be a pass):")
        out += [f"> - {md(d, cell=False)}" for d in diff.unread]
        out.append("")
    if report.found:
        out += ["### Regressions", "", "| Kind | Rank | What | Evidence |", "|---|---|---|---|"]
        for g in report.found:
            evidence = "<br>".join(f"{side} {md(where)}" for side, where in g.evidence)
            out.append(f"| {md(g.kind)} | {g.rank} | {md(g.message)} | {evidence} |")
        out.append("")
    better = _improvements(diff)
    if better:
        out += ["### Improvements", "", "| Rank | What |", "|---|---|"]
        out += [f"| {rank} | {md(what)} |" for rank, what in better]
        out.append("")
    if report.trend is not None:
        out += _trend_markdown(report.trend)
    out += ["<details><summary>Every change</summary>", ""]
    out += md_block(text(report).splitlines())
    out += ["", "</details>", ""]
    return "\n".join(out)


def _trend_markdown(result: Trend) -> list[str]:
    out = [
        "### Trend",
        "",
        "| Function | " + " | ".join(md(x) for x in result.labels) + " |",
        "|---|" + "---|" * len(result.labels),
    ]
    for row in result.rows:
        rank = f"rank {row.rank}: " if result.multi_rank else ""
        cells = " | ".join(md(c.describe()) for c in row.cells)
        out.append(f"| {md(rank + row.label)} | {cells} |")
    return [*out, ""]


def trend_json(result: Trend) -> dict[str, Any]:
    return {
        "runs": result.labels,
        "setup_differences": result.setup,
        "rows_left_out": result.rows_left_out,
        "rows": [
            {
                "rank": row.rank,
                "file": row.key.file,
                "function": row.key.function,
                "occurrence": row.key.occurrence,
                "cells": [
                    {
                        "status": c.status,
                        "graph_breaks": c.graph_breaks,
                        "recompiles": c.recompiles,
                        "seconds": c.seconds,
                        "label": c.label,
                        "evidence": c.evidence,
                        "runtime": None
                        if c.runtime is None
                        else {"calls": c.runtime[0], "own_us": round(c.runtime[1], 3)},
                    }
                    for c in row.cells
                ],
            }
            for row in result.rows
        ],
    }


def _improvements(diff: TraceDiff) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for r in diff.ranks:
        out += [(r.rank, f"graph break fixed: {b}") for b in r.breaks_fixed]
        out += [(r.rank, f"compile error fixed: {e}") for e in r.errors_fixed]
        for f in r.frames:
            if f.baseline and f.new and f.new.versions < f.baseline.versions:
                out.append(
                    (
                        r.rank,
                        f"{f.key}: compiled {f.new.versions} times (was {f.baseline.versions})",
                    )
                )
    return out


# -- GitHub workflow commands -----------------------------------------------------------------


def gh_data(value: object) -> str:
    """A command's message: controls made visible, then ``%``, CR and LF encoded."""
    return console_text(str(value)).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(value: object) -> str:
    """A command's property (``file``, ``title``): also ``:`` and ``,`` encoded."""
    return gh_data(value).replace(":", "%3A").replace(",", "%2C")


def github(report: Report) -> str:
    """``::error``/``::warning``/``::notice`` lines: each regression an error annotation at
    the log record it rests on, setup differences warnings, improvements notices."""
    lines: list[str] = []
    diff = report.diff
    if diff.nothing_compared:
        lines.append(
            f"::error title={gh_property('nothing compared')}::{gh_data(diff.nothing_compared)}"
        )
    for d in diff.setup:
        lines.append(f"::warning title={gh_property('not like for like')}::{gh_data(d)}")
    for d in diff.unread:
        lines.append(f"::error title={gh_property('not read')}::{gh_data(d)}")
    for g in report.found:
        where = _location(g.evidence[-1][1]) if g.evidence else None
        place = f"file={gh_property(where[0])},line={where[1]}," if where else ""
        title = gh_property(f"torch.compile regression: {g.kind}")
        lines.append(f"::error {place}title={title}::{gh_data(g.message)}")
    for rank, what in _improvements(diff):
        lines.append(
            f"::notice title={gh_property('torch.compile improvement')}::"
            f"{gh_data(f'rank {rank}: {what}')}"
        )
    if not lines:
        lines.append("::notice title=torch.compile::no regression")
    return "".join(line + "\n" for line in lines)


def _location(evidence: str) -> tuple[str, int] | None:
    path, sep, line = evidence.rpartition(":")
    return (path, int(line)) if sep and line.isdigit() else None


# -- JUnit XML ------------------------------------------------------------------------------

_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def xml_text(value: object) -> str:
    """Text XML 1.0 can hold: controls made visible (ElementTree escapes the markup)."""
    return _XML_FORBIDDEN.sub(lambda m: f"\\x{ord(m.group()):02x}", console_text(str(value)))


def junit(report: Report) -> str:
    """One test case per frame of the comparison (``rank0.program.py:step``), failed by its
    regressions; whole-run regressions (a new graph break, a new error) and an empty
    comparison are failures of a ``run`` case, so a CI's test tab shows each."""
    cases: list[tuple[str, str, list[Regression], FrameDiff | None]] = []
    by_frame: dict[tuple[int, str | None], list[Regression]] = {}
    for g in report.found:
        by_frame.setdefault((g.rank, g.frame), []).append(g)
    for r in [*report.diff.ranks, *report.diff.new_only]:
        for f in r.frames:
            cases.append((f"rank{r.rank}", str(f.key), by_frame.get((r.rank, str(f.key)), []), f))
        cases.append((f"rank{r.rank}", "run", by_frame.get((r.rank, None), []), None))
    suites = ET.Element("testsuites", name="torch.compile comparison")
    unread = report.diff.unread
    failures = (
        sum(1 for _, _, found, _ in cases if found)
        + bool(report.diff.nothing_compared)
        + bool(unread)
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="torch.compile comparison",
        tests=str(len(cases) + bool(report.diff.nothing_compared) + bool(unread)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    if unread:
        case = ET.SubElement(suite, "testcase", classname="comparison", name="inputs read")
        failure = ET.SubElement(case, "failure", message=xml_text(unread[0]), type="not_read")
        failure.text = xml_text("\n".join(unread))
    if report.diff.nothing_compared:
        case = ET.SubElement(suite, "testcase", classname="comparison", name="compared")
        failure = ET.SubElement(
            case, "failure", message=xml_text(report.diff.nothing_compared), type="nothing_compared"
        )
        failure.text = xml_text(report.diff.nothing_compared)
    for classname, name, found, frame in cases:
        if frame is not None and frame.match == "ambiguous":
            name += " (ambiguous match)"
        case = ET.SubElement(suite, "testcase", classname=classname, name=xml_text(name))
        for g in found:
            failure = ET.SubElement(case, "failure", message=xml_text(g.message), type=g.kind)
            failure.text = xml_text(
                "\n".join([g.message, *(f"evidence: {side} {where}" for side, where in g.evidence)])
            )
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
