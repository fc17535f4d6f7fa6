"""Scenario `encoder_transformer`: an nn.TransformerEncoder sequence classifier (2 layers,
embedding + mean pooling + linear head) compiled with torch.compile and trained for 2 steps
(forward + backward through inductor: joint / forward / backward graphs), with the AdamW
optimizer step compiled separately (`torch.compile(opt.step)`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EncoderClassifier(nn.Module):
    def __init__(self, vocab=100, d=32, heads=4, layers=2, classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(1, 16, d))
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=64, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, classes)

    def forward(self, tokens):
        h = self.emb(tokens) + self.pos[:, : tokens.shape[1]]
        h = self.encoder(h)
        return self.head(self.norm(h.mean(dim=1)))


model = EncoderClassifier()
compiled = torch.compile(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


@torch.compile
def opt_step():
    opt.step()


for step in range(2):
    tokens = torch.randint(0, 100, (4, 16))
    labels = torch.randint(0, 5, (4,))
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(compiled(tokens), labels)
    loss.backward()
    opt_step()
    print("step", step, "loss", float(loss))
