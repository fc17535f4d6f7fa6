"""Scenario `set_stance`: `torch.compiler.set_stance` and related switches: a function compiled
normally, then called under `set_stance("force_eager")` (no compile), under
`set_stance("eager_on_recompile")` with a new shape (runs eager instead of recompiling), under
`set_stance("fail_on_recompile")` with yet another shape (the recompile error, caught), then a
nested compile (a compiled function calling another `torch.compile`d function and a
`torch.compiler.disable`d one), and `torch._dynamo.config.patch(...)` used as a decorator."""
import torch

torch.manual_seed(0)


@torch.compile
def f(x):
    return torch.tanh(x) * 2 + x.mean()


f(torch.randn(4))
with torch.compiler.set_stance("force_eager"):
    f(torch.randn(9))
with torch.compiler.set_stance("eager_on_recompile"):
    f(torch.randn(10))
with torch.compiler.set_stance("fail_on_recompile"):
    try:
        f(torch.randn(4, 4))
    except Exception as e:
        print("fail_on_recompile:", type(e).__name__)
f(torch.randn(6))  # normal stance again: recompiles (automatic dynamic)


@torch.compile
def inner(x):
    return x.sigmoid() + 1


@torch.compiler.disable
def outside(x):
    return x.relu() * 5


@torch.compile
def outer(x):
    y = inner(x * 3)  # nested torch.compile: inlined into outer's graph
    return outside(y) - 1


print("outer", outer(torch.randn(5)).shape)


@torch._dynamo.config.patch(capture_scalar_outputs=True)
def with_patch(x):
    return torch.compile(lambda t: t * t.sum().item())(x)


print("patched", with_patch(torch.randn(3)).shape)
