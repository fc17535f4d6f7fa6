"""Scenario `ddp_graph_break`: graph breaks inside a DDP forward, on a 2-rank gloo job.

As `multi_rank_gloo` (gloo, 127.0.0.1, torch.multiprocessing.spawn, DDP + torch.compile, two
training steps), but the model's forward starts with `torch._dynamo.graph_break()` and breaks
again in the middle.  Dynamo restarts the frame's analysis at each break: attempt 0 restarts,
and the attempt that compiles the code before the first break holds no operator (an empty
graph).  tlparse's stack trie shows such a frame as empty, not as a break: the pattern
pinned by tests/test_statuses.py."""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class BreakingMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        torch._dynamo.graph_break()  # nothing before it: an empty graph
        h = torch.relu(self.fc1(x))
        torch._dynamo.graph_break()  # a break between two graphs
        return self.fc2(h)


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    ddp = DDP(BreakingMLP())
    compiled = torch.compile(ddp)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    torch.manual_seed(rank)
    for step in range(2):
        x = torch.randn(8, 32)
        y = torch.randint(0, 10, (8,))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        if rank == 0:
            print("step", step, "loss", float(loss.detach()))
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    world_size = 2
    mp.spawn(worker, args=(world_size, free_port()), nprocs=world_size, join=True)
