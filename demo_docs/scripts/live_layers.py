"""A layer of the demo's live model; a local module, so a change to it is a new capture."""

import torch


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.linear(x))
        if x.sum() > 0:  # data-dependent control flow: a graph break
            x = x * 2
        return x
