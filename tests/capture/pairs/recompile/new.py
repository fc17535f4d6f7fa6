"""Pair `recompile`, new: the same function now gets three shapes; dynamic=False recompiles."""
import torch

torch.manual_seed(0)


@torch.compile(dynamic=False)
def scale(x):
    return (x * 2 + x.sum()).relu()


@torch.compile
def stable(x):
    return x.tanh() - 1


for n in (8, 16, 32):
    scale(torch.randn(n))
    stable(torch.randn(4))
print("done")
