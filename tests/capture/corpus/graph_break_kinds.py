"""Scenario `graph_break_kinds`: one small function per kind of graph break, each compiled
separately with the default torch.compile (not fullgraph) and called once, so each frame shows
the break reason, the partial graph before it and the resumed frame after it.  Kinds:
`torch._dynamo.graph_break()`, `print`, `open()` (untraceable builtin), `str()` / `repr()` of a
tensor, `sorted` with a tensor-valued key, data-dependent `if x.sum() > 0`, `.item()` with
capture_scalar_outputs off, `bool(tensor)`, `nonzero()` (dynamic shape operator), `.tolist()`,
a `torch.compiler.disable`d callee, a skipped stdlib call (`inspect.getsource`, `time.time`,
`random.random`, `zlib.crc32`, `pickle.dumps`), `copy.deepcopy` of a tensor, `logging` and
`warnings.warn`, `json.dumps`, `torch.save` to a BytesIO, `exec`, an unsupported numpy function
and a numpy random draw (when numpy is importable; plain numpy math like `np.linalg.norm` on
`x.numpy()` is traced without a break), a generator (traced, no break), and a break inside a
`for` loop: the frame is skipped with the chained message "*** While handling this graph
break, another graph break occurred: ***" / "graph break in loop"."""
import copy
import inspect
import io
import json
import logging
import os
import pickle
import random
import time
import warnings
import zlib

import torch

try:
    import numpy as np
except ImportError:  # numpy is optional for torch; the numpy kinds are then skipped
    np = None

torch.manual_seed(0)
log = logging.getLogger("corpus")


def explicit_break(x):
    x = x.sin()
    torch._dynamo.graph_break()
    return x.cos()


def print_break(x):
    x = x.sin()
    print("print inside a compiled function")
    return x.cos()


def open_break(x):
    x = x.sin()
    with open(os.devnull) as f:
        f.read()
    return x.cos()


def str_break(x):
    x = x.sin()
    s = str(x)
    return x.cos() * len(s)


def repr_break(x):
    x = x.sin()
    return x.cos() * len(repr(x))


def sorted_break(x):
    xs = [x.sin(), x.cos(), x.tan()]
    xs = sorted(xs, key=lambda t: t.sum())
    return xs[0] * 2


def data_dependent_if(x):
    x = x.sin()
    if x.sum() > 0:
        return x.cos()
    return x.tanh()


def item_break(x):
    x = x.sin()
    return x.cos() * x.max().item()


def bool_break(x):
    x = x.sin()
    return x * 2 if bool((x > 0).any()) else x


def nonzero_break(x):
    x = x.sin()
    idx = x.nonzero()
    return idx.sum() + x.cos()


def tolist_break(x):
    x = x.sin()
    return torch.tensor(x.tolist()).cos()


@torch.compiler.disable
def eager_only(x):
    return x * 3


def disabled_callee(x):
    x = x.sin()
    return eager_only(x).cos()


def inspect_break(x):
    x = x.sin()
    return x.cos() * len(inspect.getsource(explicit_break))


def time_break(x):
    x = x.sin()
    t0 = time.time()
    return x.cos() + (t0 > 0)


def random_break(x):
    x = x.sin()
    return x.cos() * random.random()


def zlib_break(x):
    x = x.sin()
    return x.cos() * (zlib.crc32(b"corpus") % 7)


def pickle_break(x):
    x = x.sin()
    return x.cos() * len(pickle.dumps([1, 2, 3]))


def deepcopy_break(x):
    x = x.sin()
    y = copy.deepcopy(x)
    return y.cos()


def logging_break(x):
    x = x.sin()
    log.warning("logging inside a compiled function")
    return x.cos()


def warnings_break(x):
    x = x.sin()
    warnings.warn("warning inside a compiled function")
    return x.cos()


def json_break(x):
    x = x.sin()
    return x.cos() * len(json.dumps({"a": 1}))


def save_break(x):
    x = x.sin()
    buf = io.BytesIO()
    torch.save(x, buf)
    return x.cos()


def exec_break(x):
    x = x.sin()
    exec("a = 1")
    return x.cos()


def numpy_unsupported(x):
    x = x.sin()
    return x.cos() * np.busday_count("2024-01-01", "2024-02-01")


def numpy_random(x):
    x = x.sin()
    return x.cos() * float(np.random.rand())


def numpy_traced(x):  # no break: numpy on x.numpy() is traced through torch._numpy
    x = x.sin()
    return torch.as_tensor(np.linalg.norm(x.numpy())) * x


def gen(x):
    for i in range(3):
        yield x * i


def generator_traced(x):  # no break in 2.13: generators are inlined
    return sum(gen(x.sin()))


def loop_break(x):
    for i in range(3):
        x = x.sin() + i
        torch._dynamo.graph_break()
    return x


FNS = [explicit_break, print_break, open_break, str_break, repr_break, sorted_break,
       data_dependent_if, item_break, bool_break, nonzero_break, tolist_break, disabled_callee,
       inspect_break, time_break, random_break, zlib_break, pickle_break, deepcopy_break,
       logging_break, warnings_break, json_break, save_break, exec_break, generator_traced,
       loop_break]
if np is not None:
    FNS += [numpy_unsupported, numpy_random, numpy_traced]

warnings.simplefilter("ignore")
for fn in FNS:
    out = torch.compile(fn)(torch.randn(8))
    print(fn.__name__, tuple(out.shape))
