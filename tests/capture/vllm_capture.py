#!/usr/bin/env python3
"""Capture a real TORCH_TRACE log of vLLM's own compile pipeline (VLLM_COMPILE:
Dynamo full-graph capture -> piecewise split at attention -> Inductor per compile
range / compile size) on a CPU-only machine, with a tiny random-weight Llama model.

Usage (run from the folder that should hold the model dir and the trace):
    TORCH_TRACE=$PWD/trace python vllm_capture.py --variant reuse
Run it again in the same folder (same ./vllm_cache, another TORCH_TRACE folder) for a
warm start.  Variants (``VARIANTS``): ``dev`` is the shared log's; ``reuse`` is a 4-layer
Qwen2 whose middle layers vLLM reuses in-process; ``two_calls`` builds two LLM objects
one after the other in one process (a Mistral, then a 3-layer Llama with other compile
ranges): two vllm_compilation_config records in one log.  With VLLM_USE_AOT_COMPILE=0 in
the environment vLLM's records carry compile ids and a warm start logs its compile starts
again, each followed by a load from vLLM's own cache (tests/data/captured/vllm_no_aot).

Notes
* No model hub: the model is a local folder holding only config.json; weights are
  random (load_format="dummy"); no tokenizer (skip_tokenizer_init=True, prompts are
  token ids).
* vLLM's CPU platform (vllm/platforms/cpu.py, check_and_update_config) rewrites
  mode=VLLM_COMPILE to DYNAMO_TRACE_ONCE (plain torch.compile with Inductor, no
  vLLM backend, so no vllm_* records).  To exercise the real vLLM pipeline we wrap
  that hook and put mode=VLLM_COMPILE / backend="inductor" back after it ran; all
  later config steps (splitting ops, compile ranges) then run as on GPU.
  A second patch skips FixFunctionalizationPass (see below).
  Pass --no-patch to see what the stock CPU path logs.
* The engine core runs in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0) so the
  TORCH_TRACE log of the compiling process is this process's log.
"""
import argparse
import json
import os
import pathlib
import sys

VARIANTS = {
    # developer capture: Llama, 2 layers, two compile ranges + one compile size
    "dev": dict(
        config=dict(
            architectures=["LlamaForCausalLM"], model_type="llama",
            hidden_size=128, intermediate_size=256, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, head_dim=32,
            vocab_size=1024, max_position_embeddings=512, rms_norm_eps=1e-5,
            rope_theta=10000.0, hidden_act="silu", tie_word_embeddings=False,
            bos_token_id=1, eos_token_id=2, torch_dtype="float32",
        ),
        compilation_config=dict(compile_ranges_endpoints=[16], compile_sizes=[4]),
        max_num_batched_tokens=128,
        prompts=[[1, 17, 33, 42, 7], [1, 99, 100, 101, 102, 103, 104, 105, 106], [1, 5]],
        max_tokens=4,
    ),
    # 4 decoder layers: the split graph's middle pieces (layer k's end + layer k+1's
    # start) are isomorphic, so vLLM compiles submod_2 and reuses it for submod_4 and
    # submod_6 (same AOTAutograd key) without compiling: compile starts with no compile.
    "reuse": dict(
        config=dict(
            architectures=["Qwen2ForCausalLM"], model_type="qwen2",
            hidden_size=192, intermediate_size=384, num_hidden_layers=4,
            num_attention_heads=6, num_key_value_heads=2,
            vocab_size=512, max_position_embeddings=256, rms_norm_eps=1e-6,
            rope_theta=1000000.0, hidden_act="silu", tie_word_embeddings=True,
            use_sliding_window=False, bos_token_id=1, eos_token_id=2,
            torch_dtype="float32",
        ),
        compilation_config=dict(compile_ranges_endpoints=[8], compile_sizes=[2]),
        max_num_batched_tokens=64,
        prompts=[[1, 5, 9], [1, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49]],
        max_tokens=3,
    ),
    # two compile calls in one process: two LLM objects, built one after the other
    "two_calls": dict(
        runs=[
            dict(
                config=dict(
                    architectures=["MistralForCausalLM"], model_type="mistral",
                    hidden_size=128, intermediate_size=320, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=4, head_dim=32,
                    vocab_size=768, max_position_embeddings=256, rms_norm_eps=1e-5,
                    rope_theta=10000.0, hidden_act="silu", tie_word_embeddings=False,
                    sliding_window=None, bos_token_id=1, eos_token_id=2,
                    torch_dtype="float32",
                ),
                compilation_config=dict(compile_ranges_endpoints=[], compile_sizes=[]),
                max_num_batched_tokens=32,
                prompts=[[1, 3, 5, 7]],
                max_tokens=2,
                model_dir="tiny_mistral",
            ),
            dict(
                config=dict(
                    architectures=["LlamaForCausalLM"], model_type="llama",
                    hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                    num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                    vocab_size=640, max_position_embeddings=256, rms_norm_eps=1e-5,
                    rope_theta=10000.0, hidden_act="silu", tie_word_embeddings=False,
                    bos_token_id=1, eos_token_id=2, torch_dtype="float32",
                ),
                compilation_config=dict(compile_ranges_endpoints=[8], compile_sizes=[]),
                max_num_batched_tokens=48,
                prompts=[[1, 2, 3], [1, 9, 8, 7, 6, 5, 4, 3, 2, 11]],
                max_tokens=2,
                model_dir="tiny_llama3",
            ),
        ],
    ),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", default="dev", choices=sorted(VARIANTS))
    ap.add_argument("--no-patch", action="store_true",
                    help="keep vLLM's CPU override (mode -> DYNAMO_TRACE_ONCE)")
    ap.add_argument("--model-dir", default="tiny_model")
    a = ap.parse_args()
    v = VARIANTS[a.variant]

    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", "nobind")
    # fresh vLLM compile cache (cold compile), inside the working folder
    os.environ.setdefault("VLLM_CACHE_ROOT", os.path.abspath("vllm_cache"))

    from vllm import LLM, SamplingParams
    from vllm.config import CompilationConfig, CompilationMode

    if not a.no_patch:
        from vllm.platforms.cpu import CpuPlatform
        orig = CpuPlatform.check_and_update_config.__func__

        def check_and_update_config(cls, vllm_config):
            cc = vllm_config.compilation_config
            wanted = cc.mode
            orig(cls, vllm_config)
            if wanted == CompilationMode.VLLM_COMPILE and cc.mode != wanted:
                print(f"[capture] CPU platform set mode={cc.mode!s} "
                      f"backend={cc.backend!r}; restoring VLLM_COMPILE/inductor",
                      file=sys.stderr)
                cc.mode = CompilationMode.VLLM_COMPILE
                cc.backend = "inductor"

        CpuPlatform.check_and_update_config = classmethod(check_and_update_config)

        # vLLM's FixFunctionalizationPass (always the last vLLM post-grad pass) walks
        # auto_functionalized nodes and compares their target with CUDA-only ops such
        # as torch.ops._C.fused_add_rms_norm_static_fp8_quant, which the CPU build
        # does not register -> AttributeError on the first auto_functionalized
        # torch.ops._C.onednn_mm (CPU linear).  Skip it on CPU as vLLM already does on
        # XPU; Inductor's own decompose_auto_functionalized handles those nodes.
        from vllm.compilation.passes.utility import fix_functionalization as ff

        def fix_functionalization_skipped(self, graph):
            return None

        ff.FixFunctionalizationPass.__call__ = fix_functionalization_skipped

    runs = v.get("runs") or [dict(v, model_dir=a.model_dir)]
    for run in runs:
        generate(run, LLM, SamplingParams, CompilationConfig, CompilationMode)


def generate(run, LLM, SamplingParams, CompilationConfig, CompilationMode):
    """Build one LLM (one vLLM compile call) and generate with it."""
    import gc

    model_dir = pathlib.Path(run["model_dir"])
    model_dir.mkdir(exist_ok=True)
    (model_dir / "config.json").write_text(json.dumps(run["config"], indent=2))
    llm = LLM(
        model=str(model_dir),
        load_format="dummy",
        skip_tokenizer_init=True,
        dtype="float32",
        max_model_len=256,
        max_num_seqs=4,
        max_num_batched_tokens=run["max_num_batched_tokens"],
        seed=0,
        compilation_config=CompilationConfig(
            mode=CompilationMode.VLLM_COMPILE, **run["compilation_config"]),
    )
    sp = SamplingParams(max_tokens=run["max_tokens"], temperature=0.0, detokenize=False,
                        ignore_eos=True)
    outs = llm.generate([{"prompt_token_ids": p} for p in run["prompts"]], sp)
    for o in outs:
        print("prompt", o.prompt_token_ids, "->", o.outputs[0].token_ids, flush=True)
    del llm, outs
    gc.collect()

if __name__ == "__main__":
    main()
