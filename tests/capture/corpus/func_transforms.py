"""Scenario `func_transforms`: torch.func inside torch.compile: per-sample gradients with
`vmap(grad(loss))` over a functional_call of an MLP's parameters, `jacrev` and `jacfwd` of a
small function, `hessian` of a scalar function, and `torch.func.linearize`-free `jvp`; each a
separate compiled function (functorch higher-order ops in the dynamo graph)."""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vmap

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
params = {k: v.detach() for k, v in model.named_parameters()}


def loss(p, x, y):
    out = functional_call(model, p, (x.unsqueeze(0),))
    return ((out.squeeze() - y) ** 2)


@torch.compile
def per_sample_grads(p, xs, ys):
    return vmap(grad(loss), in_dims=(None, 0, 0))(p, xs, ys)


g = per_sample_grads(params, torch.randn(5, 6), torch.randn(5))
print("per-sample", {k: tuple(v.shape) for k, v in g.items()})


def f(x):
    return torch.stack([x[0] * x[1], x[1].sin(), x.sum() ** 2])


@torch.compile
def jacobians(x):
    return jacrev(f)(x), jacfwd(f)(x)


jr, jf = jacobians(torch.randn(3))
print("jac", torch.allclose(jr, jf, atol=1e-5))


@torch.compile
def hess(x):
    return hessian(lambda z: (z.sin() * z).sum())(x)


print("hessian", tuple(hess(torch.randn(4)).shape))


@torch.compile
def directional(x, v):
    return jvp(lambda z: z.exp().cumsum(0), (x,), (v,))


print("jvp", [tuple(t.shape) for t in directional(torch.randn(5), torch.ones(5))])
