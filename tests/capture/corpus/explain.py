"""Scenario `explain`: `torch._dynamo.explain(fn)(*args)` on a function with three graph
breaks (print, a data-dependent branch, a `torch.compiler.disable`d call) and on an nn.Module
(explain resets dynamo, so its own trace of the function appears with compile ids from 0/0
again, without inductor artifacts: explain uses its own backend), followed by the normal
`torch.compile` of the same function (inductor) so the log holds both."""
import torch
import torch.nn as nn

torch.manual_seed(0)


@torch.compiler.disable
def helper(x):
    return x.exp()


def fn(x):
    x = x.sin()
    print("break 1")
    if x.sum() > 0:
        x = x * 2
    x = helper(x) + 1
    return x.cos()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        x = self.a(x).relu()
        torch._dynamo.graph_break()
        return self.b(x)


e = torch._dynamo.explain(fn)(torch.randn(8))
print("explain fn: graphs", e.graph_count, "breaks", e.graph_break_count)
e = torch._dynamo.explain(Net())(torch.randn(2, 8))
print("explain net: graphs", e.graph_count, "breaks", e.graph_break_count)
print("compiled", torch.compile(fn)(torch.randn(8)).shape)
