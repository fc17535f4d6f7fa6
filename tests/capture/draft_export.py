"""Scenario `draft_export`: run under TORCH_DTRACE=<dir>.  A plain torch.export.export first
(opens the ordinary trace file and interns the first strings), then torch.export.draft_export
of a module with data-dependent ops (`.item()` used as a size and in an `if`, and a custom op without a fake
kernel).  draft_export installs its own CaptureStructuredTrace handler, which writes a second
dedicated_log_torch_trace_*.log in the same directory; that second file refers to interned
string ids (`{"str": [path, id]}`) defined only in the first file."""
import torch

torch.manual_seed(0)


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x):
        return torch.relu(self.lin(x))


@torch.library.custom_op("capture::scale_rows", mutates_args=())
def scale_rows(x: torch.Tensor) -> torch.Tensor:
    # no register_fake: draft_export has to guess a fake kernel
    return x * 2


class DataDependent(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 4)

    def forward(self, x, n):
        k = n.item()  # unbacked symint used as a size
        y = torch.zeros(k, 4) + self.lin(x).sum(0)
        if k > 3:  # data-dependent branch: draft_export specializes on the real value
            y = y * 2
        return scale_rows(y)


ep = torch.export.export(Plain(), (torch.randn(3, 8),))
print("export ok:", len(ep.graph.nodes), "nodes")

dep = torch.export.draft_export(DataDependent(), (torch.randn(3, 8), torch.tensor(5)))
print(dep._report)
print(dep.module()(torch.randn(3, 8), torch.tensor(5)).shape)
