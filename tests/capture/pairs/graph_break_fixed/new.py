"""Pair `graph_break_fixed`, new: the print is gone, so `step` compiles as one graph."""
import torch

torch.manual_seed(0)


def helper(x):
    return x.cos() + 1


@torch.compile
def step(x):
    y = x.sin() * 2
    return helper(y).sum()


@torch.compile
def other(x):
    return (x * 3).relu()


for _ in range(2):
    step(torch.randn(8))
    other(torch.randn(8))
print("done")
