"""``.. torchtrace-diff::`` in real Sphinx builds, on the captured before/after pairs.

What a CI job sees: which ``torchtrace.regression_*`` warnings each pair gives (and that
``-W`` fails the build on them), the option and config that turn them off or on, the
comparison and its frame pages, and links to both runs' frame pages when both are in the site.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from sphinx.errors import SphinxWarning
from sphinx.testing.util import SphinxTestApp

from .conftest import SiteMaker, warnings_of

PAIRS = "@DATA@/captured/pairs"


def _diff(name: str, pair: str, *options: str, reverse: bool = False) -> str:
    old, new = ("new", "baseline") if reverse else ("baseline", "new")
    lines = [
        f".. torchtrace-diff:: {PAIRS}/{pair}/{old} {PAIRS}/{pair}/{new}",
        f"   :name: {name}",
        *(f"   {o}" for o in options),
    ]
    return "\n".join(lines) + "\n\n"


def _page(*directives: str) -> str:
    return "Comparisons\n===========\n\n" + "".join(directives)


def _warned(app: SphinxTestApp) -> Counter[tuple[str, str]]:
    """(comparison label, subtype) of each torchtrace warning about a regression."""
    found: Counter[tuple[str, str]] = Counter()
    for line in warnings_of(app).splitlines():
        m = re.search(r"WARNING: (\S+): .*\[torchtrace\.(regression_\w+)\]", line)
        if m:
            found[(m.group(1), m.group(2))] += 1
    return found


def _html(app: SphinxTestApp, docname: str) -> str:
    return (Path(app.outdir) / f"{docname}.html").read_text(encoding="utf-8")


def _text(app: SphinxTestApp, docname: str) -> str:
    """A text build's page, its lines joined (the text builder wraps long lines)."""
    return " ".join((Path(app.outdir) / f"{docname}.txt").read_text(encoding="utf-8").split())


EVERY_PAIR = _page(
    _diff("fixed", "graph_break_fixed"),
    _diff("broken", "graph_break_fixed", reverse=True),
    _diff("recompile", "recompile"),
    _diff("error", "compile_error"),
    _diff("cache", "cache_warm"),
)


def test_each_pair_warns_its_regressions_at_the_directive(make_site: SiteMaker) -> None:
    app = make_site("simple", "text", pages={"index.rst": EVERY_PAIR})
    assert _warned(app) == Counter(
        {
            ("broken", "regression_graph_break"): 1,
            ("recompile", "regression_recompile"): 1,
            ("error", "regression_error"): 1,
        }
    )
    warnings = warnings_of(app)
    # each at the directive's own line, saying what got worse
    assert re.search(
        r"index\.rst:\d+: WARNING: broken: new graph break: GB0059 at "
        r"program\.py:step \(Failed to trace builtin operator\)",
        warnings,
    )
    assert "compiled 3 times (was 1)" in warnings
    assert "new compile error: GB0170 at program.py:clip (Data-dependent branching)" in warnings
    assert "torchtrace." not in warnings.replace("torchtrace.regression_", "")  # nothing else
    page = _text(app, "index")
    assert "1 frame gone, 1 changed frame, 1 graph break fixed" in page  # the fixed pair
    assert "1 new frame, 1 changed frame, 1 new graph break" in page  # the same, reversed
    assert "Cache lookups: 3 miss in baseline, 3 hit in new." in page  # warm cache only
    assert "No change in compilation" not in page
    assert "Compile time (noisy)" in page


def test_frame_pages_show_what_changed(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        "html",
        pages={
            "index.rst": _page(_diff("fixed", "graph_break_fixed"), _diff("recompile", "recompile"))
        },
    )
    step = _html(app, "torchtrace/diff-fixed/frame-step")
    assert "break → ok" in step and "2 → 5" in step  # status and Dynamo graph ops
    assert "highlight-diff" in step  # the Dynamo graph diff, as a diff
    assert "cpp_fused_add_cos_mul_sin_sum_0" in step  # the kernel the fused graph made
    assert "Guards" in step and "Compile time (noisy)" in step
    assert (
        Path(app.outdir) / "torchtrace/diff-fixed/frame-torch-dynamo-resume-in-step.html"
    ).exists()  # the frame that is gone
    assert not (Path(app.outdir) / "torchtrace/diff-fixed/frame-other.html").exists()
    scale = _html(app, "torchtrace/diff-recompile/frame-scale")
    assert "New recompile reasons" in scale and "mismatch" in scale
    index = _html(app, "index")
    assert 'href="torchtrace/diff-fixed/frame-step.html"' in index


def test_a_run_against_itself_says_so_in_one_line(make_site: SiteMaker) -> None:
    same = f".. torchtrace-diff:: {PAIRS}/cache_warm/new {PAIRS}/cache_warm/new\n\n"
    app = make_site("simple", "text", pages={"index.rst": _page(same)})
    assert "torchtrace" not in warnings_of(app)
    page = _text(app, "index")
    assert "No change in compilation between baseline and new (compile time aside)." in page
    assert "Frames" not in page and "Cache lookups" not in page


def test_regressions_fail_a_build_with_W(make_site: SiteMaker) -> None:
    page = {"index.rst": _page(_diff("broken", "graph_break_fixed", reverse=True))}
    try:
        app = make_site("simple", "html", warningiserror=True, pages=page)
    except SphinxWarning as stopped:  # Sphinx before 8 stops at the first warning
        assert "torchtrace.regression_graph_break" in str(stopped)
        return
    assert app.statuscode == 1
    assert "torchtrace.regression_graph_break" in warnings_of(app)


def test_no_regressions_option_keeps_W_builds_green(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        "text",
        warningiserror=True,
        pages={
            "index.rst": _page(
                _diff("broken", "graph_break_fixed", ":no-regressions:", reverse=True),
                _diff("error", "compile_error", ":no-regressions:"),
            )
        },
    )
    assert app.statuscode == 0
    assert "torchtrace" not in warnings_of(app)
    page = _text(app, "index")
    assert page.count("Regressions (not warned: turned off here)") == 2
    assert "new graph break: GB0059 at program.py:step (Failed to trace builtin" in page  # shown


def test_config_turns_kinds_on_and_off(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        "text",
        pages={"index.rst": _page(_diff("recompile", "recompile"))},
        confoverrides={
            "torchtrace_regressions": {
                "recompile": False,
                "kernels": True,
                "compile_time": 1.0,
            }
        },
    )
    assert _warned(app) == Counter(
        {
            ("recompile", "regression_kernels"): 1,
            ("recompile", "regression_compile_time"): 1,
        }
    )
    assert "program.py:scale: 3 kernels (was 1)" in warnings_of(app)
    # a ratio above the pair's own leaves compile time alone
    app = make_site(
        "simple",
        "text",
        pages={"index.rst": _page(_diff("recompile", "recompile"))},
        confoverrides={"torchtrace_regressions": {"compile_time": 1000}},
    )
    assert _warned(app) == Counter({("recompile", "regression_recompile"): 1})


def test_bad_config_warns_and_uses_the_defaults(make_site: SiteMaker) -> None:
    app = make_site(
        "simple",
        "text",
        pages={"index.rst": _page(_diff("error", "compile_error"))},
        confoverrides={"torchtrace_regressions": {"graph_breaks": True}},
    )
    warnings = warnings_of(app)
    assert "torchtrace_regressions" in warnings and "unknown regression kind" in warnings
    assert "[torchtrace.config]" in warnings
    assert _warned(app) == Counter({("error", "regression_error"): 1})  # the defaults


def test_links_to_both_runs_frame_pages_when_in_the_site(make_site: SiteMaker) -> None:
    page = _page(
        f".. torchtrace:: {PAIRS}/graph_break_fixed/baseline\n   :name: before\n\n",
        f".. torchtrace:: {PAIRS}/graph_break_fixed/new\n   :name: after\n\n",
        _diff("fixed", "graph_break_fixed", ":baseline-label: v1", ":new-label: v2"),
    )
    app = make_site("simple", "html", pages={"index.rst": page})
    assert "WARNING" not in warnings_of(app)
    index = _html(app, "index")
    assert 'href="torchtrace/before/frame-0-0.html#torchtrace-frame-before-0-0"' in index
    assert 'href="torchtrace/after/frame-0-0.html#torchtrace-frame-after-0-0"' in index
    assert 'href="torchtrace/before/index.html"><span class="doc">v1' in index
    step = _html(app, "torchtrace/diff-fixed/frame-step")
    assert "../after/frame-0-0.html" in step


def test_myst(make_site: SiteMaker) -> None:
    page = (
        "# Comparisons\n\n"
        f"```{{torchtrace-diff}} {PAIRS}/compile_error/baseline {PAIRS}/compile_error/new\n"
        ":name: error\n```\n\n"
        f"```{{torchtrace-diff}} {PAIRS}/recompile/baseline {PAIRS}/recompile/new\n"
        ":name: quiet\n:no-regressions:\n```\n"
    )
    app = make_site("myst", "html", pages={"index.md": page})
    assert _warned(app) == Counter({("error", "regression_error"): 1})
    assert re.search(r"index\.md:\d+: WARNING: error: new compile error", warnings_of(app))
    assert (Path(app.outdir) / "torchtrace/diff-error/frame-clip.html").exists()
    assert (Path(app.outdir) / "torchtrace/diff-quiet/frame-scale.html").exists()


def test_bad_input_is_a_located_warning(make_site: SiteMaker) -> None:
    page = _page(
        f".. torchtrace-diff:: {PAIRS}/recompile/baseline nowhere/at-all\n\n",
        f".. torchtrace-diff:: {PAIRS}/recompile/baseline\n\n",
        _diff("odd", "recompile", ":no-regression:"),
    )
    app = make_site("simple", "text", pages={"index.rst": page})
    warnings = warnings_of(app)
    assert re.search(
        r"index\.rst:4: WARNING: no trace at 'nowhere/at-all'.*"
        r"\[torchtrace\.read\]",
        warnings,
    )
    assert re.search(
        r"index\.rst:6: WARNING: torchtrace-diff takes two paths.*"
        r"\[torchtrace\.option\]",
        warnings,
    )
    assert re.search(r"unknown option :no-regression:.*\[torchtrace\.option\]", warnings)
    assert "regression_" not in warnings
    assert "Comparisons" in _text(app, "index")
