"""Scenario `aoti`: AOTInductor.  A small MLP is exported with torch.export and compiled ahead of
time to a CPU C++ package with torch._inductor.aoti_compile_and_package (run with
INDUCTOR_PROVENANCE=1 and trace.provenance_tracking_level=1), then loaded and run once.
Gives `graph_dump` records `inductor_aot_wrapper_code` / `inductor_aot_kernel_code` and
`inductor_provenance_tracking_node_mappings` artifacts."""
import os

import torch
import torch._inductor.config as inductor_config
import torch.nn as nn

inductor_config.trace.provenance_tracking_level = 1
torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)


model = MLP().eval()
x = torch.randn(4, 32)
with torch.no_grad():
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(os.getcwd(), "mlp.pt2"))
    runner = torch._inductor.aoti_load_package(path)
    out = runner(x)
print("aoti output", tuple(out.shape), torch.allclose(out, model(x), atol=1e-5))
