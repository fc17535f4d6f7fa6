"""Scenario `big_many_models` (big log): a zoo of 20 small, distinct models (deep MLP, LeNet,
VGG block, ResNet bottleneck, MobileNet inverted residual + squeeze-excite, DenseNet block, UNet
piece, LSTM classifier, GRU encoder-decoder, transformer encoder block, ViT patch embedding +
block, conv autoencoder, VAE, dense-adjacency GCN, soft mixture of experts, WaveNet dilated
causal convs, ConvNeXt block, DLRM-style EmbeddingBag recommender, PixelShuffle
super-resolution, RealNVP coupling layer), each compiled with torch.compile, trained one step
(forward + backward, SGD step eager) and then run in eval mode under no_grad (inference graph):
about 20 frames x (training + inference) compiles."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeepMLP(nn.Module):
    def __init__(self):
        super().__init__()
        dims = [32, 64, 48, 48, 32, 10]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:]))
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        for i, l in enumerate(self.layers):
            x = l(x)
            if i < len(self.layers) - 1:
                x = self.drop(F.relu(x))
        return x


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(1, 6, 5), nn.Conv2d(6, 16, 5)
        self.f1, self.f2 = nn.Linear(16 * 4 * 4, 64), nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(torch.tanh(self.c1(x)), 2)
        x = F.max_pool2d(torch.tanh(self.c2(x)), 2)
        return self.f2(torch.tanh(self.f1(x.flatten(1))))


class VGGBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                                  nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
                                  nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(64, 10))

    def forward(self, x):
        return self.body(x)


class Bottleneck(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(c, c // 4, 1, bias=False), nn.BatchNorm2d(c // 4), nn.ReLU())
        self.b = nn.Sequential(nn.Conv2d(c // 4, c // 4, 3, padding=1, bias=False), nn.BatchNorm2d(c // 4), nn.ReLU())
        self.c = nn.Sequential(nn.Conv2d(c // 4, c, 1, bias=False), nn.BatchNorm2d(c))
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)
        x = F.relu(x + self.c(self.b(self.a(x))))
        return self.fc(x.mean((2, 3)))


class MobileSE(nn.Module):
    def __init__(self, c=8, e=4):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 3, padding=1)
        self.expand = nn.Conv2d(c, c * e, 1)
        self.dw = nn.Conv2d(c * e, c * e, 3, padding=1, groups=c * e)
        self.se1, self.se2 = nn.Linear(c * e, c), nn.Linear(c, c * e)
        self.project = nn.Conv2d(c * e, c, 1)
        self.bn = nn.BatchNorm2d(c)
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)
        h = F.hardswish(self.dw(F.relu6(self.expand(x))))
        s = torch.sigmoid(self.se2(F.relu(self.se1(h.mean((2, 3))))))
        h = h * s[:, :, None, None]
        x = x + self.bn(self.project(h))
        return self.fc(x.mean((2, 3)))


class DenseBlock(nn.Module):
    def __init__(self, c0=4, g=4, n=3):
        super().__init__()
        self.stem = nn.Conv2d(3, c0, 3, padding=1)
        self.layers = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(c0 + i * g), nn.ReLU(), nn.Conv2d(c0 + i * g, g, 3, padding=1))
            for i in range(n))
        self.fc = nn.Linear(c0 + n * g, 10)

    def forward(self, x):
        feats = [self.stem(x)]
        for layer in self.layers:
            feats.append(layer(torch.cat(feats, 1)))
        return self.fc(torch.cat(feats, 1).mean((2, 3)))


class UNetPiece(nn.Module):
    def __init__(self):
        super().__init__()
        self.d = nn.Conv2d(3, 8, 3, padding=1)
        self.m = nn.Conv2d(8, 16, 3, padding=1)
        self.u = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.o = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        d = F.silu(self.d(x))
        m = F.silu(self.m(F.avg_pool2d(d, 2)))
        return self.o(torch.cat([self.u(m), d], 1)).mean((1, 2, 3))


class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(40, 12)
        self.lstm = nn.LSTM(12, 16, batch_first=True)
        self.fc = nn.Linear(16, 3)

    def forward(self, t):
        _, (h, _) = self.lstm(self.emb(t))
        return self.fc(h[-1])


class GRUSeq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 12)
        self.enc = nn.GRU(12, 16, batch_first=True)
        self.dec = nn.GRU(12, 16, batch_first=True)
        self.out = nn.Linear(16, 30)

    def forward(self, t):
        _, h = self.enc(self.emb(t))
        y, _ = self.dec(self.emb(t.flip(1)), h)
        return self.out(y).mean(1)


class EncoderBlock(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, 4, batch_first=True)
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 64), nn.GELU(), nn.Linear(64, d))
        self.fc = nn.Linear(d, 5)

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        x = self.n1(x + a)
        x = self.n2(x + self.ff(x))
        return self.fc(x[:, 0])


class ViTTiny(nn.Module):
    def __init__(self, d=24, p=4):
        super().__init__()
        self.patch = nn.Conv2d(3, d, p, stride=p)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.randn(1, 17, d) * 0.02)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 48), nn.GELU(), nn.Linear(48, d))
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        q, k, v = self.qkv(self.norm(x)).chunk(3, -1)
        q, k, v = (z.unflatten(-1, (3, 8)).transpose(1, 2) for z in (q, k, v))
        x = x + self.proj(F.scaled_dot_product_attention(q, k, v).transpose(1, 2).flatten(2))
        x = x + self.mlp(self.norm(x))
        return self.head(x[:, 0])


class ConvAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.ReLU(),
                                 nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1), nn.Sigmoid())

    def forward(self, x):
        return F.mse_loss(self.dec(self.enc(x)), x, reduction="none").mean((1, 2, 3))


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(64, 32)
        self.mu, self.logvar = nn.Linear(32, 8), nn.Linear(32, 8)
        self.dec = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 64))

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        rec = F.binary_cross_entropy_with_logits(self.dec(z), torch.sigmoid(x), reduction="none").sum(-1)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1)
        return rec + kl


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        n = x.shape[1]
        adj = (torch.cdist(x, x) < 3.0).float() + torch.eye(n)
        deg = adj.sum(-1)
        norm = adj / torch.sqrt(deg[..., :, None] * deg[..., None, :])
        h = F.relu(norm @ self.l1(x))
        return (norm @ self.l2(h)).mean(1)


class SoftMoE(nn.Module):
    def __init__(self, d=16, experts=4):
        super().__init__()
        self.gate = nn.Linear(d, experts)
        self.w1 = nn.Parameter(torch.randn(experts, d, 32) * 0.1)
        self.w2 = nn.Parameter(torch.randn(experts, 32, d) * 0.1)
        self.fc = nn.Linear(d, 3)

    def forward(self, x):
        g = torch.softmax(self.gate(x), -1)
        top, idx = g.topk(2, -1)
        weights = torch.zeros_like(g).scatter(-1, idx, top / top.sum(-1, keepdim=True))
        h = torch.einsum("bd,edh->beh", x, self.w1).relu()
        y = torch.einsum("beh,ehd->bed", h, self.w2)
        return self.fc((weights.unsqueeze(-1) * y).sum(1))


class WaveNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.inp = nn.Conv1d(1, c, 1)
        self.filt = nn.ModuleList(nn.Conv1d(c, c, 2, dilation=d) for d in (1, 2, 4))
        self.gate = nn.ModuleList(nn.Conv1d(c, c, 2, dilation=d) for d in (1, 2, 4))
        self.out = nn.Conv1d(c, 1, 1)

    def forward(self, x):
        h = self.inp(x)
        for f, g in zip(self.filt, self.gate):
            pad = F.pad(h, (f.dilation[0], 0))
            h = h + torch.tanh(f(pad)) * torch.sigmoid(g(pad))
        return self.out(h).mean((1, 2))


class ConvNeXtBlock(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.stem = nn.Conv2d(3, c, 2, stride=2)
        self.dw = nn.Conv2d(c, c, 7, padding=3, groups=c)
        self.norm = nn.LayerNorm(c)
        self.pw1, self.pw2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.gamma = nn.Parameter(torch.full((c,), 1e-2))
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)
        h = self.dw(x).permute(0, 2, 3, 1)
        h = self.pw2(F.gelu(self.pw1(self.norm(h)))) * self.gamma
        x = x + h.permute(0, 3, 1, 2)
        return self.fc(x.mean((2, 3)))


class DLRM(nn.Module):
    def __init__(self):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(50, 8, mode="sum") for _ in range(3))
        self.bottom = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
        self.top = nn.Sequential(nn.Linear(8 + 6, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, dense, sparse):
        feats = [self.bottom(dense)] + [bag(sparse[:, i]) for i, bag in enumerate(self.bags)]
        z = torch.stack(feats, 1)
        inter = z @ z.transpose(1, 2)
        iu = torch.triu_indices(4, 4, 1)
        return self.top(torch.cat([feats[0], inter[:, iu[0], iu[1]]], 1)).squeeze(-1)


class SuperRes(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 16, 5, padding=2)
        self.c2 = nn.Conv2d(16, 8, 3, padding=1)
        self.c3 = nn.Conv2d(8, 4, 3, padding=1)
        self.ps = nn.PixelShuffle(2)

    def forward(self, x):
        return self.ps(self.c3(torch.tanh(self.c2(torch.tanh(self.c1(x)))))).mean((1, 2, 3))


class Coupling(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d // 2, 32), nn.ReLU(), nn.Linear(32, d))

    def forward(self, x):
        a, b = x.chunk(2, -1)
        s, t = self.net(a).chunk(2, -1)
        s = torch.tanh(s)
        y = torch.cat([a, b * torch.exp(s) + t], -1)
        logp = -0.5 * (y ** 2).sum(-1) - 0.5 * y.shape[-1] * math.log(2 * math.pi)
        return -(logp + s.sum(-1))


def img(c, s):
    return lambda b: (torch.randn(b, c, s, s),)


ZOO = [
    (DeepMLP, lambda b: (torch.randn(b, 32),)),
    (LeNet, img(1, 28)),
    (VGGBlock, img(3, 16)),
    (Bottleneck, img(3, 12)),
    (MobileSE, img(3, 12)),
    (DenseBlock, img(3, 10)),
    (UNetPiece, img(3, 16)),
    (LSTMClassifier, lambda b: (torch.randint(0, 40, (b, 7)),)),
    (GRUSeq2Seq, lambda b: (torch.randint(0, 30, (b, 6)),)),
    (EncoderBlock, lambda b: (torch.randn(b, 9, 32),)),
    (ViTTiny, img(3, 16)),
    (ConvAutoencoder, img(1, 16)),
    (VAE, lambda b: (torch.randn(b, 64),)),
    (GCN, lambda b: (torch.randn(b, 10, 8),)),
    (SoftMoE, lambda b: (torch.randn(b, 16),)),
    (WaveNet, lambda b: (torch.randn(b, 1, 32),)),
    (ConvNeXtBlock, img(3, 16)),
    (DLRM, lambda b: (torch.randn(b, 4), torch.randint(0, 50, (b, 3, 4)))),
    (SuperRes, img(1, 8)),
    (Coupling, lambda b: (torch.randn(b, 8),)),
]

for cls, make_input in ZOO:
    model = cls()
    cm = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    out = cm(*make_input(4))
    loss = out.float().pow(2).mean()
    loss.backward()
    opt.step()
    model.eval()
    with torch.no_grad():
        cm(*make_input(4))
    print(cls.__name__, tuple(out.shape), float(loss))
