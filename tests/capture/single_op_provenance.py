"""Scenario `single_op_provenance`: the smallest model there is, a single operator
(`torch.relu(x)`), compiled with torch.compile (JIT, CPU) with inductor provenance tracking on
(run with INDUCTOR_PROVENANCE=1 TORCH_LOGS=+inductor TORCH_COMPILE_DEBUG=1, as `provenance`).
One pointwise kernel, so the provenance node mappings have a single entry per direction."""
import torch
import torch._inductor.config as inductor_config

inductor_config.trace.provenance_tracking_level = 1


@torch.compile
def f(x):
    return torch.relu(x)


out = f(torch.randn(16))
print("output", tuple(out.shape), float(out.sum()))
