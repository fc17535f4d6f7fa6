"""Scenario `runtime_training`: what ran, and whether compiling paid off (issue 38).

Run under `sphinx-torchtrace run --runtime --worth-it` (see `capture_runtime.sh`):

* `fused` (12 pointwise operators on 1M floats, fused by inductor into one loop) is
  called `FUSED_CALLS` times: each compiled call saves most of eager's time, so the
  compile pays off within the run;
* `small_mm` (one 8x8 matmul: nothing to fuse) is called as often and never saves time;
* `train_step` compiles a training step with a graph break between the loss and the
  backward pass (`torch._dynamo.graph_break()`), over `STEPS` optimizer steps;
* `scale` (`dynamic=False`) is called once with 16 floats ([3/0]), then `HOT` times with
  32 (a recompile that is hot, [3/1]) and once with 48 (a recompile that is cold, [3/2]);
* `setup` is compiled and called once, never again.
"""

import torch
import torch.nn.functional as F

torch.manual_seed(0)
FUSED_CALLS = 1500
STEPS = 30
HOT = 200


@torch.compile
def fused(x: torch.Tensor) -> torch.Tensor:
    for _ in range(6):
        x = torch.sin(x) * 1.01 + 0.1
    return x


@torch.compile
def small_mm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b


@torch.compile(dynamic=False)
def scale(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k + 1


@torch.compile
def setup(x: torch.Tensor) -> torch.Tensor:
    return (x - x.mean()) / (x.std() + 1e-5)


model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile
def train_step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    loss = F.mse_loss(model(x), y)
    torch._dynamo.graph_break()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss


data = setup(torch.randn(256, 32))
for _ in range(STEPS):
    train_step(data, torch.randn(256, 1))
big = torch.randn(1024 * 1024)
for _ in range(FUSED_CALLS):
    fused(big)
a, b = torch.randn(8, 8), torch.randn(8, 8)
for _ in range(FUSED_CALLS):
    small_mm(a, b)
scale(torch.randn(16), 2.0)
for _ in range(HOT):
    scale(torch.randn(32), 2.0)
scale(torch.randn(48), 2.0)
