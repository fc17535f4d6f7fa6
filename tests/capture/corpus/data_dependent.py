"""Scenario `data_dependent`: data-dependent values and shapes.  With
`capture_scalar_outputs=True` and `capture_dynamic_output_shape_ops=True`: `.item()` used as a
scale and as a size (`torch.arange(n)`, with torch._check), `nonzero()`, boolean-mask
indexing, `torch.unique`, `repeat_interleave` with tensor repeats (unbacked symints u0, u1...,
`create_unbacked_symbol`, `expression_created`).  Then the same functions are compiled again
after `torch._dynamo.reset()` with both options off: each data-dependent op is a graph break."""
import torch

torch.manual_seed(0)


def item_scale(x):
    s = x.max().item()
    return x / s


def item_size(x):
    n = (x > 0).sum().item()
    torch._check(n >= 0)
    torch._check(n <= x.numel())
    return torch.arange(n) * 2


def nonzero_idx(x):
    idx = torch.nonzero(x > 0.5)
    return idx.float().sum(0), idx.shape[0]


def masked(x):
    return x[x > 0].exp().sum()


def uniq(x):
    return torch.unique(x.round()).numel() + x.sum()


def rep(x, r):
    return torch.repeat_interleave(x, r).cumsum(0)


fns = [item_scale, item_size, nonzero_idx, masked, uniq]


def run_all(tag):
    x = torch.randn(20)
    for f in fns:
        out = torch.compile(f)(x)
        print(tag, f.__name__, type(out).__name__)
    print(tag, "rep", torch.compile(rep)(torch.arange(4.0), torch.tensor([1, 2, 0, 3])).shape)


torch._dynamo.config.capture_scalar_outputs = True
torch._dynamo.config.capture_dynamic_output_shape_ops = True
run_all("unbacked")
torch._dynamo.reset()
torch._dynamo.config.capture_scalar_outputs = False
torch._dynamo.config.capture_dynamic_output_shape_ops = False
run_all("breaks")
