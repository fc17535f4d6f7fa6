"""Scenario `global_settings`: recompiles on global settings torch checks.

`dt_fn` is called, then again after `torch.set_default_dtype(torch.float64)` (its graph
makes a tensor of the default dtype); `det_fn` is called, then again after
`torch.use_deterministic_algorithms(True)`.  Each second call recompiles on the one setting
("GLOBAL_STATE changed: default_dtype" / "deterministic_algorithms").
stdout: `EVENT <compiled|reused> fn= call=`.
"""
import torch
from torch._dynamo.utils import counters


def call(fn, name, i, x):
    before = counters["stats"]["unique_graphs"]
    fn(x)
    what = "compiled" if counters["stats"]["unique_graphs"] > before else "reused"
    print(f"EVENT {what} fn={name} call={i}", flush=True)


@torch.compile(backend="eager")
def dt_fn(x):
    return x + torch.ones(3)


@torch.compile(backend="eager")
def det_fn(x):
    return x * 2


call(dt_fn, "dt_fn", 0, torch.ones(3))
torch.set_default_dtype(torch.float64)
call(dt_fn, "dt_fn", 1, torch.ones(3, dtype=torch.float32))
torch.set_default_dtype(torch.float32)
call(det_fn, "det_fn", 0, torch.ones(3))
torch.use_deterministic_algorithms(True)
call(det_fn, "det_fn", 1, torch.ones(3))
torch.use_deterministic_algorithms(False)
