"""Scenario `torch_logs`: one small program for the TORCH_LOGS text-log captures.

A graph break (print), a recompile (shape then dtype change, dynamic=False), a Python
warning mixed into stderr, and a compile error that falls back to eager
(suppress_errors=True with a failing backend), so that the text log holds each kind of
message the model groups: traced graphs, guards, graph breaks, recompiles, output code,
and a failed compile.  Run with TORCH_LOGS=... (stderr to a file), see capture.sh."""
import warnings

import torch
import torch._dynamo

torch.manual_seed(0)


def f(x, y):
    a = x.sin() + y
    print("graph break via print()")  # graph break
    return (a.cos() * 2).relu()


@torch.compile(dynamic=False)
def g(x):
    return (x * 2 + x.sum()).tanh()


cf = torch.compile(f)
x = torch.randn(8, 8)
cf(x, x)
g(torch.randn(4))
g(torch.randn(8))  # shape change: recompile
g(torch.randn(4, dtype=torch.float64))  # dtype change: recompile
warnings.warn("a Python warning between compiles", stacklevel=1)


def failing_backend(gm, example_inputs):
    raise RuntimeError("intentional failure in custom backend 'failing_backend'")


torch._dynamo.config.suppress_errors = True


def h(x):
    return torch.cos(x) - 1


torch.compile(h, backend=failing_backend)(torch.randn(4))
print("done")
