"""Scenario `rnn_loop`: recurrent and Python-loop models. (1) an nn.LSTM (2 layers) + nn.GRU
tagger compiled and trained one step: by default dynamo refuses RNN modules ("Attempted to wrap
RNN, GRU, or LSTM", gb0014, the frame falls back to eager), so the same model is compiled again
with `torch._dynamo.config.allow_rnn = True` (traced: aten.lstm / aten.gru in the graphs); (2)
a model whose forward loops in Python over a ModuleList of layers with per-layer conditionals
on python attributes (kind / use_residual / activation name), unrolled by dynamo into one
graph, run forward+backward; (3) a hand-written RNN cell stepped in a Python `for t in
range(T)` loop."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 24, num_layers=2, batch_first=True)
        self.gru = nn.GRU(24, 16, batch_first=True, bidirectional=True)
        self.out = nn.Linear(32, 7)

    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        h, _ = self.gru(h)
        return self.out(h)


class Layer(nn.Module):
    def __init__(self, d, kind, use_residual, act):
        super().__init__()
        self.kind, self.use_residual, self.act = kind, use_residual, act
        self.lin = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d) if kind == "norm" else None

    def forward(self, x):
        y = self.lin(x)
        if self.norm is not None:
            y = self.norm(y)
        y = getattr(F, self.act)(y)
        return x + y if self.use_residual else y


class LoopNet(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        cfg = [("plain", True, "relu"), ("norm", False, "gelu"), ("plain", False, "silu"),
               ("norm", True, "tanh"), ("plain", True, "elu"), ("norm", True, "mish")]
        self.layers = nn.ModuleList(Layer(d, *c) for c in cfg)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i % 2 == 1:
                x = x * 0.5
        return x.sum(-1)


class CellRNN(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.ih = nn.Linear(d, d)
        self.hh = nn.Linear(d, d)

    def forward(self, xs):
        h = torch.zeros(xs.shape[0], xs.shape[2])
        outs = []
        for t in range(xs.shape[1]):
            h = torch.tanh(self.ih(xs[:, t]) + self.hh(h))
            outs.append(h)
        return torch.stack(outs, 1)


tagger = Tagger()
ct = torch.compile(tagger)
opt = torch.optim.SGD(tagger.parameters(), lr=0.1)
tokens = torch.randint(0, 50, (3, 5))
loss = F.cross_entropy(ct(tokens).flatten(0, 1), torch.randint(0, 7, (15,)))
loss.backward()
opt.step()
print("tagger loss", float(loss))

class TaggerAllowRNN(Tagger):
    # its own forward (a new code object): Tagger.forward's frame is already marked as skipped
    def forward(self, tokens):
        h, _ = self.lstm(self.emb(tokens))
        h, _ = self.gru(h)
        return self.out(h)


torch._dynamo.config.allow_rnn = True
tagger2 = TaggerAllowRNN()
ct2 = torch.compile(tagger2)
loss = F.cross_entropy(ct2(tokens).flatten(0, 1), torch.randint(0, 7, (15,)))
loss.backward()
print("tagger (allow_rnn) loss", float(loss))

loop = LoopNet()
cl = torch.compile(loop)
out = cl(torch.randn(4, 32))
out.sum().backward()
print("loop", tuple(out.shape))

cell = CellRNN()
cc = torch.compile(cell)
with torch.no_grad():
    print("cell", tuple(cc(torch.randn(2, 6, 16)).shape))
