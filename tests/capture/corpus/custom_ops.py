"""Scenario `custom_ops`: user-defined operators.  `torch.library.custom_op("corpus::scaled_gelu")`
with `register_fake` and `register_autograd` used in a compiled training step (the op stays
opaque in the graphs: `corpus.scaled_gelu.default`, backward via its registered formula);
a mutating custom op (`mutates_args=("out",)`) with a fake kernel, called inside a compiled
function (auto_functionalized); a custom op without a fake kernel called under torch.compile
(the missing fake kernel error, caught), and the same op called with `fullgraph=False` after
`torch.compiler.disable` wrapping (runs in eager)."""
import torch

torch.manual_seed(0)


@torch.library.custom_op("corpus::scaled_gelu", mutates_args=())
def scaled_gelu(x: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.nn.functional.gelu(x) * scale


@scaled_gelu.register_fake
def _(x, scale):
    return torch.empty_like(x)


def _backward(ctx, grad):
    x, = ctx.saved_tensors
    with torch.enable_grad():
        xx = x.detach().requires_grad_()
        y = torch.nn.functional.gelu(xx)
        g, = torch.autograd.grad(y, xx, grad)
    return g * ctx.scale, None


def _setup(ctx, inputs, output):
    x, scale = inputs
    ctx.save_for_backward(x)
    ctx.scale = scale


scaled_gelu.register_autograd(_backward, setup_context=_setup)


@torch.library.custom_op("corpus::add_into", mutates_args=("out",))
def add_into(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    out.copy_(a + b)


@add_into.register_fake
def _(a, b, out):
    return None


@torch.library.custom_op("corpus::no_fake", mutates_args=())
def no_fake(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0].clone()  # data-dependent output shape, and no fake kernel


lin = torch.nn.Linear(8, 8)


@torch.compile
def train_step(x):
    y = scaled_gelu(lin(x), 2.0)
    return (y ** 2).mean()


loss = train_step(torch.randn(4, 8))
loss.backward()
print("loss", float(loss), lin.weight.grad.norm().item() > 0)


@torch.compile
def mutate(a, b):
    out = torch.empty_like(a)
    add_into(a.sin(), b, out)
    return out * 2


print("mutate", mutate(torch.randn(5), torch.randn(5)).shape)


@torch.compile
def uses_no_fake(x):
    return no_fake(x * 2).sum()


try:
    print("no_fake", uses_no_fake(torch.randn(10)))
except Exception as e:
    print("no fake kernel:", type(e).__name__, str(e).splitlines()[0][:100])
