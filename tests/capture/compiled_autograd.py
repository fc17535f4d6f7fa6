"""Scenario `compiled_autograd`: a small MLP trained 2 steps with compiled autograd on
(torch._dynamo.config.compiled_autograd = True), so the backward is captured as a
`compiled_autograd_graph` and compiled under compile ids `!0/...` (key `compiled_autograd_id`).
A third step with fc1 frozen changes the autograd graph, so compiled autograd captures a
second graph (`!1/...`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch._dynamo.config.compiled_autograd = True


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = MLP()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
compiled = torch.compile(model)


@torch.compile
def train_step(x, y):
    loss = nn.functional.cross_entropy(compiled(x), y)
    loss.backward()
    return loss


for step in range(2):
    x = torch.randn(16, 32)
    y = torch.randint(0, 10, (16,))
    opt.zero_grad()
    loss = train_step(x, y)
    opt.step()
    print("step", step, "loss", float(loss.detach()))

# freeze fc1: a different autograd graph -> compiled_autograd_id 1
model.fc1.weight.requires_grad_(False)
model.fc1.bias.requires_grad_(False)
loss = train_step(torch.randn(16, 32), torch.randint(0, 10, (16,)))
print("frozen step loss", float(loss.detach()))
