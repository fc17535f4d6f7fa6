"""Scenario `inline_modules_off`: `torch._dynamo.config.inline_inbuilt_nn_modules = False`
(the pre-2.5 behaviour: module parameters become graph attributes / `L['self']` guards on
module ids instead of inputs), a small CNN+MLP compiled for training (1 step) and inference;
then two instances of the same class compiled, which with inlining off recompile per instance
(`recompile_reasons` on the module identity), and a module with a forward hook."""
import torch
import torch.nn as nn

torch.manual_seed(0)
torch._dynamo.config.inline_inbuilt_nn_modules = False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))


net = Net()
cnet = torch.compile(net)
cnet(torch.randn(2, 1, 8, 8)).sum().backward()
with torch.no_grad():
    cnet(torch.randn(2, 1, 8, 8))

a, b = nn.Linear(4, 4), nn.Linear(4, 4)


@torch.compile
def apply(mod, x):
    return mod(x).relu()


with torch.no_grad():
    apply(a, torch.randn(3, 4))
    apply(b, torch.randn(3, 4))

hooked = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())
hooked.register_forward_hook(lambda m, i, o: o * 2)
with torch.no_grad():
    print("hooked", torch.compile(hooked)(torch.randn(2, 4)).shape)
