#!/usr/bin/env python3
"""Generate a big (>= 30 MB) real TORCH_TRACE log for benchmarks.

Usage: python benchmarks/make_big_log.py OUT_DIR [--target-mb N] [--force]

Writes OUT_DIR/big.log (sanitized with tests/capture/sanitize.py: machine paths become
/home/user/..., payload md5s recomputed) and prints its size.  Does nothing if OUT_DIR/big.log
already exists and is >= 30 MB (unless --force).  Needs torch (CPU is enough, plus a C++
compiler for inductor); takes about 3-6 minutes on a 2-core machine.

The workload (run in a child process with TORCH_TRACE and a private inductor cache dir, all
with dynamic=False so every new shape recompiles, inductor provenance tracking on):

  A. inductor: a small GPT-like stack (embedding, 4 pre-LN attention+MLP blocks, head),
     training forward+backward on 3 shapes            -> 0/0..0/2 (joint/fwd/bwd graphs)
  B. inductor: the same compiled model under no_grad on 2 shapes (grad-mode recompiles)
  C. inductor: a forward that graph-breaks between blocks (print + graph_break) -> several
     frames and resume functions, training
  D. aot_eager: a deeper stack (8 blocks), training on a fixed list of shapes, until the raw
     log reaches the target size (cheap: no inductor lowering / C++ compile, but big graphs
     and guards)
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SANITIZE = os.path.join(ROOT, "tests", "capture", "sanitize.py")
MIN_BYTES = 30 * 1000 * 1000


# ----------------------------------------------------------------------------- workload


def workload(target_bytes):
    import torch
    import torch._inductor.config as inductor_config
    import torch.nn as nn
    import torch.nn.functional as F

    torch._dynamo.config.recompile_limit = 256
    torch._dynamo.config.accumulated_recompile_limit = 4096
    inductor_config.trace.provenance_tracking_level = 1
    torch.manual_seed(0)
    trace_dir = os.environ["TORCH_TRACE"]

    def trace_bytes():
        return sum(os.path.getsize(os.path.join(trace_dir, f)) for f in os.listdir(trace_dir))

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.h = h
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
            q, k, v = [t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v)]
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, C))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self, n_layers, d=64, h=4, vocab=256):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList([Block(d, h) for _ in range(n_layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            x = self.emb(idx)
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    class BreakyGPT(GPT):
        def forward(self, idx):
            x = self.emb(idx)
            for i, b in enumerate(self.blocks):
                x = b(x)
                if i == 1:
                    print("half way, mean", x.mean().item())  # .item() + print: graph break
                elif i == 2:
                    torch._dynamo.graph_break()
            return self.head(self.ln(x))

    def train_step(fn, idx):
        logits = fn(idx)
        loss = F.cross_entropy(logits.flatten(0, 1), idx.flatten())
        loss.backward()
        return float(loss.detach())

    def log(msg):
        print(f"[{time.time() - t0:6.1f}s {trace_bytes() / 1e6:6.1f} MB] {msg}", flush=True)

    t0 = time.time()
    # A. inductor training on several static shapes
    small = GPT(4)
    c_small = torch.compile(small, dynamic=False)
    for shape in [(2, 16), (2, 32), (4, 16)]:
        idx = torch.randint(0, 256, shape)
        log(f"A inductor train {shape}: loss {train_step(c_small, idx):.4f}")
    # B. inference (no_grad) -> grad-mode guard failure, recompiles
    with torch.no_grad():
        for shape in [(2, 16), (1, 24)]:
            out = c_small(torch.randint(0, 256, shape))
            log(f"B inductor no_grad {shape}: {tuple(out.shape)}")
    # C. graph breaks inside the forward
    breaky = BreakyGPT(4)
    c_breaky = torch.compile(breaky, dynamic=False)
    for shape in [(2, 16), (2, 8)]:
        idx = torch.randint(0, 256, shape)
        log(f"C inductor graph breaks {shape}: loss {train_step(c_breaky, idx):.4f}")
    # D. aot_eager, deeper model, many shapes until the target size is reached
    deep = GPT(8)
    c_deep = torch.compile(deep, dynamic=False, backend="aot_eager")
    shapes = [(b, t) for t in (16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96) for b in (1, 2, 3)]
    for shape in shapes:
        if trace_bytes() >= target_bytes:
            break
        idx = torch.randint(0, 256, shape)
        log(f"D aot_eager train {shape}: loss {train_step(c_deep, idx):.4f}")
    log("done")


# ----------------------------------------------------------------------------- driver


def load_sanitize():
    spec = importlib.util.spec_from_file_location("capture_sanitize", SANITIZE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out_dir")
    ap.add_argument(
        "--target-mb",
        type=float,
        default=36.0,
        help="stop adding compiles once the raw log has this many MB (default 36)",
    )
    ap.add_argument("--force", action="store_true", help="regenerate even if big.log exists")
    ap.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()

    if a.workload:  # child process, cwd = work dir, TORCH_TRACE set
        workload(int(a.target_mb * 1e6))
        return 0

    out = os.path.join(os.path.abspath(a.out_dir), "big.log")
    if not a.force and os.path.exists(out) and os.path.getsize(out) >= MIN_BYTES:
        print(f"{out}: {os.path.getsize(out):,} bytes (exists, skipped)")
        return 0
    os.makedirs(os.path.dirname(out), exist_ok=True)

    work = os.path.realpath(tempfile.mkdtemp(prefix="big_log_"))
    cache = os.path.realpath(tempfile.mkdtemp(prefix="inductor_cache_"))  # fresh, private
    try:
        env = dict(os.environ)
        for k in ("TORCH_DTRACE", "TORCH_COMPILE_DEBUG", "TORCH_LOGS"):
            env.pop(k, None)
        env.update(
            TORCH_TRACE=os.path.join(work, "trace"),
            TORCHINDUCTOR_CACHE_DIR=cache,
            INDUCTOR_PROVENANCE="1",
            PYTHONHASHSEED="0",
        )
        script = os.path.join(work, "make_big_log.py")
        shutil.copy(os.path.abspath(__file__), script)
        t = time.time()
        subprocess.run(
            [sys.executable, script, a.out_dir, "--workload", "--target-mb", str(a.target_mb)],
            cwd=work,
            env=env,
            check=True,
        )
        logs = sorted(os.listdir(os.path.join(work, "trace")))
        if len(logs) != 1:
            raise SystemExit(f"expected one trace file, got {logs}")
        san = load_sanitize()
        user = os.environ.get("USER") or __import__("getpass").getuser()
        rules = san.build_rules(sys.prefix.rstrip("/"), work, sys.base_prefix.rstrip("/"), user)
        tmp_out = out + ".tmp"
        san.sanitize(os.path.join(work, "trace", logs[0]), tmp_out, rules)
        os.replace(tmp_out, out)
        size = os.path.getsize(out)
        print(f"{out}: {size:,} bytes ({size / 1e6:.1f} MB), generated in {time.time() - t:.0f} s")
        if size < MIN_BYTES:
            print("warning: smaller than 30 MB; raise --target-mb", file=sys.stderr)
            return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
