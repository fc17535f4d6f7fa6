"""Trend run v1: a training step with a logging print (a graph break) and a shape that
changes every call (recompiles under dynamic=False)."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


@torch.compile(dynamic=False)
def step(x):
    y = model(x)
    print("step", y.shape)  # a graph break
    return y.softmax(-1).sum()


@torch.compile
def norm(x):
    return x / x.norm()


for n in (8, 12, 16):
    step(torch.randn(n, 16))
    norm(torch.randn(4))
print("done")
