"""Scenario `unbacked_no_export`: unbacked symbols from `.item()` / `nonzero()` under
`capture_scalar_outputs` and `capture_dynamic_output_shape_ops`, no `torch.export` call."""
import torch

torch._dynamo.config.capture_scalar_outputs = True
torch._dynamo.config.capture_dynamic_output_shape_ops = True


@torch.compile(backend="eager", fullgraph=True)
def pick(x):
    n = x.sum().to(torch.int64).item()
    torch._check(n >= 0)
    return x.nonzero(), torch.zeros(n)


print("EVENT compiled fn=pick", pick(torch.tensor([1.0, 0.0, 2.0]))[1].shape, flush=True)
