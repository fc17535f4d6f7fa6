"""Scenario `export_dynamic`: `torch.export.export` of a small model (conv feature extractor +
attention-style pooling + MLP head) with `dynamic_shapes` (a `Dim("batch", min=1, max=64)` on
dim 0 and `Dim.AUTO` for the length of a second input), then `ep.module()` run with two batch
sizes; a second export with `strict=True`; and `torch.export.export` of a model whose
dynamic dim gets specialized (the constraint violation error, caught)."""
import torch
import torch.nn as nn
from torch.export import Dim, export

torch.manual_seed(0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 16, 3, padding=1)
        self.score = nn.Linear(16, 1)
        self.head = nn.Sequential(nn.Linear(16 + 8, 32), nn.ReLU(), nn.Linear(32, 3))

    def forward(self, x, extra):
        h = torch.relu(self.conv(x)).transpose(1, 2)  # (B, L, 16)
        w = torch.softmax(self.score(h), dim=1)
        pooled = (w * h).sum(1)
        return self.head(torch.cat([pooled, extra.mean(1)], dim=-1))


model = Model().eval()
x, extra = torch.randn(4, 4, 20), torch.randn(4, 5, 8)
batch = Dim("batch", min=1, max=64)
ep = export(model, (x, extra), dynamic_shapes={"x": {0: batch}, "extra": {0: batch, 1: Dim.AUTO}})
print(ep.range_constraints)
m = ep.module()
for b, n in ((4, 5), (7, 3)):
    print("module", m(torch.randn(b, 4, 20), torch.randn(b, n, 8)).shape)

ep2 = export(model, (x, extra), strict=True)
print("strict nodes", len(ep2.graph.nodes))


class Specializes(nn.Module):
    def forward(self, x):
        if x.shape[0] == 4:
            return x * 2
        return x


try:
    export(Specializes(), (torch.randn(4, 3),), dynamic_shapes={"x": {0: Dim("b")}})
except Exception as e:
    print("export failed:", type(e).__name__)
