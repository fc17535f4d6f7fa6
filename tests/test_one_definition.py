"""One definition of a version, a refusal and a function, and sentences a run cannot
contradict, on logs captured for the purpose (``tests/capture/issue52/``, each with the
program's own account of every call in ``program-output.events``):

- ``limit_fullgraph``: ``step`` (fullgraph, recompile_limit 3) made 3 versions and raised
  ``FailOnRecompileLimitHit`` at 4 more calls; ``guarded`` made 1 and raised
  ``RecompileError`` (error_on_recompile); ``plain`` made 2, then ran on past the limit;
- ``guard_sources``: one recompile per kind of guard source (a global, a module attribute,
  a closure cell, a list length, dict keys, grad mode, a declared ``mark_dynamic`` range, a
  guard whose source raised, an identical graph remade from the caches);
- ``unbacked_no_export``: unbacked symbols from ``torch.compile``, no ``torch.export``;
- ``more_guards``: recompiles on autocast, a list element, a dict value, strides and
  requires_grad;
- ``global_settings``: recompiles on the default dtype and deterministic algorithms;
- ``reset_functions``: after ``torch._dynamo.reset()`` one function compiles under
  another frame id.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from sphinx_torchtrace.site.guard_words import guard_words
from sphinx_torchtrace.site.pages.frame import frame_page
from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.plan import FramePlan, PageSettings, TracePlan, plan_trace
from sphinx_torchtrace.trace import Trace, load_trace
from sphinx_torchtrace.trace.analyses import compare
from sphinx_torchtrace.trace.analyses.glance import triage
from sphinx_torchtrace.trace.analyses.naming import compiled_function
from sphinx_torchtrace.trace.analyses.recompiles import recompiled_functions

from .conftest import DATA

CAPTURED = DATA / "captured"
LIMIT = CAPTURED / "limit_fullgraph"
GUARDS = CAPTURED / "guard_sources"
EVENT = re.compile(r"^EVENT (\S+)(?: exc=(\S+))? fn=(\S+)")


@cache
def _trace(path: Path) -> Trace:
    return load_trace(path)


@cache
def _plan(path: Path) -> TracePlan:
    return plan_trace("t", _trace(path), "torchtrace", fold_bytes=0)


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            yield from _strings(getattr(value, name))


def _text(value: object) -> str:
    return re.sub(r"\s+", " ", " ".join(s for s in _strings(value) if s.strip()))


def _frame(path: Path, label: str, rank: int | None = None) -> FramePlan:
    return next(
        f
        for f in _plan(path).frames
        if f.compile.label == label and (rank is None or f.rank.rank == rank)
    )


def _page(path: Path, label: str) -> str:
    plan = _plan(path)
    return _text(frame_page(plan, _frame(path, label), PageSettings()).blocks)


def _overview(path: Path) -> str:
    return _text(overview_page(_plan(path), PageSettings()).blocks)


def _program(path: Path) -> list[tuple[str, str | None, str]]:
    lines = (path / "program-output.events").read_text(encoding="utf-8").splitlines()
    return [(m[1], m[2], m[3]) for line in lines if (m := EVENT.match(line))]


# -- a. versions, refusals, functions -------------------------------------------------------


def test_versions_and_refusals_count_what_the_program_saw() -> None:
    """The program compiled step 3 times and plain twice, guarded once; every other call
    was refused.  The pages said "step: 7 versions, 6 recompiles", "guarded: 2 versions"
    and "the recompile limit refused 1 more" (it refused 5), and named 4 functions."""
    events = _program(LIMIT)
    compiled = Counter(fn for what, _, fn in events if what == "compiled")
    raised = Counter(exc for what, exc, _ in events if what == "raised")
    assert compiled == {"step": 3, "guarded": 1, "plain": 2}
    rank = _trace(LIMIT).ranks[0]
    functions = {fn.function: fn for fn in recompiled_functions(rank)}
    assert {
        name: (fn.versions, len(fn.recompiles), len(fn.refused)) for name, fn in functions.items()
    } == {"step": (3, 2, 4), "guarded": (1, 0, 1), "plain": (2, 1, 1)}
    for name, fn in functions.items():
        assert fn.versions == compiled[name]
    t = triage(_trace(LIMIT))
    assert t.frames == len(compiled)  # a refused compile that names no code is step's
    assert t.recompiles == sum(n - 1 for n in compiled.values())
    limit_raised = [c for c in t.limit_hits if compare.hit_limit(c)]
    assert len(limit_raised) == 5 and len(t.error_on_recompile) == raised["RecompileError"]
    assert raised["FailOnRecompileLimitHit"] == 4
    named = {compiled_function(rank, c)[0] for c in rank.compiles if not c.id.is_unknown}
    assert named == {"step", "guarded", "plain"}
    glance = _overview(LIMIT)
    assert "3 functions" in glance and "3 recompiles" in glance
    assert "the recompile limit refused 5 more" in glance
    assert "4 raised as FailOnRecompileLimitHit" in glance
    assert "error_on_recompile refused 1 more" in glance
    out = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", "--json", str(LIMIT)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    assert (data["frames"], data["recompiles"], data["limit_hits"]) == (3, 3, 5)
    assert data["error_on_recompile"] == 1


def test_one_function_across_a_reset_is_one_function() -> None:
    """After ``torch._dynamo.reset()`` f2 took frame id 0 and f1 came back as [1/*]: f1 was
    counted as two functions, with 3 versions where it made 4."""
    path = CAPTURED / "reset_functions"
    events = _program(path)
    compiled = Counter(fn for what, _, fn in events if what == "compiled")
    assert compiled == {"f1": 4, "f2": 1}
    t = triage(_trace(path))
    assert t.frames == 2 and t.recompiles == 2 and len(t.limit_hits) == 1
    (f1,) = recompiled_functions(_trace(path).ranks[0])
    assert (f1.function, f1.frame_label, f1.versions, f1.runs) == ("f1", "[0/*], [1/*]", 4, 2)
    assert "f1 ( [0/*], [1/*] ) : 4 versions in 2 runs of its compile ids" in _overview(path)


def test_a_refused_compile_is_never_compiled_again_nor_before() -> None:
    """[0/4] (refused) followed [0/3] (refused): its page said "Compiled again after [0/3],
    which failed ... The log records no reason for this compile" above the reasons it
    quoted, and [0/3]'s page said "Compiled again: [0/4]"."""
    page = _page(LIMIT, "[0/4]")
    assert "Compiled again" not in page and "records no reason" not in page
    assert "Compiled before: frame t/[0/2]" in page
    assert "The code compiled for frame t/[0/2] did not fit the new inputs" in page
    assert "No version was made: the recompile limit was hit under fullgraph=True" in page
    assert "Why it was asked for a new version" in page
    before = _page(LIMIT, "[0/2]")
    assert "Next compile: frame t/[0/3] (refused: no version made)" in before


# -- b. fail_reason guards are logged reasons -----------------------------------------------


def test_the_guards_a_recompile_error_lists_are_its_logged_reasons() -> None:
    """error_on_recompile: torch logs no recompile_reasons, its RecompileError's
    fail_reason lists the failed guard.  The page said "The log records no reason for this
    recompile" and quoted that guard two sections lower."""
    rank = _trace(LIMIT).ranks[0]
    c = rank.compile("[1/1]")
    assert not c.recompile_reasons
    assert compare.logged_reasons(c) == [
        "1/0: tensor 'x' size mismatch at index 0. expected 3, actual 4"
    ]
    page = _page(LIMIT, "[1/1]")
    assert "records no reason" not in page
    record = next(m for m in c.compilation_metrics if m.fail_type == "RecompileError")
    assert (
        "The code compiled for frame t/[1/0] did not fit the new inputs; the guard that failed "
        f"(compilation_metrics fail_reason, line {record.line} of the log) : "
        "tensor 'x' size mismatch at index 0. expected 3, actual 4"
    ) in page


# -- c. a feature's section only where its records are --------------------------------------


def test_no_export_report_without_torch_export() -> None:
    """Unbacked symbols from torch.compile made an "Export report ... No issues were found"
    section on a program that never called torch.export."""
    path = CAPTURED / "unbacked_no_export"
    rank = _trace(path).ranks[0]
    assert rank.export.unbacked_symbols and not rank.export.exported
    assert "Export report" not in _overview(path)
    assert "Export report" in _overview(CAPTURED / "draft_export")  # a draft export's


# -- d. no generic sentence a run contradicts -----------------------------------------------


def test_the_recompile_limit_sentence_says_what_this_run_did() -> None:
    """ "a call that fits none of its versions runs eagerly" was said where those calls
    raised FailOnRecompileLimitHit."""
    limit = _overview(LIMIT)
    assert "runs eagerly" not in limit
    assert (
        "(FailOnRecompileLimitHit): at 4 calls ( frame t/[0/3] , frame t/[0/4] , frame t/[0/5] , "
        "frame t/[0/6] ) torch made no new version; the error was raised to the program."
    ) in limit
    assert "error_on_recompile was set (RecompileError): at 1 call" in limit
    assert "or the frame eagerly where none fit" in limit  # plain's [2/2], the Unsupported
    guards = _overview(GUARDS)
    assert "runs eagerly" not in guards
    assert "In this run no function was refused a new version." in guards


# -- e. guard words from the guard's source -------------------------------------------------


def test_guard_words_follow_the_guards_source() -> None:
    """A global flag, a module attribute and a closure cell were all "a Python number or
    shape the code was specialized on"; a declared mark_dynamic range was a specialization;
    grad mode was named first where the same-mode version failed on a shape."""
    rank = _trace(GUARDS).ranks[0]
    kinds = {
        fn.function: [rc.headline.kind for rc in fn.recompiles if rc.headline is not None]
        for fn in recompiled_functions(rank)
    }
    assert kinds == {
        "flag_fn": ["global"],
        "forward": ["module_attribute"],
        "closure_fn": ["value"],  # its own free variable, read as a local
        "list_fn": ["length"],
        "dict_fn": ["dict_keys"],
        "grad_fn": ["grad_mode", "shape"],
        "dyn_fn": ["declared_range"],
        "cell_fn": ["closure"],
        "same_fn": ["global"],
    }
    assert guard_words("declared_range") != guard_words("value")
    assert "specialized" not in guard_words("declared_range")
    overview = _overview(GUARDS)
    for words in (
        "a global variable has a new value",
        "an attribute of the module (self) has a new value",
        "a variable of an enclosing function (a closure cell) has a new value",
        "a dict has other keys",
        "an input size is outside the range declared for it (mark_dynamic min/max)",
    ):
        assert words in overview, words


def test_a_global_setting_is_named_as_the_log_names_it() -> None:
    """ "GLOBAL_STATE changed: default_dtype" read "global state (grad mode, autocast,
    deterministic algorithms ...) changed": three other settings, not the one logged."""
    path = CAPTURED / "global_settings"
    rank = _trace(path).ranks[0]
    kinds = {
        fn.function: [g.kind for rc in fn.recompiles for g in rc.reasons]
        for fn in recompiled_functions(rank)
    }
    assert kinds == {"dt_fn": ["default_dtype"], "det_fn": ["deterministic"]}
    overview = _overview(path)
    assert "the default dtype changed (torch.set_default_dtype)" in overview
    assert "the deterministic-algorithms setting changed" in overview
    assert "global state (grad mode" not in overview


def test_autocast_and_elements_are_named_as_the_log_names_them() -> None:
    """ "GLOBAL_STATE changed: autocast(cpu)_enabled" read as global state in general, and
    ``xs[0] == 2`` / ``d['k'] == 2`` as a value the code was specialized on, like a bare
    argument."""
    path = CAPTURED / "more_guards"
    rank = _trace(path).ranks[0]
    kinds = {
        fn.function: [g.kind for rc in fn.recompiles for g in rc.reasons]
        for fn in recompiled_functions(rank)
    }
    assert kinds == {
        "mm_fn": ["autocast"],
        "item_fn": ["item"],
        "value_fn": ["item"],
        "stride_fn": ["strides"],
        "grad_flag_fn": ["requires_grad"],
    }
    assert "an element of a list, tuple or dict the code reads has a new value" in _overview(path)


def test_the_guard_named_first_is_against_the_version_of_the_same_grad_mode() -> None:
    """[5/2] ran under no_grad: torch lists [5/1] (grad enabled: GLOBAL_STATE) first, but
    [5/0], compiled under no_grad too, failed on the shape: that is what changed."""
    page = _page(GUARDS, "[5/2]")
    assert (
        "The code compiled for frame t/[5/0] (the latest version compiled in the same grad "
        "mode and autocast state) did not fit the new inputs; the guard that failed"
    ) in page
    head = page.index("the guard that failed")
    assert page.index("size mismatch", head) < page.index("GLOBAL_STATE", head)


def test_a_guard_whose_source_raised_is_no_failed_guard() -> None:
    """attr_arg_fn's second call passed an object without the attribute its guard reads:
    torch logged "getattr failed on source cfg.a", shown as "the guard that failed"."""
    page = _page(GUARDS, "[8/1]")
    assert "the guard that failed" not in page
    assert "raised an error while reading the value a guard checks, so no check failed" in page
    assert "getattr failed on source cfg.a" in page
    assert [e for e in _program(GUARDS) if e[2] == "attr_arg_fn"][-1][:2] == (
        "raised",
        "AttributeError",
    )


def test_a_recompile_to_the_same_graph_from_the_caches_is_named() -> None:
    rank = _trace(GUARDS).ranks[0]
    same = next(fn for fn in recompiled_functions(rank) if fn.function == "same_fn")
    assert [rc.same_graph_cached for rc in same.recompiles] == [True]
    others = [
        rc.same_graph_cached
        for fn in recompiled_functions(rank)
        if fn.function != "same_fn"
        for rc in fn.recompiles
    ]
    assert not any(others)
    page = _page(GUARDS, "[9/1]")
    assert (
        "This recompile made the same Dynamo graph as [9/0], and every cache lookup hit "
        "(fx_graph hit, aotautograd hit)"
    ) in page
    assert "(the same graph again, every cache lookup a hit)" in _overview(GUARDS)


# -- f. version notes take the log's torch version ------------------------------------------


def test_version_notes_name_the_logs_torch() -> None:
    path = DATA / "corpus" / "torch-2.15.0" / "failures_raised_suppressed"
    plan = _plan(path)
    said = [
        t
        for f in plan.paged_frames
        if not f.compile.id.is_unknown
        if "comment for some kernels only" in (t := _text(frame_page(plan, f, PageSettings())))
    ]
    assert said
    for text in said:
        assert "torch 2.13" not in text and "(torch 2.15.0" in text


# -- g. previous and next stay within one function's versions -------------------------------


@pytest.mark.parametrize(
    "rel", ["corpus/ddp_4ranks_divergent", "corpus/torchrun_ranks", "captured/multi_rank_gloo"]
)
def test_previous_and_next_stay_within_one_functions_versions(rel: str) -> None:
    """Rank 1's [1/0] linked as previous to rank 0's [1/0], and rank 0's [1/0] to its
    [0/0], another function."""
    path = DATA / rel
    plan = _plan(path)
    rank = {id(r): r for r in plan.trace.ranks}
    linked = 0
    for frame in plan.paged_frames:
        if frame.compile.id.is_unknown:
            continue
        for other in plan.neighbours(frame):
            if other is None:
                continue
            linked += 1
            assert other.rank is frame.rank, (rel, frame.docname, other.docname)
            r = rank[id(frame.rank)]
            assert other.compile.id.frame_id == frame.compile.id.frame_id
            assert compiled_function(r, other.compile)[0] == compiled_function(r, frame.compile)[0]
    assert linked
