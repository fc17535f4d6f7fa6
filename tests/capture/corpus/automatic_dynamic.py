"""Scenario `automatic_dynamic`: `torch.compile(dynamic=None)` (the default) functions called
with changing shapes: the first call compiles static, the first shape change recompiles with
that dim dynamic ("automatic dynamic"), later sizes reuse it.  Covers a change in dim 0, then
dim 1 (a third compile with both dynamic), a module whose input length changes, a python int
argument that becomes a SymInt after changing, and `torch._dynamo.config.automatic_dynamic_shapes
= False` for comparison (one recompile per shape)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


@torch.compile
def scaled_softmax(x, scale):
    return torch.softmax(x * scale, dim=-1)


for shape in [(2, 8), (3, 8), (5, 8), (5, 10), (7, 12)]:
    scaled_softmax(torch.randn(*shape), 0.5)


@torch.compile
def repeat_pad(x, n):
    return torch.nn.functional.pad(x, (0, n)).repeat(1, 2)


for n in (1, 2, 3, 4):
    repeat_pad(torch.randn(3, 5), n)

conv = nn.Conv1d(4, 6, 3, padding=1)
cconv = torch.compile(conv)
with torch.no_grad():
    for length in (10, 20, 30):
        cconv(torch.randn(1, 4, length))

torch._dynamo.config.automatic_dynamic_shapes = False


@torch.compile
def no_auto(x):
    return x.cumsum(0) - x


for n in (4, 6, 8):
    no_auto(torch.randn(n))
print("done")
