"""Scenario `two_runs_one_folder`: this small program is run TWICE by capture_corpus.sh, as two
processes writing into the same TORCH_TRACE folder and sharing one TORCHINDUCTOR_CACHE_DIR, so
the folder holds two logs of one rank (two `dedicated_log_torch_trace_*.log` files, no
`_rank_`): the first run misses the fx graph / AOT autograd caches, the second hits them.
The program: a compiled 2-layer MLP trained one step (forward + backward graph) and then run
under no_grad (inference graph, a second compile of the same frame), plus one compiled helper
function.  stdout (program-output.txt, both runs after `== run N` lines): `EVENT ok` per
compiled call and one `EVENT cache` line with torch's cache counters at the end."""
import torch
import torch.nn as nn
from torch._dynamo.utils import counters

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


@torch.compile
def normalize(x):
    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-5)


model = MLP()
cm = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(4, 8)
loss = cm(normalize(x)).square().mean()
loss.backward()
opt.step()
print(f"EVENT ok fn=forward mode=train loss={float(loss):.4f}", flush=True)
with torch.no_grad():
    out = cm(normalize(x))
print(f"EVENT ok fn=forward mode=no_grad out={tuple(out.shape)}", flush=True)
inductor = counters["inductor"]
aot = counters["aot_autograd"]
print(f"EVENT cache fxgraph_cache_hit={inductor['fxgraph_cache_hit']} "
      f"fxgraph_cache_miss={inductor['fxgraph_cache_miss']} "
      f"autograd_cache_hit={aot['autograd_cache_hit']} "
      f"autograd_cache_miss={aot['autograd_cache_miss']}", flush=True)
