"""Pair `cache_warm`: one program run twice with a shared inductor cache (new: warm, the same file as baseline.py)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = torch.compile(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)))
out = model(torch.randn(8, 16, requires_grad=True))
out.sum().backward()
print("done", float(out.sum()))
