"""Scenario `multi_rank_gloo`: a 2-rank torch.distributed job (gloo backend, 127.0.0.1 only,
spawned with torch.multiprocessing).  Each rank wraps a small MLP in DDP and compiles it, then
runs two training steps.  DDPOptimizer splits the graph at bucket boundaries
(`optimize_ddp_split_graph` / `optimize_ddp_split_child` records).  Since the process group is
initialized before the first record, each rank writes
dedicated_log_torch_trace_rank_<N>_<random>.log and every record carries `"rank": N`."""
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 512)
        self.fc2 = nn.Linear(512, 512)  # 1 MiB of weights: one DDP bucket each
        self.fc3 = nn.Linear(512, 512)
        self.fc4 = nn.Linear(512, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        x = torch.relu(self.fc3(x))
        return self.fc4(x)


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = MLP()
    # 1 MiB buckets (DDPOptimizer requires first bucket cap <= bucket cap, the first is 1 MiB)
    # so that DDPOptimizer splits the graph into several submodules
    ddp = DDP(model, bucket_cap_mb=1)
    compiled = torch.compile(ddp)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    torch.manual_seed(rank)
    for step in range(2):
        x = torch.randn(8, 64)
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
