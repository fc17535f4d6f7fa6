"""Scenario `ranks_collective_order`: 4 ranks (gloo, 127.0.0.1, torch.multiprocessing.spawn),
2 steps, no DDP; each rank runs two compiled functions (inductor, the default backend):

- `reduce_pair(a, b, c)`: `dist.all_reduce(a)`, `dist.all_reduce(b)` (SUM), then
  `dist.all_gather_into_tensor(out, c)`, traced as functional collectives
  (`_c10d_functional.all_reduce_` / `all_gather_into_tensor` + `wait_tensor`).  On rank 3 the
  two all_reduces come in the other order (`b` before `a`).  `a` is 4x8 and `b` is 8x4: the
  same 32 float32 elements, so gloo pairs rank 3's `b` with the others' `a` (and its `a` with
  their `b`) without hanging or complaining: wrong results, the bug a cross-rank check must
  catch.  The shapes differ so that the swap shows in what inductor logs per collective
  (`inductor_runtime_and_tensor_meta` output shapes); the kernel names in
  `inductor_collective_schedule` are the same on every rank (`all_reduce_`, `all_reduce_`,
  `all_gather_into_tensor`), as they would be with two same-shaped tensors.
- `scaled_sum(x, w)`: `relu(x @ w).sum(0)` all_reduced (one more collective of shape [16] on
  every rank); `x` is 8x16 on ranks 0, 2, 3 but 6x16 on rank 1, so rank 1 compiles that
  graph for another input shape (its guards, graph and tensor meta differ), while the
  collectives stay paired (same number, kind and size on every rank in program order).

Flags for the extra records tlparse reads: `torch._inductor.config.log_tlparse = True` (the
`LOG_TLPARSE` env switch) makes inductor log `inductor_runtime_and_tensor_meta` per graph;
running the steps inside `torch._inductor.debug.record_and_log_graph_execution_order()` logs
one `graph_execution` record (the compile ids run, in order) when the block ends.
`inductor_collective_schedule` needs no flag (logged for every graph with a collective).
The process group has a 60 s timeout so that a pairing mistake fails instead of hanging.
Run under TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 (capture.sh sets it for this scenario)."""
import datetime
import os
import socket

import torch
import torch._inductor.config as inductor_config
import torch._inductor.debug as inductor_debug
import torch.distributed as dist
import torch.multiprocessing as mp


def make_reduce_pair(swap):
    """The same function (name, lines) on every rank; rank 3 builds it with swap=True."""

    def reduce_pair(a, b, c):
        a = a * 2
        b = b + 1
        if swap:
            dist.all_reduce(b)  # rank 3: b first
            dist.all_reduce(a)
        else:
            dist.all_reduce(a)
            dist.all_reduce(b)
        out = torch.empty(dist.get_world_size() * c.numel(), dtype=c.dtype)
        dist.all_gather_into_tensor(out, c)
        return a.sum() + b.sum(), out

    return torch.compile(reduce_pair)


@torch.compile
def scaled_sum(x, w):
    s = torch.relu(x @ w).sum(0)
    dist.all_reduce(s)
    return s / dist.get_world_size()


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    inductor_config.log_tlparse = True
    dist.init_process_group(
        "gloo", rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=60)
    )
    pair = make_reduce_pair(swap=rank == 3)
    batch = 6 if rank == 1 else 8
    torch.manual_seed(0)
    w = torch.randn(16, 16)
    torch.manual_seed(rank)
    with inductor_debug.record_and_log_graph_execution_order():
        for step in range(2):
            a = torch.randn(4, 8)
            b = torch.randn(8, 4)
            c = torch.randn(4)
            total, gathered = pair(a, b, c)
            s = scaled_sum(torch.randn(batch, 16), w)
            print(f"rank {rank} step {step} total {float(total):.4f} "
                  f"gathered {gathered.shape[0]} s {float(s.sum()):.4f}")
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    world_size = 4
    mp.spawn(worker, args=(world_size, free_port()), nprocs=world_size, join=True)
