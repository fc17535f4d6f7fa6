"""Scenario `debug_dir/inference`: a tiny MLP compiled for inference (CPU) with
TORCH_COMPILE_DEBUG=1 TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 INDUCTOR_PROVENANCE=1 (see
capture_debug_dir.sh): one graph folder `model__0_inference_0.0` in torch_compile_debug/."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 4))
compiled = torch.compile(model)
with torch.no_grad():
    out = compiled(torch.randn(2, 8))
print("output", tuple(out.shape))
