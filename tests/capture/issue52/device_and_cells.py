"""Scenario `device_and_cells`: a recompile on a tensor moved from the CPU to the meta
device (torch logs it as a dispatch key set mismatch), one on a closure cell a compiled
function reads through the closure it calls (``G['g'].__closure__[0].cell_contents``), and
a call under the ``eager_on_recompile`` stance that needed a new version and ran eagerly
(nothing logged) before the same shape compiled with the stance gone (backend eager).
stdout: `EVENT <compiled|no-new-version> fn= call=` (a new cache entry of the code, or none).
"""
import torch
from torch._dynamo.eval_frame import _debug_get_cache_entry_list as entries


def call(fn, code, name, i, *args):
    before = len(entries(code))
    fn(*args)
    what = "compiled" if len(entries(code)) > before else "no-new-version"
    print(f"EVENT {what} fn={name} call={i}", flush=True)


def device_fn(x):
    return x.sin() * 2


def make_g():
    k = 2

    def g(x):
        return x * k if k > 2 else x + k

    def set_k(v):
        nonlocal k
        k = v

    return g, set_k


g, set_k = make_g()


def cell_fn(x):
    return g(x) * 2


def stance_fn(x):
    return x.tan() + 1


c_device = torch.compile(device_fn, backend="eager", dynamic=False)
c_cell = torch.compile(cell_fn, backend="eager", dynamic=False)
c_stance = torch.compile(stance_fn, backend="eager", dynamic=False)

call(c_device, device_fn.__code__, "device_fn", 0, torch.ones(4))
call(c_device, device_fn.__code__, "device_fn", 1, torch.ones(4, device="meta"))
call(c_cell, cell_fn.__code__, "cell_fn", 0, torch.ones(4))
set_k(3)
call(c_cell, cell_fn.__code__, "cell_fn", 1, torch.ones(4))
call(c_stance, stance_fn.__code__, "stance_fn", 0, torch.ones(4))
with torch.compiler.set_stance("eager_on_recompile"):
    call(c_stance, stance_fn.__code__, "stance_fn", 1, torch.ones(6))
call(c_stance, stance_fn.__code__, "stance_fn", 2, torch.ones(6))
