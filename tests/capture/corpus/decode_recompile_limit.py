"""Scenario `decode_recompile_limit`: `torch._dynamo.config.recompile_limit = 4`.

1. `decode_step(cache, x, pos)`, compiled with the defaults (inductor, automatic dynamic
   shapes): a toy decode loop of 8 steps where the kv-cache tensor grows by one position per
   step (length 1, 2, ..., 8) and the int position `pos` (0..7) indexes a Python list of
   angles (`ANGLES[pos]`, a rotary-table lookup), so Dynamo specializes on `pos` at every step:
   step 0 compiles [0/0]; step 1 recompiles [0/1] (guard `pos == 0` failed; the cache length
   becomes dynamic there); steps 2 and 3 recompile [0/2], [0/3] (`pos == 1`, `pos == 2` ...);
   step 4 hits the recompile limit (4) at [0/4]: Dynamo gives up on the frame and it runs
   eagerly from then on (steps 4-7 return values, no new compile).
2. `scale_rows(x)` (backend aot_eager) called under
   `torch._dynamo.config.patch(automatic_dynamic_shapes=False)` with 2, 3 and 4 rows: three
   static compiles [1/0], [1/1], [1/2] (each with automatic_dynamic_shapes False in its
   config); then outside the patch (default True) with 5 rows: [1/3] compiles with the row
   count dynamic, and 6 rows reuses it (no compile).
stdout (program-output.txt): per call `EVENT <compiled|recompile-limit|cached> fn=<name>
step=<n> ...`, from torch's frame counters (`counters["frames"]`: a new frame counted but no
new "ok" = the limit was hit)."""
import math

import torch
from torch._dynamo.utils import counters

torch.manual_seed(0)
torch._dynamo.config.recompile_limit = 4
ANGLES = [0.1 * i for i in range(64)]


def report(fn, step, before, **kw):
    total, ok = counters["frames"]["total"], counters["frames"]["ok"]
    if total == before[0]:
        what = "cached"
    elif ok > before[1]:
        what = "compiled"
    else:
        what = "recompile-limit"
    extra = "".join(f" {k}={v}" for k, v in kw.items())
    print(f"EVENT {what} fn={fn} step={step}{extra} frames_total={total} frames_ok={ok}", flush=True)


def snapshot():
    return counters["frames"]["total"], counters["frames"]["ok"]


@torch.compile
def decode_step(cache, x, pos):
    cache = torch.cat([cache, x.unsqueeze(1)], 1)  # the kv-cache grows by one position
    att = (cache @ x.unsqueeze(-1)).softmax(1)
    return cache, (att * cache).sum(1) * math.cos(ANGLES[pos])  # list index: specializes pos


cache = torch.zeros(2, 0, 4)
x = torch.randn(2, 4)
with torch.no_grad():
    for pos in range(8):
        before = snapshot()
        cache, x = decode_step(cache, x, pos)
        report("decode_step", pos, before, pos=pos, cache_len=cache.shape[1])


@torch.compile(backend="aot_eager")
def scale_rows(x):
    return x * x.shape[0] - x.mean(0)


step = 0
with torch._dynamo.config.patch(automatic_dynamic_shapes=False):
    for n in (2, 3, 4):
        before = snapshot()
        scale_rows(torch.randn(n, 3))
        report("scale_rows", step, before, rows=n, automatic_dynamic_shapes=False)
        step += 1
for n in (5, 6):
    before = snapshot()
    scale_rows(torch.randn(n, 3))
    report("scale_rows", step, before, rows=n, automatic_dynamic_shapes=True)
    step += 1
