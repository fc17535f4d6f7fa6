"""Scenario `many_lambdas`: 153 small compiled frames (code objects), most of them named `<lambda>`:
the 141 lambdas of the list `LAMBDAS`, each on its own line, compiled with
`torch.compile(fn, backend=...)` (backend "eager" for most, "aot_eager" for every tenth from
the 4th, "inductor" for 3) and called once each in list order, so frame ids 0..140 follow
the list; then:
  * lambdas 0 and 1 called again with another shape: recompiles `[0/1]`, `[1/1]` of `<lambda>`
    frames (automatic dynamic shapes);
  * two lambdas defined on the SAME line (`SAME_LINE`: same name, same first line, two code
    objects);
  * lambdas built inside a function (`build_pair.<locals>.<lambda>`, two of them);
  * a few small named functions (`double`, `shift`, `norm_rows`, `gate`);
  * nested functions with the same name `inner` from two factories (`make_scaler.<locals>.inner`,
    `make_shifter.<locals>.inner`); a second closure of `make_scaler` (another constant) is a
    recompile of the same code object, not a new frame;
  * two classes whose method is named `forward` (`Left.forward`, `Right.forward`, compiled
    modules).
stdout (program-output.txt): one `EVENT ok fn=<qualname> line=<first line> backend=<backend>`
per compiled call in call order (`EVENT recompile ...` for the calls expected to compile again),
and a final `EVENT frames` line with the number of code objects compiled."""
import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(3, 4)
codes = set()


def run(fn, backend, *args, what="ok", compiled=None):
    compiled = compiled or torch.compile(fn, backend=backend)
    compiled(*args)
    code = (fn.forward if isinstance(fn, nn.Module) else fn).__code__
    codes.add(code)
    print(f"EVENT {what} fn={code.co_qualname} line={code.co_firstlineno} backend={backend}",
          flush=True)
    return compiled


LAMBDAS = [
    (lambda x: x + 1, "eager"),
    (lambda x: x * 1, "eager"),
    (lambda x: x - 1, "eager"),
    (lambda x: torch.relu(x) + 1, "aot_eager"),
    (lambda x: torch.sin(x) * 1, "eager"),
    (lambda x: torch.cos(x) - 1, "inductor"),
    (lambda x: torch.tanh(x * 1), "eager"),
    (lambda x: torch.sigmoid(x) + 1, "eager"),
    (lambda x: (x * 1).abs(), "eager"),
    (lambda x: x.pow(2) + 1, "eager"),
    (lambda x: torch.exp(-x * 1), "eager"),
    (lambda x: x.clamp(-1, 1), "eager"),
    (lambda x: x.sum(-1) * 1, "eager"),
    (lambda x: x.mean(0) + 1, "aot_eager"),
    (lambda x: torch.softmax(x * 1, -1), "eager"),
    (lambda x: x + 2, "eager"),
    (lambda x: x * 2, "eager"),
    (lambda x: x - 2, "eager"),
    (lambda x: torch.relu(x) + 2, "eager"),
    (lambda x: torch.sin(x) * 2, "eager"),
    (lambda x: torch.cos(x) - 2, "eager"),
    (lambda x: torch.tanh(x * 2), "eager"),
    (lambda x: torch.sigmoid(x) + 2, "eager"),
    (lambda x: (x * 2).abs(), "aot_eager"),
    (lambda x: x.pow(2) + 2, "eager"),
    (lambda x: torch.exp(-x * 2), "eager"),
    (lambda x: x.clamp(-2, 2), "eager"),
    (lambda x: x.sum(-1) * 2, "eager"),
    (lambda x: x.mean(0) + 2, "eager"),
    (lambda x: torch.softmax(x * 2, -1), "eager"),
    (lambda x: x + 3, "eager"),
    (lambda x: x * 3, "eager"),
    (lambda x: x - 3, "eager"),
    (lambda x: torch.relu(x) + 3, "aot_eager"),
    (lambda x: torch.sin(x) * 3, "eager"),
    (lambda x: torch.cos(x) - 3, "eager"),
    (lambda x: torch.tanh(x * 3), "eager"),
    (lambda x: torch.sigmoid(x) + 3, "eager"),
    (lambda x: (x * 3).abs(), "eager"),
    (lambda x: x.pow(2) + 3, "eager"),
    (lambda x: torch.exp(-x * 3), "eager"),
    (lambda x: x.clamp(-3, 3), "eager"),
    (lambda x: x.sum(-1) * 3, "eager"),
    (lambda x: x.mean(0) + 3, "aot_eager"),
    (lambda x: torch.softmax(x * 3, -1), "eager"),
    (lambda x: x + 4, "eager"),
    (lambda x: x * 4, "eager"),
    (lambda x: x - 4, "eager"),
    (lambda x: torch.relu(x) + 4, "eager"),
    (lambda x: torch.sin(x) * 4, "eager"),
    (lambda x: torch.cos(x) - 4, "inductor"),
    (lambda x: torch.tanh(x * 4), "eager"),
    (lambda x: torch.sigmoid(x) + 4, "eager"),
    (lambda x: (x * 4).abs(), "aot_eager"),
    (lambda x: x.pow(2) + 4, "eager"),
    (lambda x: torch.exp(-x * 4), "eager"),
    (lambda x: x.clamp(-4, 4), "eager"),
    (lambda x: x.sum(-1) * 4, "eager"),
    (lambda x: x.mean(0) + 4, "eager"),
    (lambda x: torch.softmax(x * 4, -1), "eager"),
    (lambda x: x + 5, "eager"),
    (lambda x: x * 5, "eager"),
    (lambda x: x - 5, "eager"),
    (lambda x: torch.relu(x) + 5, "aot_eager"),
    (lambda x: torch.sin(x) * 5, "eager"),
    (lambda x: torch.cos(x) - 5, "eager"),
    (lambda x: torch.tanh(x * 5), "eager"),
    (lambda x: torch.sigmoid(x) + 5, "eager"),
    (lambda x: (x * 5).abs(), "eager"),
    (lambda x: x.pow(2) + 5, "eager"),
    (lambda x: torch.exp(-x * 5), "eager"),
    (lambda x: x.clamp(-5, 5), "eager"),
    (lambda x: x.sum(-1) * 5, "eager"),
    (lambda x: x.mean(0) + 5, "aot_eager"),
    (lambda x: torch.softmax(x * 5, -1), "eager"),
    (lambda x: x + 6, "eager"),
    (lambda x: x * 6, "eager"),
    (lambda x: x - 6, "eager"),
    (lambda x: torch.relu(x) + 6, "eager"),
    (lambda x: torch.sin(x) * 6, "eager"),
    (lambda x: torch.cos(x) - 6, "eager"),
    (lambda x: torch.tanh(x * 6), "eager"),
    (lambda x: torch.sigmoid(x) + 6, "eager"),
    (lambda x: (x * 6).abs(), "aot_eager"),
    (lambda x: x.pow(2) + 6, "eager"),
    (lambda x: torch.exp(-x * 6), "eager"),
    (lambda x: x.clamp(-6, 6), "eager"),
    (lambda x: x.sum(-1) * 6, "eager"),
    (lambda x: x.mean(0) + 6, "eager"),
    (lambda x: torch.softmax(x * 6, -1), "eager"),
    (lambda x: x + 7, "eager"),
    (lambda x: x * 7, "eager"),
    (lambda x: x - 7, "eager"),
    (lambda x: torch.relu(x) + 7, "aot_eager"),
    (lambda x: torch.sin(x) * 7, "eager"),
    (lambda x: torch.cos(x) - 7, "eager"),
    (lambda x: torch.tanh(x * 7), "eager"),
    (lambda x: torch.sigmoid(x) + 7, "eager"),
    (lambda x: (x * 7).abs(), "eager"),
    (lambda x: x.pow(2) + 7, "eager"),
    (lambda x: torch.exp(-x * 7), "inductor"),
    (lambda x: x.clamp(-7, 7), "eager"),
    (lambda x: x.sum(-1) * 7, "eager"),
    (lambda x: x.mean(0) + 7, "aot_eager"),
    (lambda x: torch.softmax(x * 7, -1), "eager"),
    (lambda x: x + 8, "eager"),
    (lambda x: x * 8, "eager"),
    (lambda x: x - 8, "eager"),
    (lambda x: torch.relu(x) + 8, "eager"),
    (lambda x: torch.sin(x) * 8, "eager"),
    (lambda x: torch.cos(x) - 8, "eager"),
    (lambda x: torch.tanh(x * 8), "eager"),
    (lambda x: torch.sigmoid(x) + 8, "eager"),
    (lambda x: (x * 8).abs(), "aot_eager"),
    (lambda x: x.pow(2) + 8, "eager"),
    (lambda x: torch.exp(-x * 8), "eager"),
    (lambda x: x.clamp(-8, 8), "eager"),
    (lambda x: x.sum(-1) * 8, "eager"),
    (lambda x: x.mean(0) + 8, "eager"),
    (lambda x: torch.softmax(x * 8, -1), "eager"),
    (lambda x: x + 9, "eager"),
    (lambda x: x * 9, "eager"),
    (lambda x: x - 9, "eager"),
    (lambda x: torch.relu(x) + 9, "aot_eager"),
    (lambda x: torch.sin(x) * 9, "eager"),
    (lambda x: torch.cos(x) - 9, "eager"),
    (lambda x: torch.tanh(x * 9), "eager"),
    (lambda x: torch.sigmoid(x) + 9, "eager"),
    (lambda x: (x * 9).abs(), "eager"),
    (lambda x: x.pow(2) + 9, "eager"),
    (lambda x: torch.exp(-x * 9), "eager"),
    (lambda x: x.clamp(-9, 9), "eager"),
    (lambda x: x.sum(-1) * 9, "eager"),
    (lambda x: x.mean(0) + 9, "aot_eager"),
    (lambda x: torch.softmax(x * 9, -1), "eager"),
    (lambda x: x + 10, "eager"),
    (lambda x: x * 10, "eager"),
    (lambda x: x - 10, "eager"),
    (lambda x: torch.relu(x) + 10, "eager"),
    (lambda x: torch.sin(x) * 10, "eager"),
    (lambda x: torch.cos(x) - 10, "eager"),
]
compiled_lambdas = [run(fn, backend, x) for fn, backend in LAMBDAS]
# same frames, another shape: recompiles
run(LAMBDAS[0][0], "eager", torch.randn(5, 4), what="recompile", compiled=compiled_lambdas[0])
run(LAMBDAS[1][0], "eager", torch.randn(5, 4), what="recompile", compiled=compiled_lambdas[1])

SAME_LINE = [(lambda x: x * 2 + 1), (lambda x: x * 2 - 1)]
for fn in SAME_LINE:
    run(fn, "eager", x)


def build_pair(k):
    return (lambda x: x * k,
            lambda x: x / k)


for fn in build_pair(3):
    run(fn, "aot_eager", x)


def double(x):
    return x * 2


def shift(x):
    return x + 0.5


def norm_rows(x):
    return x / x.norm(dim=-1, keepdim=True)


def gate(x):
    return x * torch.sigmoid(x)


for fn, backend in ((double, "eager"), (shift, "eager"), (norm_rows, "aot_eager"), (gate, "inductor")):
    run(fn, backend, x)


def make_scaler(k):
    def inner(x):
        return x * k
    return inner


def make_shifter(k):
    def inner(x):
        return x + k
    return inner


run(make_scaler(2), "eager", x)
run(make_shifter(2), "eager", x)
run(make_scaler(7), "eager", x, what="recompile")  # same code object as make_scaler(2)'s inner


class Left(nn.Module):
    def forward(self, x):
        return torch.relu(x) - 1


class Right(nn.Module):
    def forward(self, x):
        return torch.relu(-x) + 1


run(Left(), "eager", x)
run(Right(), "aot_eager", x)
print(f"EVENT frames code_objects={len(codes)}", flush=True)
