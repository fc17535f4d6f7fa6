"""Scenario `optimizer_compile`: a compiled optimizer step, `torch.compile(opt.step)`, for AdamW
with three param groups (decayed weights, undecayed biases/norms with another lr, an embedding
with amsgrad-free defaults and its own betas), driven by a OneCycleLR scheduler whose lr changes
each step (the lr is a tensor wrapped with `torch.tensor(lr)` so the step does not recompile
every time, per torch's recipe); the model itself runs eager.  Then a plain SGD-with-Nesterov
optimizer whose float lr is changed by a StepLR scheduler (recompiles on the lr constant)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 16)
        self.fc = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)
        self.out = nn.Linear(16, 2)

    def forward(self, t):
        return self.out(self.norm(torch.relu(self.fc(self.emb(t).mean(1)))))


model = Net()
decay = [model.fc.weight, model.out.weight]
no_decay = [model.fc.bias, model.out.bias, model.norm.weight, model.norm.bias]
opt = torch.optim.AdamW([
    {"params": decay, "weight_decay": 0.05},
    {"params": no_decay, "weight_decay": 0.0, "lr": torch.tensor(0.02)},
    {"params": model.emb.parameters(), "betas": (0.8, 0.95)},
], lr=torch.tensor(0.01))
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=[0.05, 0.02, 0.01], total_steps=6)
step_fn = torch.compile(opt.step)
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(torch.randint(0, 30, (8, 5))), torch.randint(0, 2, (8,)))
    loss.backward()
    step_fn()
    sched.step()
    print("adamw step", step, float(loss), [float(g["lr"]) for g in opt.param_groups])

lin = nn.Linear(8, 8)
sgd = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9, nesterov=True)
sgd_sched = torch.optim.lr_scheduler.StepLR(sgd, step_size=1, gamma=0.5)
sgd_step = torch.compile(sgd.step)
for step in range(3):
    sgd.zero_grad()
    lin(torch.randn(4, 8)).square().mean().backward()
    sgd_step()
    sgd_sched.step()
print("sgd lr", sgd.param_groups[0]["lr"])
