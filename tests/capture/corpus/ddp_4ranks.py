"""Scenario `ddp_4ranks`: a 4-rank torch.distributed job (gloo backend, 127.0.0.1 only,
spawned with torch.multiprocessing, free port): each rank wraps a small MLP (about 1 MiB of
weights per large layer) in DDP with 1 MiB buckets, compiles it and trains 2 steps with SGD.
DDPOptimizer splits the graph at bucket boundaries (`optimize_ddp_split_graph`,
`optimize_ddp_split_child`); each rank writes dedicated_log_torch_trace_rank_<N>_*.log whose
records carry `"rank": N`.  The ranks share one inductor cache, so later ranks may log cache
hits for graphs an earlier rank compiled."""
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
        self.fc1 = nn.Linear(32, 512)
        self.fc2 = nn.Linear(512, 512)
        self.fc3 = nn.Linear(512, 512)
        self.fc4 = nn.Linear(512, 4)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        x = torch.nn.functional.gelu(self.fc2(x))
        x = torch.relu(self.fc3(x))
        return self.fc4(x)


def worker(rank, world_size, port):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = MLP()
    ddp = DDP(model, bucket_cap_mb=1)
    compiled = torch.compile(ddp)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    torch.manual_seed(rank)
    for step in range(2):
        x = torch.randn(8, 32)
        y = torch.randint(0, 4, (8,))
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
    world_size = 4
    mp.spawn(worker, args=(world_size, free_port()), nprocs=world_size, join=True)
