"""Scenario `reset_functions`: one function compiled under two frame ids.

`f1` compiles [0/0]; `torch._dynamo.reset()`; `f2` compiles first (so it takes frame id 0
again: [0/0] #2), then `f1` compiles as [1/0] and recompiles twice on new dtypes ([1/1],
[1/2]); under fullgraph with `recompile_limit=3` its next dtype is refused
(`FailOnRecompileLimitHit`, caught).  f1 made 4 versions in all, f2 one.
stdout: `EVENT <compiled|raised|reset> fn= call=` per call (a new graph in torch's
`unique_graphs` = compiled).
"""
import torch
from torch._dynamo.utils import counters

torch._dynamo.config.recompile_limit = 3


def f1(x):
    return (x * 2).sum()


def f2(x):
    return x.cos().sum()


c_f1 = torch.compile(f1, backend="eager", fullgraph=True, dynamic=False)
c_f2 = torch.compile(f2, backend="eager")


def call(fn, name, i, x):
    before = counters["stats"]["unique_graphs"]
    try:
        fn(x)
        what = "compiled" if counters["stats"]["unique_graphs"] > before else "reused"
    except Exception as e:  # noqa: BLE001
        what = f"raised exc={type(e).__name__}"
    print(f"EVENT {what} fn={name} call={i}", flush=True)


call(c_f1, "f1", 0, torch.ones(4))
torch._dynamo.reset()
print("EVENT reset fn=- call=-", flush=True)
call(c_f2, "f2", 0, torch.ones(4))
for i, dtype in enumerate((torch.float64, torch.float16, torch.bfloat16, torch.int32), 1):
    call(c_f1, "f1", i, torch.ones(4, dtype=dtype))
