"""Scenario `fullgraph_failures`: `torch.compile(fullgraph=True)` functions that each fail
for a different reason, every exception caught so the program goes on: an explicit
`torch._dynamo.graph_break()`, a `print`, a data-dependent `if` on a tensor, `.item()` used in
Python control flow, an untraceable stdlib call (`time.time()` / `inspect.getsource`), a
`torch.compiler.disable`d callee, `copy.deepcopy` of a tensor, a return value of an
unsupported type (a generator object / an open file), a `nonzero()` (dynamic output shape),
and a shape error found by fake tensors (TorchRuntimeError).  Two fullgraph functions that
compile fine are called first and last (ok compiles around the failures)."""
import copy
import inspect
import os
import time

import torch

torch.manual_seed(0)


def ok_fn(x):
    return torch.nn.functional.gelu(x) * 2


def explicit(x):
    torch._dynamo.graph_break()
    return x + 1


def printing(x):
    print("hello from fullgraph")
    return x + 1


def branch(x):
    if x.mean() > 0:
        return x * 2
    return x / 2


def item_flow(x):
    n = int(x.sum().item())
    return x * n


def stdlib(x):
    return x * (time.time() > 0) + len(inspect.getsource(ok_fn))


@torch.compiler.disable
def eager(x):
    return x - 1


def disabled(x):
    return eager(x) * 2


def deep(x):
    return copy.deepcopy(x) + 1


def returns_generator(x):
    return (x * i for i in range(3))


def returns_file(x):
    return x + 1, open(os.devnull)


def dynamic_shape(x):
    return x.nonzero().float().sum()


def shape_error(x):
    return x @ torch.ones(x.shape[0] + 1, 2)


def ok_last(x):
    return torch.softmax(x, -1).sum(0)


fns = [ok_fn, explicit, printing, branch, item_flow, stdlib, disabled, deep,
       returns_generator, returns_file, dynamic_shape, shape_error, ok_last]
for fn in fns:
    try:
        out = torch.compile(fn, fullgraph=True)(torch.randn(4, 4))
        print(fn.__name__, "ok", type(out).__name__)
    except Exception as e:
        print(fn.__name__, "failed:", type(e).__name__, str(e).splitlines()[0][:90])
