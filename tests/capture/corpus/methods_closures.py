"""Scenario `methods_closures`: torch.compile applied to things other than a plain function or
module: a bound method (`torch.compile(obj.method)`), a method decorated inside the class, a
staticmethod, closures made by a factory (each closure a new frame with its cell contents in the
guards), a lambda, a `functools.partial`, a `__call__` object, and an nn.Module compiled in
place with `module.compile()`."""
import functools

import torch
import torch.nn as nn

torch.manual_seed(0)


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, x):
        return x * self.k + 1

    @torch.compile
    def decorated(self, x):
        return (x - self.k).abs()

    @staticmethod
    @torch.compile
    def static(x):
        return x.clamp(-1, 1)

    def __call__(self, x):
        return torch.softmax(x * self.k, -1)


s = Scaler(3.0)
print(torch.compile(s.scale)(torch.randn(4)).shape)
print(s.decorated(torch.randn(4)).shape)
print(Scaler.static(torch.randn(4)).shape)
print(torch.compile(s)(torch.randn(4)).shape)


def make_affine(a, b):
    def affine(x):
        return a * x + b
    return affine


for a, b in ((2.0, 1.0), (torch.tensor(3.0), torch.tensor(-1.0))):
    print(torch.compile(make_affine(a, b))(torch.randn(3)).shape)

print(torch.compile(lambda x: x.exp().log1p())(torch.randn(5)).shape)


def power(x, p):
    return x.abs() ** p


print(torch.compile(functools.partial(power, p=3))(torch.randn(5)).shape)

m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
m.compile()
print(m(torch.randn(2, 4)).shape)
