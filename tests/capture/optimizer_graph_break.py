"""Scenario `optimizer_graph_break`: `torch._dynamo.graph_break()` inside a compiled optimizer step.

A small MLP trained 2 steps with a compiled model and a compiled `opt.step()`; the optimizer
(an SGD subclass) calls `torch._dynamo.graph_break()` first thing in `step`, and the model's
forward starts with a break too.  Each such frame restarts (attempt 0) and its next attempt
compiles no operator before the break (an empty graph), the frames after the break compile
real graphs: restart patterns whose statuses tests/test_statuses.py pins against tlparse."""
import torch
import torch.nn as nn


class BreakingSGD(torch.optim.SGD):
    def step(self, closure=None):
        torch._dynamo.graph_break()  # nothing before it: attempt 1 is empty
        return super().step(closure)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        torch._dynamo.graph_break()
        return self.fc2(torch.relu(self.fc1(x)))


def main():
    torch.manual_seed(0)
    model = MLP()
    opt = BreakingSGD(model.parameters(), lr=0.01)
    compiled = torch.compile(model)

    @torch.compile
    def opt_step():
        opt.step()

    for step in range(2):
        x = torch.randn(8, 16)
        y = torch.randint(0, 4, (8,))
        opt.zero_grad()
        loss = nn.functional.cross_entropy(compiled(x), y)
        loss.backward()
        opt_step()
        print("step", step, "loss", float(loss.detach()))


if __name__ == "__main__":
    main()
