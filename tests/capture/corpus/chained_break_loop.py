"""Scenario `chained_break_loop`: three functions, compiled separately.  `first` and `second`
each break once with a plain `torch._dynamo.graph_break()` (partial graph + resumed frame);
`third` calls `torch._dynamo.graph_break()` inside a `for` loop, so dynamo skips the whole
frame with the chained message ("Call to `torch._dynamo.graph_break()`" ... "*** While
handling this graph break, another graph break occurred: ***" ... "graph break in loop").
A small log for checking that a report keeps the three frames' break rows apart."""
import torch


def first(x):
    y = x.relu() + 1
    torch._dynamo.graph_break()
    return y * 2


def second(x):
    y = x.sigmoid() * 3
    torch._dynamo.graph_break()
    return y - 1


def third(x):
    for i in range(2):
        x = x.tanh() + i
        torch._dynamo.graph_break()
    return x


for fn in (first, second, third):
    print(fn.__name__, torch.compile(fn)(torch.randn(4)).sum().item())
