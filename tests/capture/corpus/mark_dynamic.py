"""Scenario `mark_dynamic`: explicit dynamic dims.  `torch._dynamo.mark_dynamic(x, 0)` on the
batch dim of an MLP input, then calls with batch sizes 4, 8, 16, 3 (one graph with a symbolic
batch s0, no recompiles); `mark_dynamic(x, 0, min=2, max=64)` with a range on another
function; `torch._dynamo.maybe_mark_dynamic` on the sequence dim of a third function; and a
function where the marked dim is specialized by the code (`x.shape[0] == 4` branch), so the
trace shows the constraint violation error (caught)."""
import torch
import torch.nn as nn

torch.manual_seed(0)

mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
cmlp = torch.compile(mlp)
with torch.no_grad():
    for b in (4, 8, 16, 3):
        x = torch.randn(b, 16)
        torch._dynamo.mark_dynamic(x, 0)
        print("mlp", b, tuple(cmlp(x).shape))


@torch.compile
def norm_rows(x):
    return (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + 1e-5)


for b in (5, 9):
    x = torch.randn(b, 12)
    torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
    print("norm_rows", tuple(norm_rows(x).shape))


@torch.compile
def seq_pool(x):
    return torch.softmax(x, dim=1).mul(x).sum(1)


for t in (7, 11, 13):
    x = torch.randn(2, t, 8)
    torch._dynamo.maybe_mark_dynamic(x, 1)
    print("seq_pool", t, tuple(seq_pool(x).shape))


@torch.compile
def specializes(x):
    if x.shape[0] == 4:
        return x * 2
    return x + 1


x = torch.randn(4, 3)
torch._dynamo.mark_dynamic(x, 0)
try:
    specializes(x)
except Exception as e:
    print("constraint violation:", type(e).__name__)
