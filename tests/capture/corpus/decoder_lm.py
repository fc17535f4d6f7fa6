"""Scenario `decoder_lm`: a tiny GPT-style causal language model (token + position embeddings,
2 pre-norm blocks with its own multi-head attention: an explicit causal mask built with
torch.triu in block 0, F.scaled_dot_product_attention(is_causal=True) in block 1, GELU MLP,
tied output head).  One compiled training step (fwd+bwd+AdamW), then a greedy `generate` loop
under no_grad calling the compiled model on a sequence that grows by one token per step: the
length change recompiles the frame and automatic dynamic shapes then make the length a symbol
(`create_symbol`, `recompile_reasons`, then no further recompiles)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, d, heads, use_sdpa):
        super().__init__()
        self.heads, self.use_sdpa = heads, use_sdpa
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
            att = att.masked_fill(mask, float("-inf")).softmax(-1)
            y = att @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads, use_sdpa):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d, heads, use_sdpa)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, vocab=64, d=32, heads=4, max_len=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList([Block(d, heads, False), Block(d, heads, True)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        pos = torch.arange(idx.shape[1])
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


model = TinyGPT()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
data = torch.randint(0, 64, (4, 17))
logits = compiled(data[:, :-1])
loss = F.cross_entropy(logits.reshape(-1, 64), data[:, 1:].reshape(-1))
loss.backward()
opt.step()
print("train loss", float(loss))


@torch.no_grad()
def generate(idx, steps):
    for _ in range(steps):
        logits = compiled(idx)
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
    return idx


model.eval()
print("generated", generate(torch.randint(0, 64, (1, 4)), 6).tolist())
