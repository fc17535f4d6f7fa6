"""A sample of the generated-programs campaign (``tests/programs``; the whole: ``nox -s programs``).

Thirty torch programs composed from compile situations (guard sources, a device move among
them, recompile limits with and without ``fullgraph``, ``error_on_recompile`` and the
``fail_on_recompile``, ``force_eager`` and ``eager_on_recompile`` stances, a backend that
raises or is suppressed, the program's own errors, graph breaks, declared, checked and
unbacked sizes, nested compile regions, resets, calls from threads) run under
``TORCH_TRACE``; each prints what torch did per call.  What ``summary --json``, the
recompile table and every frame page say must agree: functions, versions and recompiles per
function, refusals, raised versus eager, which guard changed, where the graph breaks are,
how often a nested compile region is called.  Marked ``torch`` (``nox -s tests-torch``).
"""

from __future__ import annotations

import contextlib
import io

import pytest

pytestmark = pytest.mark.torch


def test_a_sample_of_generated_programs_agrees_with_what_we_publish() -> None:
    pytest.importorskip("torch")
    from .programs.campaign import campaign, parse_args, print_report

    args = parse_args(
        ["--programs", "30", "--seed", "67", "--workers", "2", "--inductor", "0", "--quiet"]
    )
    report = campaign(args)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print_report(report)
    # the sample is what it says: every program ran and was read, the situations are there
    assert report.programs == 30
    assert report.failed == [], text.getvalue()
    kinds = {k.split(":")[0] for k in report.situations}
    assert {"guard", "limit", "break", "dynamic", "error_on_recompile", "user_raise"} <= kinds
    assert {"backend_error_raised", "backend_error_suppressed", "region", "stance"} <= kinds
    assert {
        "device",
        "closure_cell",
        "thread",
        "nested_compile_region",
        "suppressed_fullgraph_break",
        "fail_on_recompile_stance",
        "stance_force_eager",
        "stance_eager_on_recompile",
        "reset",
    } <= set(report.tags)
    assert report.compile_ids >= 100
    unknown = {cls for cls in report.classes if cls not in KNOWN_CLASSES}
    assert unknown == set(), text.getvalue()


#: Disagreements the campaign still finds, each class named, so that no other may appear;
#: issue 52 stays open until this is empty (``nox -s programs`` reports them all, with the
#: programs kept by ``--keep``).  Empty: every class found so far was fixed at its root.
KNOWN_CLASSES: set[str] = set()


#: Programs the whole campaign once found a disagreement in, as (seed, index): run again
#: here.  0/415: a call of a function with graph breaks refused past the recompile limit,
#: the refused frame its resume function's (the oracle had counted it as the function's).
REGRESSIONS = [(0, 415)]


@pytest.mark.parametrize(("seed", "index"), REGRESSIONS)
def test_programs_that_once_disagreed_agree(seed: int, index: int) -> None:
    pytest.importorskip("torch")
    from .programs.campaign import campaign, parse_args, print_report

    args = parse_args(
        ["--programs", "1", "--start", str(index), "--seed", str(seed), "--workers", "1"]
        + ["--quiet"]
    )
    report = campaign(args)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        print_report(report)
    assert report.programs == 1 and report.failed == [], text.getvalue()
    assert report.classes == {}, text.getvalue()
