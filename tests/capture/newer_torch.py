"""What torch 2.14 and 2.15 log that our torch 2.13 captures do not (``capture_newer.sh``).

One program, run twice with one inductor cache (cold, then warm: cache hits), compile
workers on (``TORCHINDUCTOR_COMPILE_THREADS=2``, the subprocess pool, a watchdog interval
of 1 s so a slow C++ compile leaves ``compile_worker_status`` records):

1. regional compilation: two nested compile regions, ``block`` called four times and
   ``head`` twice in one model, forward and backward (``invoke_subgraph``, partitioned
   backward);
2. regional Inductor: two annotated regions compiled by Inductor (``subgraph_name``);
3. recompiles and a graph break: ``dynamic=False`` with three sizes and a data-dependent
   branch;
4. compile workers: on CPU Inductor compiles its C++ kernels on threads, so nothing reaches
   the worker pool by itself; a post-grad pass submits a 2.5 s job to Inductor's own pool
   (``AsyncCompile.process_pool()``) during one compile (the watchdog reports it, with the
   compile id in the payload), and during another kills the pool's sidecar while its job
   runs, a stray copy of its result pipe held open (``compile_worker_sidecar_death``;
   that compile fails with the ``RuntimeError``
   torch raises for pending jobs, which names the sidecar's pid).
"""

import os
import signal
import time

import torch
import torch.fx.traceback as fx_traceback
from torch._dynamo.backends.common import aot_autograd
from torch._inductor.async_compile import AsyncCompile
from torch.fx.passes.regional_inductor import regional_inductor


@torch.compiler.nested_compile_region
def block(x, w):
    return torch.relu(x @ w) + x.sin()


@torch.compiler.nested_compile_region
def head(x, w):
    return torch.tanh(x @ w).cos() * 2


class Stack(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ws = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(8, 8)) for _ in range(4))
        self.vs = torch.nn.ParameterList(torch.nn.Parameter(torch.randn(8, 8)) for _ in range(2))

    def forward(self, x):
        for w in self.ws:
            x = block(x, w)
        for v in self.vs:
            x = head(x, v)
        return x.sum()


torch.manual_seed(0)
model = Stack()
compiled = torch.compile(model, backend="inductor", fullgraph=True)
x = torch.randn(4, 8, requires_grad=True)
compiled(x).backward()


def annotated(x, y):
    a = x + 1
    with fx_traceback.annotate({"compile_with_inductor": 0}):
        b = torch.sin(a) * y
    c = b.cos()
    with fx_traceback.annotate({"compile_with_inductor": 1}):
        d = torch.relu(c) + 2
    return d


backend = aot_autograd(fw_compiler=regional_inductor, bw_compiler=regional_inductor)
f = torch.compile(annotated, backend=backend, fullgraph=True)
f(torch.randn(6, requires_grad=True), torch.randn(6)).sum().backward()


@torch.compile(dynamic=False)
def step(x):
    y = x.sin() * 2
    if y.sum() > 0:  # data-dependent branch: a graph break
        return y.cos() + 1
    return y.exp() - 1


for n in (8, 16, 32):
    step(torch.ones(n))


def slow_job(graph):
    """A pass whose job in the compile worker pool runs past the watchdog's interval."""
    AsyncCompile.process_pool().submit(time.sleep, 2.5).result()


def sidecar_killed(graph):
    """A pass whose job's sidecar is killed while the job runs (as an OOM kill would).  A
    copy of the sidecar's result pipe is held open first, as a stray descendant's would
    be: the pipe gives no EOF, so torch's health monitor finds the death and logs it."""
    pool = AsyncCompile.process_pool()
    job = pool.submit(time.sleep, 5)
    time.sleep(1.5)  # one watchdog report first
    pid = pool.process.pid
    with open(f"/proc/{pid}/cmdline", encoding="utf-8") as f:
        arg = next(a for a in f.read().split("\0") if a.startswith("--write-fd="))
    stray = os.open(f"/proc/{pid}/fd/{arg.split('=')[1]}", os.O_WRONLY)
    os.kill(pid, signal.SIGKILL)
    try:
        job.result()
    finally:
        os.close(stray)


def slow(x):
    return x.tan() + 1


def doomed(x):
    return x.atan() * 3


with torch._inductor.config.patch(post_grad_custom_post_pass=slow_job):
    torch.compile(slow)(torch.randn(5))
with torch._inductor.config.patch(post_grad_custom_post_pass=sidecar_killed):
    try:
        torch.compile(doomed)(torch.randn(5))
    except Exception as e:  # the compile fails: its worker's sidecar died
        print("compile failed:", type(e).__name__)
print("OK")
