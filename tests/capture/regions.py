"""Regional compilation: a nested compile region reused four times (inductor, forward and
backward), and regional inductor (aot_eager with annotated regions compiled by Inductor)."""
import torch
import torch.fx.traceback as fx_traceback
from torch._dynamo.backends.common import aot_autograd
from torch.fx.passes.regional_inductor import regional_inductor


@torch.compiler.nested_compile_region
def block(x, w):
    return torch.relu(x @ w) + x.sin()


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(8, 8)) for _ in range(4))

    def forward(self, x):
        for w in self.ws:
            x = block(x, w)
        return x.sum()


model = Stack()
compiled = torch.compile(model, backend="inductor", fullgraph=True)
x = torch.randn(4, 8, requires_grad=True)
compiled(x).backward()


def annotated(x, y):
    a = x + 1
    with fx_traceback.annotate({"compile_with_inductor": 0}):
        b = torch.sin(a) * y
    c = b.cos()
    with fx_traceback.annotate({"compile_with_inductor": 1}):
        d = torch.relu(c) + 2
    return d


backend = aot_autograd(fw_compiler=regional_inductor, bw_compiler=regional_inductor)
f = torch.compile(annotated, backend=backend, fullgraph=True)
a = torch.randn(6, requires_grad=True)
b = torch.randn(6)
f(a, b).sum().backward()
print("OK")
