"""Scenario `recompile_limit`: `torch._dynamo.config.recompile_limit = 2` hit by one function
called with many dtypes and ranks (`dynamic=False`): after two compiles the frame falls back to
eager (the "hit config.recompile_limit" warning, `compilation_metrics` with the fail/skip
reason), then a second function hit by changing Python int constants, and a third compiled
under `torch._dynamo.config.accumulated_recompile_limit = 6` hit by many distinct closures /
shapes until the accumulated limit stops compilation."""
import torch

torch.manual_seed(0)
torch._dynamo.config.recompile_limit = 2


@torch.compile(dynamic=False)
def dtype_fn(x):
    return (x * 2).abs().sum(-1)


for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64):
    dtype_fn(torch.ones(4, 3, dtype=dtype))
for shape in [(2,), (2, 2), (2, 2, 2)]:
    dtype_fn(torch.ones(*shape))


@torch.compile
def const_fn(x, k):
    return x.pow(k) + k


for k in range(2, 7):
    const_fn(torch.randn(5), k)

torch._dynamo.reset()
torch._dynamo.config.recompile_limit = 8
torch._dynamo.config.accumulated_recompile_limit = 6


def make(i):
    def f(x):
        return torch.relu(x + i) * (i + 1)
    return f


for i in range(5):
    g = torch.compile(make(i), dynamic=False)
    for n in (3, 4):
        g(torch.randn(n))
print("done")
