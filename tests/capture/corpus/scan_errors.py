"""Scenario `scan_errors`: higher-order ops that work and ones whose user function has a bug, so
the failure is raised from inside torch's higher-order-op code; every failure is caught.
Called in this order (mode `compiled` = the caller's `torch.compile(fn, backend=...)`; mode
`eager` = the op called without torch.compile by the user: torch's scan / map / cond then
compile the op themselves (`torch/_higher_order_ops/utils.py::_hop_compile_and_call`), so those
frames are opened from torch's code, not from a line of this program):

  scan_ok          compiled aot_eager  torch._higher_order_ops.scan, running sum        -> ok
  cond_ok          compiled inductor   torch.cond on x.sum() > 0                          -> ok
  map_ok           compiled eager      torch._higher_order_ops.map over rows              -> ok
  assoc_ok         compiled eager      associative_scan(add, combine_mode="generic")      -> ok
  scan_bad_carry   compiled eager      combine_fn returns a carry of shape (1,) for an init of
                                       shape (3,) -> UncapturedHigherOrderOpError raised
                                       ("Expected init and carry to have same metadata")
  scan_bad_carry   eager               the same, no user compile: torch's scan compiles its own
                                       frame `run_flattened_scan` (torch/_higher_order_ops/scan.py)
                                       -> UncapturedHigherOrderOpError raised; the caller's
                                       traceback: the scan(...) line of scan_bad_carry, then
                                       torch/_higher_order_ops/scan.py:scan
  scan_bad_matmul  compiled eager      combine_fn does (3,) @ (2, 3) -> TorchRuntimeError raised
                                       (fake-tensor error inside the scan body)
  cond_bad         compiled eager      branches return float vs bool -> TorchRuntimeError raised
  cond_bad         eager               the same; torch.cond compiles its own frame
                                       `_cond_op_wrapper` (torch/_higher_order_ops/cond.py)
                                       -> TorchRuntimeError raised
  map_bad          eager               data-dependent `if` on the mapped row; torch's map
                                       compiles `run_flattened_map` (torch/_higher_order_ops/map.py)
                                       -> UncapturedHigherOrderOpError raised
  assoc_bad        compiled eager      combine_fn reduces to a scalar -> TorchRuntimeError raised
  assoc_bad        eager               -> plain RuntimeError from
                                       torch/_higher_order_ops/associative_scan.py (runs eagerly:
                                       no compile, nothing in the log)
  scan_ok          compiled aot_eager  called again with the same shape: no new compile

stdout (program-output.txt): `EVENT ok fn=<name> mode=<mode>` or `EVENT raised fn=<name>
mode=<mode> exc=<type> user_line=<innermost line of this program in the traceback>
torch_entry=<first torch file:function below it> torch_innermost=<last torch file:function>`
(the traceback the caller sees: Dynamo shortens it at torch/_dynamo/eval_frame.py)."""
import os
import traceback

import torch
from torch._higher_order_ops import associative_scan, scan
from torch._higher_order_ops import map as hop_map

torch.manual_seed(0)
HERE = os.path.abspath(__file__)


def add_step(carry, x):
    nxt = carry + x
    return nxt, nxt.sin()


def scan_ok(xs):
    carry, ys = scan(add_step, torch.zeros(3), xs)
    return carry + ys.sum(0)


def cond_ok(x):
    return torch.cond(x.sum() > 0, lambda x: x.cos() * 2, lambda x: x.sin() / 2, (x,))


def map_ok(xs):
    return hop_map(lambda row: row.softmax(-1) * row.numel(), xs)


def assoc_ok(xs):
    return associative_scan(lambda a, b: a + b, xs, 0, combine_mode="generic")


def bad_carry_step(carry, x):
    nxt = carry + x
    return nxt.sum().reshape(1), nxt * 2  # bug: the carry becomes shape (1,), not (3,)


def scan_bad_carry(xs):
    return scan(bad_carry_step, torch.zeros(3), xs)


def bad_matmul_step(carry, x):
    nxt = carry @ torch.ones(2, 3)  # bug: (3,) @ (2, 3), a shape error inside combine_fn
    return nxt + x, nxt * 2


def scan_bad_matmul(xs):
    return scan(bad_matmul_step, torch.zeros(3), xs)


def cond_bad(x):
    return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x > 0, (x,))  # bug: dtypes differ


def map_bad(xs):
    return hop_map(lambda row: row * 2 if row[0] > 0 else row, xs)  # bug: data-dependent if


def assoc_bad(xs):
    return associative_scan(lambda a, b: (a + b).sum(), xs, 0, combine_mode="generic")


def torch_name(frame):
    return "torch/" + frame.filename.split("/torch/", 1)[1] + ":" + frame.name


def call(fn, mode, backend, arg, compiled=None):
    g = compiled or (torch.compile(fn, backend=backend) if mode == "compiled" else fn)
    try:
        g(arg)
    except Exception as e:
        tb = traceback.extract_tb(e.__traceback__)
        user = [f.lineno for f in tb if os.path.abspath(f.filename) == HERE]
        last_user = max((i for i, f in enumerate(tb) if os.path.abspath(f.filename) == HERE), default=-1)
        below = [f for f in tb[last_user + 1:] if "/torch/" in f.filename]
        entry = torch_name(below[0]) if below else "-"
        innermost = torch_name(below[-1]) if below else "-"
        print(f"EVENT raised fn={fn.__name__} mode={mode} exc={type(e).__name__} "
              f"user_line={user[-1] if user else '-'} torch_entry={entry} torch_innermost={innermost}",
              flush=True)
        return g
    print(f"EVENT ok fn={fn.__name__} mode={mode}", flush=True)
    return g


xs = torch.randn(5, 3)
scan_compiled = call(scan_ok, "compiled", "aot_eager", xs)
call(cond_ok, "compiled", "inductor", xs[0])
call(map_ok, "compiled", "eager", xs)
call(assoc_ok, "compiled", "eager", xs)
call(scan_bad_carry, "compiled", "eager", xs)
call(scan_bad_carry, "eager", None, xs)
call(scan_bad_matmul, "compiled", "eager", xs)
call(cond_bad, "compiled", "eager", xs[0])
call(cond_bad, "eager", None, xs[0])
call(map_bad, "eager", None, xs)
call(assoc_bad, "compiled", "eager", xs)
call(assoc_bad, "eager", None, xs)
call(scan_ok, "compiled", "aot_eager", xs, compiled=scan_compiled)
