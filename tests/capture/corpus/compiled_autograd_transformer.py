"""Scenario `compiled_autograd_transformer`: compiled autograd
(`torch._dynamo.config.compiled_autograd = True`) on a small pre-norm transformer block
(multi-head attention via F.scaled_dot_product_attention, GELU MLP, LayerNorms) trained 2 steps
inside a compiled `train_step` that calls `loss.backward()` (graph break there; the backward is
captured by compiled autograd: `compiled_autograd_graph`, compile ids `!N/...`), with SGD."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
torch._dynamo.config.compiled_autograd = True


class Block(nn.Module):
    def __init__(self, d=32, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.mlp(self.ln2(x))


block = Block()
head = nn.Linear(32, 1)
params = list(block.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.05)


@torch.compile
def train_step(x, y):
    out = head(block(x).mean(1))
    loss = F.mse_loss(out, y)
    loss.backward()
    return loss


for step in range(2):
    opt.zero_grad()
    loss = train_step(torch.randn(2, 8, 32), torch.randn(2, 1))
    opt.step()
    print("step", step, float(loss))
