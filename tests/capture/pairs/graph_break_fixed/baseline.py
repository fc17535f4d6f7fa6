"""Pair `graph_break_fixed`, baseline: a debug print inside a compiled step breaks its graph."""
import torch

torch.manual_seed(0)


def helper(x):
    return x.cos() + 1


@torch.compile
def step(x):
    y = x.sin() * 2
    print("debug: step got", tuple(y.shape))  # graph break: print is not traceable
    return helper(y).sum()


@torch.compile
def other(x):
    return (x * 3).relu()


for _ in range(2):
    step(torch.randn(8))
    other(torch.randn(8))
print("done")
