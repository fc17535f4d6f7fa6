"""Pair `recompile`, baseline: a static-shape function always called with one shape."""
import torch

torch.manual_seed(0)


@torch.compile(dynamic=False)
def scale(x):
    return (x * 2 + x.sum()).relu()


@torch.compile
def stable(x):
    return x.tanh() - 1


for n in (8, 8, 8):
    scale(torch.randn(n))
    stable(torch.randn(4))
print("done")
