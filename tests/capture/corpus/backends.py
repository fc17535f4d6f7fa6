"""Scenario `backends`: the same small model (MLP + LayerNorm + residual) compiled with
`backend="eager"`, `backend="aot_eager"`, `backend="inductor"`, `dynamic=True` (symbolic shapes
from the start), and `mode="max-autotune-no-cudagraphs"` (CPU: autotuning of the GEMMs with
the C++ template where it applies), each trained for one step (fwd + bwd) and then called in
inference with another batch size; each backend is its own frame after
`torch._dynamo.reset()`, so compile ids restart at 0/0 for each."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 32)
        self.norm = nn.LayerNorm(32)

    def forward(self, x):
        return self.norm(x + self.fc2(torch.relu(self.fc1(x)))).sum(-1)


configs = [dict(backend="eager"), dict(backend="aot_eager"), dict(backend="inductor"),
           dict(backend="inductor", dynamic=True), dict(mode="max-autotune-no-cudagraphs")]
for cfg in configs:
    torch._dynamo.reset()
    model = Model()
    cm = torch.compile(model, **cfg)
    cm(torch.randn(8, 32)).sum().backward()
    with torch.no_grad():
        out = cm(torch.randn(3, 32))
    print(cfg, tuple(out.shape))
