"""Scenario `aoti_mlp`: AOTInductor on a small conv + MLP model: `torch.export.export` with a
dynamic batch dim, `torch._inductor.aoti_compile_and_package` to a CPU C++ package (no
provenance tracking, unlike tests/capture/aoti.py), `torch._inductor.aoti_load_package` and two
runs with different batch sizes."""
import os

import torch
import torch.nn as nn
from torch.export import Dim

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(torch.relu(self.bn(self.conv(x))), 4)
        return torch.log_softmax(self.fc2(torch.relu(self.fc1(x.flatten(1)))), -1)


model = Net().eval()
x = torch.randn(2, 3, 12, 12)
with torch.no_grad():
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: Dim("batch", min=1, max=32)}})
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(os.getcwd(), "net.pt2"))
    runner = torch._inductor.aoti_load_package(path)
    for b in (2, 5):
        xb = torch.randn(b, 3, 12, 12)
        print("aoti", b, torch.allclose(runner(xb), model(xb), atol=1e-4))
