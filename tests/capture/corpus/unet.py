"""Scenario `unet`: a small 2-level UNet (double-conv blocks with GroupNorm + SiLU, max-pool
down-sampling, ConvTranspose2d up-sampling, skip connections joined with torch.cat, 1x1 output
conv, sigmoid) run for inference under torch.no_grad() in eval mode: two calls at 32x32 and
one at 48x48 (a recompile)."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(4, cout), nn.SiLU(),
        nn.Conv2d(cout, cout, 3, padding=1), nn.GroupNorm(4, cout), nn.SiLU())


class UNet(nn.Module):
    def __init__(self, cin=3, base=8, cout=1):
        super().__init__()
        self.down1 = double_conv(cin, base)
        self.down2 = double_conv(base, base * 2)
        self.bottom = double_conv(base * 2, base * 4)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(base * 4, base * 2, 2, stride=2)
        self.dec2 = double_conv(base * 4, base * 2)
        self.up1 = nn.ConvTranspose2d(base * 2, base, 2, stride=2)
        self.dec1 = double_conv(base * 2, base)
        self.out = nn.Conv2d(base, cout, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        b = self.bottom(self.pool(d2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], dim=1))
        return torch.sigmoid(self.out(u1))


model = UNet().eval()
compiled = torch.compile(model)
with torch.no_grad():
    for shape in [(2, 3, 32, 32), (2, 3, 32, 32), (1, 3, 48, 48)]:
        out = compiled(torch.randn(*shape))
        print(shape, "->", tuple(out.shape))
