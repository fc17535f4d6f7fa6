#!/usr/bin/env python3
"""Generate a big (>= 30 MB) real TORCH_TRACE log for benchmarks.

Usage: python benchmarks/make_big_log.py OUT_DIR [--target-mb N] [--force] [--corpus]

Writes OUT_DIR/big.log (sanitized with tests/capture/sanitize.py: machine paths become
/home/user/..., payload md5s recomputed) and prints its size.  Does nothing if OUT_DIR/big.log
already exists and is at least the target (unless --force).  Needs torch (CPU is enough, plus
a C++ compiler for inductor); takes about 3-6 minutes on a 2-core machine.

The workload's shapes run out near 47 MB; past that, and with ``--corpus`` (no torch: the
corpus's three big real logs, 76 MB together), the log is grown to the target from real
records (:func:`grow`): the sources are replayed one after the other, round after round, as
one process that goes on compiling, each replay a program of its own:

- frame ids, ``frame_key``, ``compile_id`` strings ("3/0", "3/0: reason", in envelopes and
  payloads) and fake-tensor describer ids are shifted past every earlier replay's, so each
  replay's frames are new frames, not recompiles of earlier ones;
- the program's own files (string-table paths outside site-packages and /usr) are renamed
  per replay (``model.py`` -> ``model_v3.py``) in the string table, envelopes and payload
  text, so graphs, guards and output code differ in text as well as ids, and a cache or a
  deduplication keyed by content finds nothing to share: cost grows with the log;
- glog times, chromium ``ts``, ``start_time``/``*_time_us`` move on by the source's span, and
  the pid is the first source's; the torch_version record is written once; payload md5s are
  recomputed.

So a 300 MB log is about a dozen real programs' compiles (inductor training and inference,
graph breaks, recompiles, a zoo of 20 models, 40 small functions) in one process.

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
import datetime
import gzip
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SANITIZE = os.path.join(ROOT, "tests", "capture", "sanitize.py")
MIN_BYTES = 30 * 1000 * 1000
#: The corpus's big real logs (23-27 MB each): ``--corpus`` grows from them.
CORPUS = [
    os.path.join(ROOT, "tests", "data", "corpus", name)
    for name in ("big_training", "big_many_models", "many_functions")
]


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


# ----------------------------------------------------------------------------- growing

GLOG = re.compile(r"^([VIWEF])(\d{4} \d\d:\d\d:\d\d\.\d{6}) +(\d+) ")
HASH = re.compile(r'"has_payload": "[0-9a-f]{32}"')
FRAME = re.compile(r'"(frame_id|describer_id)": (\d+)')
FRAME_KEY = re.compile(r'"frame_key": "(\d+)"')
FILENAME = re.compile(r'"filename": (\d+)')
#: A compile id as torch writes it: "3/0" or "3/0_1" after a quote, tab or "[", before a
#: quote, colon, "]" or "_" ("compile_id": "3/0"; a recompile reason "3/0: ...").
COMPILE_ID = re.compile(r'(?<=["\t\[])(\d+)/(\d+)(?=["_:\]])')
TIME_US = re.compile(r'"(ts|start_time_us|end_time_us)": (\d+)')
TIME_S = re.compile(r'"start_time": (\d+\.\d+)')
YEAR = 2025  # glog writes no year; any fixed one keeps the arithmetic right


def _records(path):
    """(head line, payload lines) of a log, plain or gzipped, newlines stripped."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        head, payload = None, []
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("\t"):
                payload.append(line)
                continue
            if head is not None:
                yield head, payload
            head, payload = line, []
        if head is not None:
            yield head, payload


def _glog_time(head):
    m = GLOG.match(head)
    return datetime.datetime.strptime(f"{YEAR}{m.group(2)}", "%Y%m%d %H:%M:%S.%f") if m else None


def _survey(path):
    """What replaying a source needs: its largest frame and describer ids, its span."""
    frames = describers = -1
    first = last = None
    pid = None
    for head, _ in _records(path):
        for key, n in FRAME.findall(head):
            if key == "frame_id":
                frames = max(frames, int(n))
            else:
                describers = max(describers, int(n))
        t = _glog_time(head)
        if t is not None:
            first = first or t
            last = t
            pid = pid or GLOG.match(head).group(3)
    return {
        "frames": frames + 1,
        "describers": describers + 1,
        "first": first,
        "last": last,
        "pid": pid,
    }


def _user_path(path):
    return path.endswith(".py") and "-packages/" not in path and not path.startswith("/usr/")


class Grower:
    """Writes replays of real logs into one log (see the module's docstring)."""

    def __init__(self, out):
        self.out = out
        self.strings = {}  # string -> id, over the whole log
        self.frames = 0  # frame ids used so far
        self.describers = 0
        self.clock = None  # glog time of the last record written
        self.pid = None
        self.replays = 0
        self.version_written = False

    def replay(self, path, survey, target):
        """Append one replay of PATH; stop before a compile starts once the log holds
        TARGET bytes (True then)."""
        k = self.replays
        self.replays += 1
        frames, describers = self.frames, self.describers
        shift = (
            (self.clock + datetime.timedelta(seconds=1) - survey["first"])
            if self.clock
            else (datetime.timedelta(0))
        )
        shift_us = round(shift.total_seconds() * 1e6)
        self.pid = self.pid or survey["pid"]
        renames = []  # (old path, new path) of the program's own files, this replay
        ids = {}  # this source's string id -> the log's

        def ids_text(text):
            text = FRAME.sub(
                lambda m: f'"{m[1]}": {int(m[2]) + (frames if m[1] == "frame_id" else describers)}',
                text,
            )
            text = FRAME_KEY.sub(lambda m: f'"frame_key": "{int(m[1]) + frames}"', text)
            text = COMPILE_ID.sub(lambda m: f"{int(m[1]) + frames}/{m[2]}", text)
            text = TIME_US.sub(lambda m: f'"{m[1]}": {int(m[2]) + shift_us}', text)
            text = TIME_S.sub(lambda m: f'"start_time": {float(m[1]) + shift_us / 1e6:.6f}', text)
            for old, new in renames:
                text = text.replace(old, new)
            return text

        for head, payload in _records(path):
            m = GLOG.match(head)
            if m is None:
                continue
            brace = head.find("{", m.end())
            envelope = head[brace:]
            if envelope.startswith('{"str": '):
                name, old_id = json.loads(envelope)["str"]
                if k and _user_path(name):
                    new = re.sub(r"\.py$", f"_v{k}.py", name)
                    renames.append((name, new))
                    name = new
                if name in self.strings:
                    ids[old_id] = self.strings[name]
                    continue  # torch logs each string once per process
                ids[old_id] = self.strings[name] = len(self.strings)
                envelope = '{"str": ' + json.dumps([name, ids[old_id]]) + "}"
            elif envelope.startswith('{"dynamo_start"') and self.out.tell() >= target:
                return True
            elif '"torch_version"' in envelope and '"frame_id"' not in envelope:
                if self.version_written:
                    continue
                self.version_written = True
            else:
                envelope = FILENAME.sub(
                    lambda m: f'"filename": {ids.get(int(m[1]), m[1])}', envelope
                )
                envelope = ids_text(envelope)
            when = _glog_time(head) + shift
            self.clock = when
            prefix = f"{m[1]}{when.strftime('%m%d %H:%M:%S.%f')} {self.pid} "
            middle = head[m.end() : brace]
            payload = [ids_text(line) for line in payload] if k else payload
            if payload and HASH.search(envelope):
                digest = hashlib.md5("\n".join(p[1:] for p in payload).encode("utf-8"))
                envelope = HASH.sub(f'"has_payload": "{digest.hexdigest()}"', envelope, count=1)
            self.out.write(prefix + middle + envelope + "\n")
            for line in payload:
                self.out.write(line + "\n")
        self.frames += survey["frames"]
        self.describers += survey["describers"]
        return False


def corpus_logs():
    logs = []
    for folder in CORPUS:
        logs += sorted(os.path.join(folder, f) for f in os.listdir(folder) if ".log" in f)
    return logs


def grow(sources, out, target_bytes):
    """Write OUT from replays of SOURCES, round after round, until it holds TARGET_BYTES."""
    surveys = {path: _survey(path) for path in sources}
    with open(out, "w", encoding="utf-8") as f:
        grower = Grower(f)
        while True:
            for path in sources:
                done = grower.replay(path, surveys[path], target_bytes)
                print(
                    f"  replay {grower.replays}: {os.path.basename(path)}, {f.tell() / 1e6:.1f} MB",
                    flush=True,
                )
                if done or f.tell() >= target_bytes:
                    return grower.replays


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
    ap.add_argument(
        "--corpus",
        action="store_true",
        help="no torch: grow the log from the corpus's big real logs (see above)",
    )
    ap.add_argument("--workload", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    target = int(a.target_mb * 1e6)

    if a.workload:  # child process, cwd = work dir, TORCH_TRACE set
        workload(int(a.target_mb * 1e6))
        return 0

    out = os.path.join(os.path.abspath(a.out_dir), "big.log")
    if not a.force and os.path.exists(out) and os.path.getsize(out) >= min(MIN_BYTES, target):
        print(f"{out}: {os.path.getsize(out):,} bytes (exists, skipped)")
        return 0
    os.makedirs(os.path.dirname(out), exist_ok=True)
    if a.corpus:
        t = time.time()
        replays = grow(corpus_logs(), out + ".tmp", target)
        os.replace(out + ".tmp", out)
        size = os.path.getsize(out)
        print(
            f"{out}: {size:,} bytes ({size / 1e6:.1f} MB), {replays} replays of "
            f"{len(CORPUS)} corpus logs, in {time.time() - t:.0f} s"
        )
        return 0

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
        if os.path.getsize(tmp_out) < target:  # the shapes ran out: replay what was logged
            grow([tmp_out], out + ".grown", target)
            os.replace(out + ".grown", tmp_out)
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
