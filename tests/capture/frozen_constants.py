"""Scenario `frozen_constants`: tensor values a log prints, for `redact --constants`.

An eval-mode module compiled under `torch.no_grad()` with inductor's `freezing` on: its
Linear weight (folded with the global `W`) and a registered buffer (`scale`, 1.0625 and
2.4375) become frozen constants, printed with their values in the post-grad graph's
runnable repro (`self.register_buffer('_frozen_param2', tensor([1.0625, 2.4375]))`); a
literal `torch.tensor([3.8125, 4.6875])` in `forward` is a call with its values in every
graph's code.  Inductor also folds the small ones into its C++ kernel as literals.  The
values are chosen to be found by a test (`tests/test_share.py`).
"""

import torch
import torch._inductor.config as inductor_config

torch.manual_seed(0)
W = torch.tensor([[0.40625, -0.59375], [0.78125, 0.21875]])


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)
        self.register_buffer("scale", torch.tensor([1.0625, 2.4375]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * self.scale + x @ W + torch.tensor([3.8125, 4.6875])


inductor_config.freezing = True
model = Scaled().eval()
with torch.no_grad():
    compiled = torch.compile(model)
    compiled(torch.randn(3, 2))
