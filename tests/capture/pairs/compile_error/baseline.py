"""Pair `compile_error`, baseline: a fullgraph function that compiles."""
import torch

torch.manual_seed(0)


@torch.compile(fullgraph=True)
def clip(x):
    return x.clamp(min=0) * 2


@torch.compile
def other(x):
    return x.exp().sum()


clip(torch.randn(8))
other(torch.randn(8))
print("done")
