"""Scenario `convnet`: a small ResNet-style conv net (stem conv + BatchNorm, three residual
blocks, one with a strided 1x1 projection shortcut, global average pooling, linear head)
compiled and trained for 2 steps with SGD+momentum in train mode (BatchNorm running-stat
buffer mutations), then one eval-mode forward under no_grad (a second, inference graph)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                       nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.short is None else self.short(x)))


class ResNetTiny(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layers = nn.Sequential(Block(8, 8), Block(8, 16, stride=2), Block(16, 16))
        self.fc = nn.Linear(16, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


model = ResNetTiny()
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(2):
    x = torch.randn(4, 3, 16, 16)
    y = torch.randint(0, 10, (4,))
    opt.zero_grad()
    loss = F.cross_entropy(compiled(x), y)
    loss.backward()
    opt.step()
    print("step", step, "loss", float(loss))
model.eval()
with torch.no_grad():
    print("eval", compiled(torch.randn(2, 3, 16, 16)).shape)
