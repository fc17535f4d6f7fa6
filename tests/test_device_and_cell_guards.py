"""Guard words on a log captured for the purpose (``tests/capture/issue52/device_and_cells.py``,
the program's own account of each call in ``program-output.events``): a tensor moved to
another device, a closure cell read through a closure the compiled function calls, and a
call the ``eager_on_recompile`` stance ran eagerly (the generated programs' campaign,
``tests/programs``, found the first; the others keep its oracle's truths on a real log).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from sphinx_torchtrace.site.guard_words import guard_words
from sphinx_torchtrace.site.pages.overview import overview_page
from sphinx_torchtrace.site.plan import PageSettings, plan_trace
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.analyses.guards import guard_kind
from sphinx_torchtrace.trace.analyses.recompiles import RecompiledFunction, recompiled_functions

from .conftest import DATA
from .programs.oracle import page_text, recompile_words

PATH = DATA / "captured" / "device_and_cells"
EVENT = re.compile(r"^EVENT (\S+) fn=(\S+) call=(\d+)")


def _compiled(path: Path) -> Counter[str]:
    lines = (path / "program-output.events").read_text(encoding="utf-8").splitlines()
    return Counter(m[2] for line in lines if (m := EVENT.match(line)) and m[1] == "compiled")


def _functions() -> dict[str, RecompiledFunction]:
    rank = load_trace(PATH).ranks[0]
    return {fn.function or "": fn for fn in recompiled_functions(rank)}


def test_a_tensor_moved_to_another_device_is_said_so() -> None:
    """torch checks a tensor's dispatch keys before its device, so a move from the CPU to
    the meta device is logged as "dispatch key set mismatch" (CPU keys expected, Meta keys
    actual); the table said "a tensor's dispatch keys changed (for example grad mode or
    autocast)", naming two things that did not change and not the one that did."""
    device = _functions()["device_fn"]
    (reason,) = device.recompiles[0].reasons
    assert "dispatch key set mismatch" in reason.guard and "Meta" in reason.guard
    assert reason.kind == "device_keys"
    plan = plan_trace("t", load_trace(PATH), "torchtrace")
    overview = overview_page(plan, PageSettings())
    said = recompile_words(overview.blocks)[device.recompiles[0].compile.label]
    assert said == guard_words("device_keys")
    assert "different device" in said and "grad mode or autocast" not in said
    # a change of mode keys on one backend is still no device change
    autocast_keys = (
        "tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CPU, AutogradCPU), "
        "actual DispatchKeySet(CPU, AutogradCPU, AutocastCPU)"
    )
    assert guard_kind(autocast_keys) == "dispatch_keys"


def test_a_cell_the_log_names_is_a_closure_cell() -> None:
    """cell_fn calls ``g``, a closure: the guard reads ``G['g'].__closure__[0]
    .cell_contents``, a cell by its source, not a global nor a bare name."""
    cell = _functions()["cell_fn"]
    (reason,) = cell.recompiles[0].reasons
    assert "__closure__" in reason.guard and reason.guard.startswith("G['g']")
    assert reason.kind == "closure"
    assert "closure cell" in guard_words(reason.kind)


def test_a_call_the_stance_ran_eagerly_is_no_version() -> None:
    """Under ``eager_on_recompile`` the second call needed a new version and ran eagerly;
    torch logged nothing for it: 2 versions, 1 recompile, as the program counted."""
    compiled = _compiled(PATH)
    assert compiled == {"device_fn": 2, "cell_fn": 2, "stance_fn": 2}
    functions = _functions()
    assert {name: (fn.versions, len(fn.recompiles)) for name, fn in functions.items()} == {
        name: (n, n - 1) for name, n in compiled.items()
    }
    plan = plan_trace("t", load_trace(PATH), "torchtrace")
    text = page_text(overview_page(plan, PageSettings()).blocks)
    assert "stance_fn ([2/*]): 2 versions, 1 recompile." in text.splitlines()
    assert "Recompiles: 3 recompiles: device_fn 1, cell_fn 1, stance_fn 1" in text
