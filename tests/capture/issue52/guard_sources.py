"""Scenario `guard_sources`: one recompile per kind of guard source.

Each function is compiled (backend eager) and called twice; between the calls one thing
changes, and the second call recompiles on that guard:
  flag_fn: a global `FLAG` (G['FLAG']);  attr_fn: a module attribute `self.scale`
  (L['self'].scale);  closure_fn: a closure cell (`__closure__[0].cell_contents`);
  list_fn: the length of a list argument (len(L['xs']));  dict_fn: the keys of a dict argument;
  grad_fn: grad mode (no_grad, then enabled) on a first version, then a new shape under
  no_grad again (its same-mode version fails on the shape, the other on grad mode);
  dyn_fn: `mark_dynamic(x, 0, min=2, max=64)` (a declared range), then a size outside it;
  cell_fn: calls `helper`, whose closure cell `k` changes (G['helper'].__closure__[0]...);
  attr_arg_fn: reads `cfg.a`; the second call passes an object without `a`: reading the
  guard's source raises (torch: "getattr failed on source"), the call raises AttributeError;
  same_fn (inductor): a global `K` goes from 1 to 2; both take the same branch, so the
  second version's graph equals the first's and every cache lookup hits.
stdout: `EVENT <compiled|reused|raised> fn= call=`.
"""
import torch
import torch.nn as nn
from torch._dynamo.utils import counters

FLAG = True


def snapshot():
    return counters["frames"]["ok"]


def report(fn, call, before):
    what = "compiled" if counters["frames"]["ok"] > before else "reused"
    print(f"EVENT {what} fn={fn} call={call}", flush=True)


@torch.compile(backend="eager")
def flag_fn(x):
    return x + 1 if FLAG else x - 1


b = snapshot(); flag_fn(torch.ones(3)); report("flag_fn", 0, b)
FLAG = False
b = snapshot(); flag_fn(torch.ones(3)); report("flag_fn", 1, b)


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2

    def forward(self, x):
        return x * self.scale


m = Scaler()
cm = torch.compile(m, backend="eager")
b = snapshot(); cm(torch.ones(3)); report("Scaler.forward", 0, b)
m.scale = 3
b = snapshot(); cm(torch.ones(3)); report("Scaler.forward", 1, b)


def make(k):
    @torch.compile(backend="eager")
    def closure_fn(x):
        return x * k

    return closure_fn


c1 = make(2)
b = snapshot(); c1(torch.ones(3)); report("closure_fn", 0, b)
c2 = make(5)
b = snapshot(); c2(torch.ones(3)); report("closure_fn", 1, b)


@torch.compile(backend="eager")
def list_fn(xs):
    out = xs[0]
    for t in xs[1:]:
        out = out + t
    return out


b = snapshot(); list_fn([torch.ones(3), torch.ones(3)]); report("list_fn", 0, b)
b = snapshot(); list_fn([torch.ones(3)] * 3); report("list_fn", 1, b)


@torch.compile(backend="eager")
def dict_fn(d):
    return sum(v * 2 for v in d.values())


b = snapshot(); dict_fn({"a": torch.ones(3), "b": torch.ones(3)}); report("dict_fn", 0, b)
b = snapshot(); dict_fn({"a": torch.ones(3), "c": torch.ones(3), "d": torch.ones(3)}); report("dict_fn", 1, b)


@torch.compile(backend="eager", dynamic=False)
def grad_fn(x):
    return x * 3


w = torch.ones(4, requires_grad=True)
with torch.no_grad():
    b = snapshot(); grad_fn(w); report("grad_fn", 0, b)
b = snapshot(); grad_fn(w); report("grad_fn", 1, b)
with torch.no_grad():
    b = snapshot(); grad_fn(torch.ones(5, requires_grad=True)); report("grad_fn", 2, b)


@torch.compile(backend="eager")
def dyn_fn(x):
    return x.relu() * 2


x = torch.randn(8, 3)
torch._dynamo.mark_dynamic(x, 0, min=2, max=64)
b = snapshot(); dyn_fn(x); report("dyn_fn", 0, b)
b = snapshot(); dyn_fn(torch.randn(100, 3)); report("dyn_fn", 1, b)


def make_helper():
    k = 2

    def helper(x):
        return x * k

    def set_k(v):
        nonlocal k
        k = v

    return helper, set_k


helper, set_k = make_helper()


@torch.compile(backend="eager")
def cell_fn(x):
    return helper(x) + 1


b = snapshot(); cell_fn(torch.ones(3)); report("cell_fn", 0, b)
set_k(5)
b = snapshot(); cell_fn(torch.ones(3)); report("cell_fn", 1, b)


class Cfg:
    pass


cfg_a = Cfg()
cfg_a.a = 2
cfg_b = Cfg()
cfg_b.b = 3


@torch.compile(backend="eager")
def attr_arg_fn(x, cfg):
    return x * cfg.a


b = snapshot(); attr_arg_fn(torch.ones(3), cfg_a); report("attr_arg_fn", 0, b)
try:
    attr_arg_fn(torch.ones(3), cfg_b)
    print("EVENT returned fn=attr_arg_fn call=1", flush=True)
except AttributeError as e:
    print(f"EVENT raised exc={type(e).__name__} fn=attr_arg_fn call=1", flush=True)


K = 1


@torch.compile(dynamic=False)
def same_fn(x):
    return x.exp() + 1 if K > 0 else x


b = snapshot(); same_fn(torch.ones(3)); report("same_fn", 0, b)
K = 2
b = snapshot(); same_fn(torch.ones(3)); report("same_fn", 1, b)
