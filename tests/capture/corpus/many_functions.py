"""Scenario `many_functions`: a "library" of 40 small, different functions (activations,
normalizations, losses, reductions, elementwise math, indexing), each wrapped in its own
torch.compile and called with two shapes: 40 frames, each compiled static first and then
recompiled once with automatic dynamic shapes (`[N/0]`, `[N/1]`), about 80 inductor graphs."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def act_relu6(x): return F.relu6(x * 3)
def act_hardswish(x): return F.hardswish(x) + 1
def act_leaky(x): return F.leaky_relu(x, 0.2) * 2
def act_elu(x): return F.elu(x, alpha=0.5)
def act_selu(x): return F.selu(x).abs()
def act_softplus(x): return F.softplus(x, beta=2.0)
def act_mish(x): return F.mish(x) - x
def act_glu(x): return F.glu(torch.cat([x, x.flip(-1)], -1), dim=-1)
def act_swiglu(x): return F.silu(x) * torch.sigmoid(x * 1.5)
def act_gelu_tanh(x): return F.gelu(x, approximate="tanh")
def norm_layer(x): return F.layer_norm(x, x.shape[-1:])
def norm_rms(x): return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
def norm_l2(x): return F.normalize(x, dim=-1)
def norm_group(x): return F.group_norm(x.unsqueeze(0).transpose(1, 2), 2).squeeze(0)
def norm_zscore(x): return (x - x.mean(0)) / (x.std(0) + 1e-5)
def norm_minmax(x): return (x - x.amin()) / (x.amax() - x.amin() + 1e-6)
def loss_mse(x): return F.mse_loss(x, torch.zeros_like(x))
def loss_huber(x): return F.huber_loss(x, x.roll(1, 0), delta=0.5)
def loss_ce(x): return F.cross_entropy(x, torch.zeros(x.shape[0], dtype=torch.long))
def loss_bce(x): return F.binary_cross_entropy_with_logits(x, torch.ones_like(x))
def loss_kl(x): return F.kl_div(F.log_softmax(x, -1), F.softmax(x.flip(0), -1), reduction="batchmean")
def loss_cosine(x): return 1 - F.cosine_similarity(x, x.roll(1, -1), dim=-1).mean()
def loss_hinge(x): return torch.clamp(1 - x * x.sign(), min=0).mean()
def loss_focal(x):
    p = torch.sigmoid(x)
    return (-(1 - p) ** 2 * torch.log(p + 1e-6)).mean()
def red_logsumexp(x): return torch.logsumexp(x, dim=-1)
def red_var_mean(x): return torch.stack(torch.var_mean(x, dim=0))
def red_cumprod(x): return torch.cumprod(x.tanh(), dim=-1)
def red_argmax(x): return x.argmax(-1).float() + x.max(-1).values
def red_topk(x): return x.topk(2, dim=-1).values.sum(-1)
def red_norms(x): return torch.linalg.vector_norm(x, ord=3, dim=-1) + x.norm(dim=-1)
def red_prod_any(x): return (x > 0).any(-1).float() * x.prod(-1)
def math_poly(x): return 3 * x ** 3 - 2 * x ** 2 + x - 7
def math_trig(x): return torch.sin(x) * torch.cos(2 * x) + torch.atan2(x, x + 1)
def math_exp_log(x): return torch.log1p(torch.exp(-x.abs())) + torch.expm1(x.clamp(max=1))
def math_where(x): return torch.where(x > 0, x.sqrt(), -(-x).sqrt())
def math_erf(x): return torch.erf(x) * torch.erfc(x) + torch.lgamma(x.abs() + 1)
def idx_gather(x): return x.gather(-1, x.argsort(-1)[..., :2])
def idx_scatter(x): return torch.zeros_like(x).scatter_add(-1, x.argsort(-1), x)
def idx_masked_fill(x): return x.masked_fill(x < 0, 0.0).cumsum(0)
def idx_slice_cat(x): return torch.cat([x[:, ::2], x[:, 1::2] * 2], dim=-1)


FNS = [v for k, v in list(globals().items()) if k.split("_")[0] in {"act", "norm", "loss", "red", "math", "idx"}]
assert len(FNS) == 40, len(FNS)
for fn in FNS:
    cf = torch.compile(fn)
    for shape in ((4, 6), (5, 8)):
        cf(torch.randn(*shape))
print("compiled", len(FNS), "functions")
