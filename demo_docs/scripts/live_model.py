"""The demo's live report: a small model compiled while the docs build (torchtrace-capture).

BACKEND (set by the page's ``:env:``) picks torch.compile's backend: ``aot_eager`` needs no
C++ compiler (Read the Docs' images), ``inductor`` generates kernels.
"""

import os

import torch
from live_layers import Block

torch.manual_seed(0)
model = torch.nn.Sequential(Block(16), Block(16))
compiled = torch.compile(model, backend=os.environ.get("BACKEND", "aot_eager"))
with torch.no_grad():
    for batch in (4, 8):  # a second batch size: a recompile, with its reason
        compiled(torch.randn(batch, 16))
