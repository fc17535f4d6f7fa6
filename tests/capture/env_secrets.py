"""Scenario `env_secrets`: compiled code that reads secrets from its environment, and string
arguments, as a build-time capture in CI would log them.

`scale` reads `os.environ["HF_TOKEN"]` and `os.getenv("DB_PASSWORD")` inside the compiled
region: Dynamo guards on their values (`G['os'].environ._data[b'HF_TOKEN'] == b'hf_…'`) in
the guards, and the recompile reason and `compilation_metrics` quote them again.  Its string
argument `tone` is guarded by value (`L['tone'] == 'sepia-tone'`); the second call, with
another tone, recompiles ([0/1]).  `authorized` (backend eager) takes the token, then the
password, as its argument: guards `L['key'] == 'hf_…'` and `L['key'] == '<the password>'`,
a recompile between them ([1/1]).

The values are FAKE and fixed (set here unless the environment gives others), so the log
is the same on every capture: `HF_TOKEN` = hf_ + 34 random letters, `DB_PASSWORD` a phrase
no rule knows by its shape (only its environment guard says it is secret).
"""

import os

import torch

FAKE_HF_TOKEN = "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"
FAKE_DB_PASSWORD = "correct-horse-battery-staple-7"
os.environ.setdefault("HF_TOKEN", FAKE_HF_TOKEN)
os.environ.setdefault("DB_PASSWORD", FAKE_DB_PASSWORD)


@torch.compile(backend="inductor")
def scale(x, tone):
    token = os.environ["HF_TOKEN"]
    password = os.getenv("DB_PASSWORD") or ""
    factor = len(token) + len(password)
    if tone == "sepia-tone":
        return torch.sin(x) * factor
    return torch.cos(x) * factor


@torch.compile(backend="eager")
def authorized(x, key):
    return x + len(key)


x = torch.randn(8)
print(scale(x, "sepia-tone").sum().item())
print(scale(x, "cyanotype").sum().item())
print(authorized(x, os.environ["HF_TOKEN"]).sum().item())
print(authorized(x, os.environ["DB_PASSWORD"]).sum().item())
