"""Pair `compile_error`, new: a data-dependent branch added under fullgraph=True fails to compile."""
import torch

torch.manual_seed(0)


@torch.compile(fullgraph=True)
def clip(x):
    if x.sum() > 0:  # data-dependent control flow: Dynamo cannot trace it in one graph
        return x.clamp(min=0) * 2
    return x * 2


@torch.compile
def other(x):
    return x.exp().sum()


try:
    clip(torch.randn(8))
except Exception as e:  # torch._dynamo.exc.UserError / Unsupported
    print("clip failed:", type(e).__name__)
other(torch.randn(8))
print("done")
