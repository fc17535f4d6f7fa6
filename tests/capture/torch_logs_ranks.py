"""Scenario `torch_logs` (ranks): a 2-rank gloo job launched by torchrun, for a text log whose
lines carry torchrun's `[rankN]:` prefixes.  Each rank compiles a function with a graph break;
rank 1 also calls it with another shape (a recompile only rank 1 has).  Run:

  TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[rank${rank}]:' TORCH_LOGS=graph_breaks,recompiles \
      torchrun --standalone --nproc-per-node 2 --tee 3 torch_logs_ranks.py 2>ranks.log
"""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = int(os.environ["RANK"])


def f(x):
    y = x.sin()
    print("graph break on rank", rank)  # graph break
    return y.cos() + 1


cf = torch.compile(f, dynamic=False)
cf(torch.randn(4))
if rank == 1:
    cf(torch.randn(6))  # recompile on rank 1 only
dist.barrier()
dist.destroy_process_group()
