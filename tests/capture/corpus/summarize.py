#!/usr/bin/env python3
"""Print the numbers of the tests/data/corpus README table, one markdown row per log.

Usage: summarize.py [CORPUS_DIR] [SCENARIO ...]

Per log (`*.log` or `*.log.gz`, searched recursively): size in bytes (uncompressed, and the
.gz size), records (lines carrying a JSON envelope: `<glog prefix>] {...}`), distinct compile
ids as tlparse names them (`[!ca/]frame/compile`, and with `_attempt` suffixes), the graph-break
registry ids (`gbNNNN`) the log links to, and tlparse's `Stats` line (tlparse on PATH; a .gz is
decompressed to a temp file first).
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.normpath(os.path.join(HERE, "..", "..", "data", "corpus"))
GB = re.compile(r"gb(\d{4})")


def read(path):
    if path.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            return f.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def stats(path):
    if not shutil.which("tlparse"):
        return "(no tlparse)"
    with tempfile.TemporaryDirectory() as tmp:
        src = path
        if path.endswith(".gz"):
            src = os.path.join(tmp, os.path.basename(path)[:-3])
            with gzip.open(path, "rb") as f, open(src, "wb") as g:
                shutil.copyfileobj(f, g)
        out = os.path.join(tmp, "out")
        p = subprocess.run(["tlparse", src, "-o", out, "--overwrite", "--no-browser"],
                           capture_output=True, text=True)
        m = re.findall(r"Stats \{.*\}", p.stdout + p.stderr)
        if p.returncode != 0:
            return f"tlparse exit {p.returncode}"
        return m[-1] if m else "(no Stats)"


def analyze(path):
    text = read(path)
    records = 0
    ids, attempts = set(), set()
    for line in text.split("\n"):
        if not line or line.startswith("\t"):
            continue
        i = line.find("] {")
        if i < 0:
            continue
        try:
            env = json.loads(line[i + 2:])
        except ValueError:
            continue
        records += 1
        if "frame_id" in env:
            ca = env.get("compiled_autograd_id")
            cid = ("!%s/" % ca if ca is not None else "") + "%s/%s" % (env["frame_id"], env.get("frame_compile_id"))
            ids.add(cid)
            att = env.get("attempt") or 0
            attempts.add(cid + ("_%d" % att if att else ""))
        elif "compiled_autograd_id" in env:
            ids.add("!%s/None/None" % env["compiled_autograd_id"])
            attempts.add("!%s/None/None" % env["compiled_autograd_id"])
    gbs = sorted(set("gb" + g for g in GB.findall(text)))
    fails = {}
    for m in re.finditer(r'"fail_type": "([^"]+)"', text):
        fails[m.group(1)] = fails.get(m.group(1), 0) + 1
    size = len(text.encode("utf-8"))
    gz = os.path.getsize(path) if path.endswith(".gz") else None
    return dict(size=size, gz=gz, records=records, ids=len(ids), attempts=len(attempts),
                gbs=gbs, loops=text.count("graph break in loop"), fails=fails, stats=stats(path))


# one-line "what the program does / what the log exercises" per scenario (details: docstrings)
DESC = {
    "encoder_transformer": "nn.TransformerEncoder classifier (2 layers), 2 training steps (fwd+bwd) + compiled AdamW step",
    "decoder_lm": "tiny GPT (own causal-mask attention + SDPA block, tied head): 1 training step, then greedy generate on a growing sequence (recompile with automatic dynamic length)",
    "convnet": "small ResNet (BatchNorm, residual blocks, strided 1x1 shortcut), 2 SGD steps, then eval forward",
    "unet": "2-level UNet (GroupNorm/SiLU, max-pool down, ConvTranspose up, skip torch.cat) inference under no_grad, 32x32 twice then 48x48 (dynamic recompile)",
    "rnn_loop": "LSTM+GRU tagger (refused by default: gb0014, eager), again with allow_rnn=True (traced); ModuleList loop with per-layer conditionals; hand-written RNN cell in a Python loop",
    "mark_dynamic": "mark_dynamic on the batch dim (4 batch sizes, 1 graph), mark_dynamic with min/max, maybe_mark_dynamic, a marked dim specialized by the code (ConstraintViolationError)",
    "automatic_dynamic": "dynamic=None functions called with changing shapes (static, then dim 0 / dim 1 dynamic), int argument becoming a SymInt, Conv1d length change, automatic_dynamic_shapes=False",
    "data_dependent": "item() as scale and size, nonzero, boolean mask, unique, repeat_interleave with capture_scalar_outputs / capture_dynamic_output_shape_ops on (unbacked u0..), then after reset with them off (graph breaks; duplicate compile ids)",
    "custom_ops": "torch.library.custom_op with register_fake + register_autograd in a training step, a mutating custom op (auto_functionalized), a custom op without a fake kernel (TorchRuntimeError, caught)",
    "higher_order_ops": "torch.cond (inference and training through cond), checkpoint(use_reentrant=False) in 2 training steps, while_loop, torch.func.vmap/grad inside compile",
    "fullgraph_failures": "fullgraph=True functions failing for 11 reasons (graph_break, print, data-dependent if, item flow, time/inspect, disable, deepcopy, generator / file return, nonzero, fake-tensor shape error), each caught; ok compiles first and last",
    "graph_break_kinds": "28 functions, one kind of graph break each (graph_break, print, open, str/repr, sorted key, data-dependent if, item, bool, nonzero, tolist, disable, inspect/time/random/zlib/pickle, deepcopy, logging, warnings, json, torch.save, exec, numpy), a generator and numpy math traced without a break, a break in a for loop (chained 'graph break in loop')",
    "chained_break_loop": "two functions with a plain graph_break() and a third breaking inside a for loop (chained message, frame skipped)",
    "recompile_limit": "recompile_limit=2 hit by dtypes/ranks and by int constants, then accumulated_recompile_limit=6 hit by closures (after reset: duplicate compile ids)",
    "cache/cold": "conv+MLP, 2 training steps + compiled Adam step + eval; first run: fx graph / AOT autograd cache misses",
    "cache/warm": "the same program again with the same TORCHINDUCTOR_CACHE_DIR: cache hits, no inductor passes",
    "compiled_autograd_transformer": "compiled_autograd=True, transformer block trained 2 steps, loss.backward() inside the compiled step (graph break; compiled autograd graphs !N/...)",
    "ddp_4ranks": "DDP on gloo, 4 ranks, compiled MLP, 1 MiB buckets (DDPOptimizer splits), 2 steps; one log per rank",
    "ddp_4ranks_divergent": "4 ranks, no DDP: rank 3 uses batch 6 (other graph), rank 2 breaks on print, rank 1's compiled function holds an extra all_reduce (functional collectives); explicit eager all_reduce of grads",
    "export_dynamic": "torch.export with Dim(min/max) + Dim.AUTO, .module() run with 2 batch sizes, strict export, a specializing model (UserError, caught)",
    "aoti_mlp": "export with a dynamic batch + aoti_compile_and_package (CPU C++) + aoti_load_package, run with 2 batch sizes",
    "many_functions": "40 small distinct compiled functions (activations, norms, losses, reductions, math, indexing), each called with 2 shapes (static then automatic-dynamic compile)",
    "optimizer_compile": "torch.compile(opt.step) for AdamW with 3 param groups (tensor lr) + OneCycleLR, then SGD Nesterov with a float lr + StepLR (recompiles on lr)",
    "backends": "same model with backend eager / aot_eager / inductor / inductor dynamic=True / mode=max-autotune-no-cudagraphs, train step + inference each (reset between: duplicate compile ids)",
    "func_transforms": "torch.func in compile: per-sample grads vmap(grad) over functional_call, jacrev/jacfwd, hessian, jvp",
    "set_stance": "set_stance force_eager / eager_on_recompile / fail_on_recompile (error caught), nested torch.compile, compiler.disable callee, config.patch decorator",
    "explain": "torch._dynamo.explain on a function with 3 breaks and on a module, then torch.compile of the same function",
    "inline_modules_off": "inline_inbuilt_nn_modules=False: CNN train + inference, one compiled function applied to two Linear instances, a module with a forward hook",
    "methods_closures": "compile of a bound method, a decorated method, a staticmethod, a __call__ object, closures from a factory, a lambda, a functools.partial, module.compile()",
    "failures_raised_suppressed": "the same failures RAISED (suppress_errors=False, caught) and SUPPRESSED (suppress_errors=True, eager fallback): failing custom backend, fake-tensor shape error, custom op without fake kernel, ValueError in user code, InternalTorchDynamoError; a failed compile compiled again ([N/0] failed, [N/1] ok); fullgraph=True breaks; stdout in program-output.txt",
    "two_runs_one_folder": "the same small program (compiled MLP train step + no_grad call + helper) run twice as two processes into one TORCH_TRACE folder, one shared inductor cache: two logs of one rank, the second with cache hits; stdout in program-output.txt",
    "many_lambdas": "153 small compiled frames: 141 lambdas on their own lines (+2 recompiled), two lambdas on one line, lambdas from a factory, named functions, two nested `inner`s, two `forward`s; mostly backend eager; stdout in program-output.txt",
    "scan_errors": "higher-order ops scan / cond / map / associative_scan that work, and buggy combine / branch functions caught (UncapturedHigherOrderOpError, TorchRuntimeError), compiled by the caller or by torch's own HOP wrapper (frames run_flattened_scan, _cond_op_wrapper, run_flattened_map); stdout in program-output.txt",
    "decode_recompile_limit": "recompile_limit=4: a decode loop (growing kv-cache, int position indexing a Python list) recompiling every step until the limit ([0/4], eager after); a function compiled under automatic_dynamic_shapes=False then True; stdout in program-output.txt",
    "torchrun_ranks": "torchrun --standalone --nproc-per-node 4 on gloo: FSDP2 fully_shard MLP (3 sharded Linear layers), torch.compile of the root, 2 SGD steps; graph breaks at each sharded layer; one log per rank; stdout in program-output.txt",
    "big_training": "(big) 7-block transformer LM, every block different; compiled model + loss + AdamW step + foreach grad clipping + EMA, seq lengths 16-40, eval, generate + compiled top-k sampling",
    "big_many_models": "(big) zoo of 20 distinct models (MLP, LeNet, VGG, ResNet bottleneck, MobileNet+SE, DenseNet, UNet piece, LSTM, GRU, transformer, ViT, autoencoder, VAE, GCN, MoE, WaveNet, ConvNeXt, DLRM, PixelShuffle, RealNVP) each trained 1 step and run in eval",
}


def main():
    args = sys.argv[1:]
    root = DEFAULT
    if args and os.path.isdir(args[0]):
        root, args = args[0], args[1:]
    wanted = set(args)
    groups = {}
    for dirpath, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not (name.endswith(".log") or name.endswith(".log.gz")):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            key = os.path.dirname(rel)
            if wanted and key.split(os.sep)[0] not in wanted:
                continue
            groups.setdefault(key, []).append((rel, analyze(os.path.join(dirpath, name))))
    total_plain = total_disk = 0
    print("| scenario | what the program does / what the log exercises | log file(s) | bytes (gz) | records | compile ids (attempts) | tlparse 0.4.3 Stats |")
    print("|---|---|---|---:|---:|---:|---|")
    for key in sorted(groups):
        rows = groups[key]
        notes = []
        gbs = sorted(set(g for _, a in rows for g in a["gbs"]))
        if gbs:
            notes.append("registry ids: " + ", ".join(gbs))
        fails = {}
        for _, a in rows:
            for k, v in a["fails"].items():
                fails[k] = fails.get(k, 0) + v
        if fails:
            notes.append("fail_type: " + ", ".join(f"{k} x{v}" for k, v in sorted(fails.items())))
        loops = sum(a["loops"] for _, a in rows)
        if loops:
            notes.append(f"'graph break in loop' x{loops}")
        # torch-<version>/<scenario>: the same scenario captured with another torch
        what = DESC.get(key, DESC.get(os.path.basename(key), "")) + ("" if not notes else ". " + "; ".join(notes))
        cells = []
        for rel, a in rows:
            total_plain += a["size"]
            total_disk += a["gz"] or a["size"]
            cells.append((f"`{os.path.basename(rel)}`", f"{a['size']:,}" + (f" ({a['gz']:,})" if a["gz"] else ""),
                          f"{a['records']:,}", f"{a['ids']} ({a['attempts']})", a["stats"]))
        cols = ["<br>".join(c[i] for c in cells) for i in range(5)]
        print(f"| `{key}` | {what} | " + " | ".join(cols) + " |")
    print(f"\ntotal: {total_plain:,} bytes uncompressed, {total_disk:,} bytes on disk", file=sys.stderr)


if __name__ == "__main__":
    main()
