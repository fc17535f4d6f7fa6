"""Scenario `ddp_4ranks_divergent`: 4 ranks (gloo, 127.0.0.1, torch.multiprocessing.spawn)
that do NOT compile the same graphs.  No DDP (ranks with different graphs could deadlock):
each rank runs plain compiled functions and explicit `dist.all_reduce` calls, 2 steps:
- a compiled MLP forward (+ backward) with batch 8 on ranks 0-2 but batch 6 on rank 3, which
  so compiles a graph with other shapes / guards;
- rank 2 alone has a graph break (`print`) in its forward (two frames instead of one);
- gradients averaged with eager `dist.all_reduce` calls, the same on every rank;
- statistics reduced inside a compiled function (`dist.all_reduce` traced as a functional
  collective: `_c10d_functional.all_reduce` + `wait_tensor` in the graph); on rank 1 the
  compiled function also does the following MAX all_reduce itself (an extra collective in its
  graph), while ranks 0, 2, 3 do that one eagerly after the call.  The order on the wire is the
  same on every rank, so nothing hangs, but rank 1's compiled graph holds 2 collectives."""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 64)
        self.fc2 = nn.Linear(64, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def forward_with_break(model, x):
    h = torch.relu(model.fc1(x))
    print("rank 2 breaks here")
    return model.fc2(h)


@torch.compile
def reduce_stats(x):
    s = torch.stack([x.mean(), x.std()])
    dist.all_reduce(s)
    return s / dist.get_world_size()


@torch.compile
def reduce_stats_and_max(x):
    s = torch.stack([x.mean(), x.std()])
    dist.all_reduce(s)
    m = x.abs().max().reshape(1)
    dist.all_reduce(m, op=dist.ReduceOp.MAX)
    return s / dist.get_world_size(), m


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = MLP()
    if rank == 2:
        fwd = torch.compile(lambda x: forward_with_break(model, x))
    else:
        fwd = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    batch = 6 if rank == 3 else 8
    torch.manual_seed(rank)
    for step in range(2):
        x = torch.randn(batch, 16)
        y = torch.randint(0, 4, (batch,))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(fwd(x), y)
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world_size
        opt.step()
        if rank == 1:
            s, m = reduce_stats_and_max(x)
        else:
            s = reduce_stats(x)
            m = x.abs().max().reshape(1)
            dist.all_reduce(m, op=dist.ReduceOp.MAX)
        if rank == 0:
            print("step", step, "loss", float(loss.detach()), s.tolist(), m.tolist())
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    world_size = 4
    mp.spawn(worker, args=(world_size, free_port()), nprocs=world_size, join=True)
