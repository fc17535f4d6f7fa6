"""Trend run v3: one batch size (no recompiles); norm gains a data-dependent branch."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


@torch.compile(dynamic=False)
def step(x):
    y = model(x)
    return y.softmax(-1).sum()


@torch.compile
def norm(x):
    n = x.norm()
    if n > 1:  # data-dependent: a graph break
        return x / n
    return x


for n in (8, 8, 8):
    step(torch.randn(n, 16))
    norm(torch.randn(4))
print("done")
