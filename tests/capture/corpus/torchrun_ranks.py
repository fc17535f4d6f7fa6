"""Scenario `torchrun_ranks`: a real `torchrun --standalone --nproc-per-node 4` job (capture_corpus.sh
launches it as `python -m torch.distributed.run ...`) on the gloo backend (CPU): a tiny MLP sharded
with FSDP2 (`torch.distributed.fsdp.fully_shard` per layer and on the root, CPU device mesh),
compiled with torch.compile and trained 2 steps with SGD; each rank writes
dedicated_log_torch_trace_rank_<N>_*.log (TORCH_TRACE is inherited from the launcher).
stdout (program-output.txt): each rank prints `EVENT ok fn=train_step rank=<r> step=<n>` per step
and `EVENT setup rank=<r> world=<w> mode=fsdp2`; the ranks' lines interleave in any order."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)
        self.fc3 = nn.Linear(32, 4)

    def forward(self, x):  # no loop: a graph break at a sharded layer resumes after it
        x = torch.relu(self.fc1(x))
        x = torch.relu(self.fc2(x))
        return self.fc3(x)


def main():
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = init_device_mesh("cpu", (world,))
    torch.manual_seed(0)
    model = MLP()
    for layer in (model.fc1, model.fc2, model.fc3):
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    print(f"EVENT setup rank={rank} world={world} mode=fsdp2", flush=True)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(rank)
    for step in range(2):
        x = torch.randn(8, 16)
        y = torch.randint(0, 4, (8,))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        opt.step()
        print(f"EVENT ok fn=train_step rank={rank} step={step} loss={float(loss.detach()):.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
