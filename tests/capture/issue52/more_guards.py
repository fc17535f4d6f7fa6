"""Scenario `more_guards`: recompiles on autocast, an element of a list argument, a value of
a dict argument, a tensor's strides and its requires_grad flag (backend eager; each function
called twice, the second call recompiling on the one change).
stdout: `EVENT <compiled|reused> fn= call=`.
"""
import torch
from torch._dynamo.utils import counters


def call(fn, name, i, *args):
    before = counters["stats"]["unique_graphs"]
    fn(*args)
    what = "compiled" if counters["stats"]["unique_graphs"] > before else "reused"
    print(f"EVENT {what} fn={name} call={i}", flush=True)


@torch.compile(backend="eager")
def mm_fn(x):
    return x @ x


@torch.compile(backend="eager")
def item_fn(x, xs):
    return x * xs[0]


@torch.compile(backend="eager")
def value_fn(x, d):
    return x * d["k"]


@torch.compile(backend="eager", dynamic=False)
def stride_fn(x):
    return x + 1


@torch.compile(backend="eager")
def grad_flag_fn(x):
    return x * 2


call(mm_fn, "mm_fn", 0, torch.ones(3, 3))
with torch.autocast("cpu", dtype=torch.bfloat16):
    call(mm_fn, "mm_fn", 1, torch.ones(3, 3))
call(item_fn, "item_fn", 0, torch.ones(2), [2, 3])
call(item_fn, "item_fn", 1, torch.ones(2), [5, 3])
call(value_fn, "value_fn", 0, torch.ones(2), {"k": 2})
call(value_fn, "value_fn", 1, torch.ones(2), {"k": 7})
call(stride_fn, "stride_fn", 0, torch.ones(4, 4))
call(stride_fn, "stride_fn", 1, torch.ones(4, 4).t())
call(grad_flag_fn, "grad_flag_fn", 0, torch.ones(3))
call(grad_flag_fn, "grad_flag_fn", 1, torch.ones(3, requires_grad=True))
