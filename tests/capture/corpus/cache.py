"""Scenario `cache` (cold / warm): the same small training program run twice in the same
directory sharing one TORCHINDUCTOR_CACHE_DIR: `cold/` misses every cache (fx_graph_cache_miss,
aotautograd_cache_miss, inductor compiles everything), `warm/` hits them (fx_graph_cache_hit,
aotautograd_cache_hit, no inductor passes).  The program: conv + MLP classifier trained 2 steps
(fwd+bwd) with a compiled Adam step, plus an eval-mode inference call."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.fc1 = nn.Linear(4 * 8 * 8, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc2(F.gelu(self.fc1(x.flatten(1))))


model = Net()
cm = torch.compile(model)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


@torch.compile
def opt_step():
    opt.step()


for step in range(2):
    opt.zero_grad()
    loss = F.cross_entropy(cm(torch.randn(4, 1, 16, 16)), torch.randint(0, 10, (4,)))
    loss.backward()
    opt_step()
    print("step", step, float(loss))
model.eval()
with torch.no_grad():
    print("eval", cm(torch.randn(2, 1, 16, 16)).argmax(-1).tolist())
