"""Scenario `debug_dir/training`: the same tiny MLP, one forward + backward step compiled (CPU)
with TORCH_COMPILE_DEBUG=1 TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 INDUCTOR_PROVENANCE=1 (see
capture_debug_dir.sh): graph folders `model__0_forward_0.0` and `model__0_backward_0.1`."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
compiled = torch.compile(model)
out = compiled(torch.randn(2, 8))
out.sum().backward()
print("output", tuple(out.shape), model[0].weight.grad is not None)
