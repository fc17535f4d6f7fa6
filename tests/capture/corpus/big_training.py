"""Scenario `big_training` (big log): a small transformer LM whose 7 blocks all differ (head
count, MLP width and activation, LayerNorm vs RMSNorm, explicit-mask attention vs
F.scaled_dot_product_attention, rotary embeddings or not, parallel vs sequential residual), so
every layer lowers to different code.  Trained with a compiled model + compiled
label-smoothing loss + compiled AdamW step on sequence lengths 16, 24, 32, 40 (static compile,
then an automatic-dynamic recompile), compiled foreach gradient clipping and a compiled
foreach EMA of the weights, evaluated under no_grad (inference graphs), and used for
sampling: a greedy/top-k `generate` loop calling the compiled model on a growing sequence and a
separately compiled `sample_next` (top-k + temperature + multinomial)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, D, MAXLEN = 96, 48, 64


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return self.w * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)


def rotary(x):
    t = x.shape[-2]
    half = x.shape[-1] // 2
    freqs = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float32) / half))
    ang = torch.arange(t, dtype=torch.float32)[:, None] * freqs[None]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class Attention(nn.Module):
    def __init__(self, heads, sdpa, rope):
        super().__init__()
        self.heads, self.sdpa, self.rope = heads, sdpa, rope
        self.qkv = nn.Linear(D, 3 * D, bias=not rope)
        self.o = nn.Linear(D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).chunk(3, -1)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        if self.rope:
            q, k = rotary(q), rotary(k)
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            mask = torch.ones(t, t, dtype=torch.bool).tril()
            y = s.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        return self.o(y.transpose(1, 2).reshape(b, t, D))


class MLP(nn.Module):
    def __init__(self, ratio, act):
        super().__init__()
        self.act = act
        hidden = int(D * ratio)
        if act == "swiglu":
            self.gate = nn.Linear(D, hidden, bias=False)
        self.up = nn.Linear(D, hidden)
        self.down = nn.Linear(hidden, D)

    def forward(self, x):
        if self.act == "swiglu":
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(getattr(F, self.act)(self.up(x)))


class Block(nn.Module):
    def __init__(self, heads, ratio, act, norm, sdpa, rope, parallel):
        super().__init__()
        mk = RMSNorm if norm == "rms" else nn.LayerNorm
        self.n1, self.n2 = mk(D), mk(D)
        self.attn = Attention(heads, sdpa, rope)
        self.mlp = MLP(ratio, act)
        self.parallel = parallel

    def forward(self, x):
        if self.parallel:
            h = self.n1(x)
            return x + self.attn(h) + self.mlp(self.n2(x))
        x = x + self.attn(self.n1(x))
        return x + self.mlp(self.n2(x))


CONFIGS = [
    dict(heads=4, ratio=4, act="gelu", norm="ln", sdpa=True, rope=False, parallel=False),
    dict(heads=6, ratio=2, act="swiglu", norm="rms", sdpa=False, rope=True, parallel=False),
    dict(heads=3, ratio=3, act="silu", norm="ln", sdpa=True, rope=True, parallel=True),
    dict(heads=8, ratio=2.5, act="relu", norm="rms", sdpa=True, rope=False, parallel=False),
    dict(heads=2, ratio=1.5, act="mish", norm="ln", sdpa=False, rope=False, parallel=True),
    dict(heads=4, ratio=3.5, act="swiglu", norm="rms", sdpa=True, rope=True, parallel=False),
    dict(heads=12, ratio=2, act="gelu", norm="ln", sdpa=False, rope=True, parallel=False),
]


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(MAXLEN, D)
        self.blocks = nn.ModuleList(Block(**c) for c in CONFIGS)
        self.norm = RMSNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


@torch.compile
def lm_loss(logits, targets, smoothing=0.1):
    logp = F.log_softmax(logits.float(), -1)
    nll = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return ((1 - smoothing) * nll - smoothing * logp.mean(-1)).mean()


@torch.compile
def sample_next(logits, temperature, k):
    logits = logits[:, -1] / temperature
    v, i = logits.topk(k, dim=-1)
    probs = torch.softmax(v, -1)
    choice = torch.multinomial(probs, 1)
    return i.gather(-1, choice)


model = LM()
cmodel = torch.compile(model)
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
rest = [p for n, p in model.named_parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": rest, "weight_decay": 0.0}], lr=torch.tensor(3e-3))


@torch.compile
def opt_step():
    opt.step()


params = [p for p in model.parameters()]
ema = [p.detach().clone() for p in params]


@torch.compile
def clip_grads(max_norm):
    grads = [p.grad for p in params]
    norms = torch._foreach_norm(grads)
    total = torch.linalg.vector_norm(torch.stack(norms))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    torch._foreach_mul_(grads, coef)
    return total


@torch.compile
def ema_update(decay):
    torch._foreach_lerp_(ema, [p.detach() for p in params], 1 - decay)


for step, seqlen in enumerate([16, 24, 32, 40]):
    data = torch.randint(0, VOCAB, (4, seqlen + 1))
    opt.zero_grad(set_to_none=True)
    loss = lm_loss(cmodel(data[:, :-1]), data[:, 1:])
    loss.backward()
    gnorm = clip_grads(1.0)
    opt_step()
    ema_update(0.99)
    print("step", step, "len", seqlen, "loss", float(loss), "grad norm", float(gnorm))

model.eval()
with torch.no_grad():
    for seqlen in (20, 28):
        data = torch.randint(0, VOCAB, (2, seqlen + 1))
        print("eval len", seqlen, float(lm_loss(cmodel(data[:, :-1]), data[:, 1:])))

    idx = torch.randint(0, VOCAB, (2, 5))
    for i in range(8):
        logits = cmodel(idx)
        if i % 2:
            nxt = sample_next(logits, 0.8, 5)
        else:
            nxt = logits[:, -1].argmax(-1, keepdim=True)
        idx = torch.cat([idx, nxt], 1)
    print("generated", idx.shape)
