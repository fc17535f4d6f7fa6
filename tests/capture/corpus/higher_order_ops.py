"""Scenario `higher_order_ops`: higher-order operators inside torch.compile.  `torch.cond`
with a data-dependent predicate (true/false branch subgraphs), `torch.cond` on a module's
parameters in a training step (backward through cond), `torch.utils.checkpoint.checkpoint`
(use_reentrant=False) around two MLP blocks in a training step (tag_activation_checkpoint,
recomputation in the backward graph), `torch._higher_order_ops.while_loop`, and
`torch.func.vmap` / `torch.func.grad` called inside a compiled function."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


@torch.compile
def cond_fn(x):
    def true_fn(x):
        return x.sin() * 2

    def false_fn(x):
        return x.cos() - 1

    return torch.cond(x.sum() > 0, true_fn, false_fn, (x,))


print("cond", cond_fn(torch.randn(6)).shape, cond_fn(-torch.ones(6)).shape)


class CondModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        return torch.cond(x.mean() > 0, lambda x: self.a(x).relu(), lambda x: self.b(x).tanh(), (x,))


cm = CondModel()
loss = torch.compile(cm)(torch.randn(4, 8)).pow(2).sum()
loss.backward()
print("cond grad", cm.a.weight.grad is not None)


class CkptNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.b1 = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
        self.b2 = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 16))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        x = x + checkpoint(self.b1, x, use_reentrant=False)
        x = x + checkpoint(self.b2, x, use_reentrant=False)
        return self.head(x)


net = CkptNet()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
cnet = torch.compile(net)
for step in range(2):
    opt.zero_grad()
    loss = F.mse_loss(cnet(torch.randn(8, 16)), torch.zeros(8, 1))
    loss.backward()
    opt.step()
    print("ckpt step", step, float(loss))


@torch.compile
def while_fn(x):
    from torch._higher_order_ops.while_loop import while_loop

    def cond(i, x):
        return i < 5

    def body(i, x):
        return i + 1, x * 1.5

    return while_loop(cond, body, (torch.tensor(0), x))


try:
    print("while_loop", while_fn(torch.ones(3))[1])
except Exception as e:
    print("while_loop failed", type(e).__name__)


def loss_fn(w, x):
    return (x @ w).tanh().sum()


@torch.compile
def func_fn(w, xs):
    per_example = torch.func.vmap(loss_fn, in_dims=(None, 0))(w, xs)
    g = torch.func.grad(loss_fn)(w, xs[0])
    return per_example, g


pe, g = func_fn(torch.randn(5, 3), torch.randn(4, 2, 5))
print("vmap/grad", pe.shape, g.shape)
