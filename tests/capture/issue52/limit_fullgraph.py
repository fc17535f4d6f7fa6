"""Scenario `limit_fullgraph`: refusals that make no version.

1. `step(x, n)` compiled with `fullgraph=True`, `recompile_limit=3`, `dynamic=False`, called
   with 7 shapes: 3 versions ([0/0] .. [0/2]); the 4 later calls hit the limit and, under
   fullgraph, torch raises `FailOnRecompileLimitHit` (caught): no version made.
2. `guarded(x)`, compiled after `error_on_recompile=True`: the first call compiles [1/0],
   the second with another shape raises `RecompileError` (caught): 1 version.
3. `plain(x)` with `recompile_limit=2` and no fullgraph: 2 versions, then the limit is hit
   and the call runs eagerly (returns a value).
stdout: `EVENT <compiled|raised|ran-without-new-version> fn= call=` per call (a new
graph counted in torch's `unique_graphs` = compiled).
"""
import torch
from torch._dynamo.utils import counters

torch._dynamo.config.recompile_limit = 3


def report(fn, call, before, exc=None):
    graphs = counters["stats"]["unique_graphs"]
    if exc is not None:
        what = f"raised exc={type(exc).__name__}"
    elif graphs > before:
        what = "compiled"
    else:
        what = "ran-without-new-version"
    print(f"EVENT {what} fn={fn} call={call} unique_graphs={graphs}", flush=True)


def snapshot():
    return counters["stats"]["unique_graphs"]


@torch.compile(backend="eager", fullgraph=True, dynamic=False)
def step(x, n):
    return x.sin() + n


for i in range(7):
    before = snapshot()
    try:
        step(torch.randn(i + 2), 1)
        report("step", i, before)
    except Exception as e:  # noqa: BLE001
        report("step", i, before, e)


torch._dynamo.config.error_on_recompile = True


@torch.compile(backend="eager", dynamic=False)
def guarded(x):
    return x.cos() * 2


for i in range(2):
    before = snapshot()
    try:
        guarded(torch.randn(i + 3))
        report("guarded", i, before)
    except Exception as e:  # noqa: BLE001
        report("guarded", i, before, e)
torch._dynamo.config.error_on_recompile = False
torch._dynamo.config.recompile_limit = 2


@torch.compile(backend="eager", dynamic=False)
def plain(x):
    return x.tanh() - 1


for i in range(4):
    before = snapshot()
    try:
        plain(torch.randn(i + 5))
        report("plain", i, before)
    except Exception as e:  # noqa: BLE001
        report("plain", i, before, e)
