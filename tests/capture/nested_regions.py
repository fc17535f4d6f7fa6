"""Nested compile regions (``capture_newer.sh``, ``SCRIPT=nested_regions``): ``inner`` called
three times in ``outer``'s body, ``outer`` twice in the model, forward and backward: Dynamo
prints ``inner``'s three calls once, inside ``outer``'s class, and they run six times."""

import torch


@torch.compiler.nested_compile_region
def inner(x, w):
    return torch.relu(x @ w) + 1

@torch.compiler.nested_compile_region
def outer(x, w):
    for _ in range(3):
        x = inner(x, w)
    return x.sin()

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 8))
    def forward(self, x):
        x = outer(x, self.w)
        x = outer(x, self.w)
        return x.sum()

m = torch.compile(M(), fullgraph=True)
m(torch.randn(4, 8, requires_grad=True)).backward()
print("OK")
