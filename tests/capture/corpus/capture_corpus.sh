#!/usr/bin/env bash
# Regenerate the corpus of real TORCH_TRACE logs under tests/data/corpus/<scenario>/.
#
#   tests/capture/corpus/capture_corpus.sh                      # every scenario, one at a time
#   tests/capture/corpus/capture_corpus.sh decoder_lm unet      # some
#   PYTHON=/path/to/python tests/capture/corpus/capture_corpus.sh ...
#   EXTRA_SITE=/dir/with/numpy tests/capture/corpus/capture_corpus.sh graph_break_kinds
#
# Each scenario `<s>` is `tests/capture/corpus/<s>.py`, copied into a fresh temp dir that is
# both the working dir and the "project" dir, and run there with TORCH_TRACE=$work/trace and a
# fresh TORCHINDUCTOR_CACHE_DIR (a new /tmp/torchinductor_<user>.XXXXXX dir, removed after).
# `cache` is special: cache.py runs twice in the same dir sharing one cache dir, cold then
# warm, giving tests/data/corpus/cache/{cold,warm}/.
# The logs are sanitized with ../sanitize.py (machine paths -> /home/user/..., payload md5s
# recomputed) into tests/data/corpus/<s>/ (old logs there removed first), then checked: the
# leftover machine-path grep must count 0, and `tlparse` (when on PATH) prints its Stats.  A log
# over 2 MiB (2,097,152 bytes) is stored as `<name>.log.gz` (gzip -9 -n) instead of the plain copy.
#
# Scenarios with an event list (PROGRAM_OUTPUT_SCENARIOS: they print one `EVENT ...` line per
# raised / suppressed / recompiled call) keep stdout apart from stderr: stdout is sanitized like
# the logs into tests/data/corpus/<s>/program-output.txt (the ground truth for the log).
# `two_runs_one_folder` runs its program twice, two processes writing into the same TORCH_TRACE
# folder and sharing one cache dir (one folder, two logs of one rank; program-output.txt holds
# both runs' stdout, each after a `== run N` line).  `torchrun_ranks` is launched with
# `python -m torch.distributed.run --standalone --nproc-per-node 4` (one log per rank).
# DEST_SUBDIR=NAME (optional): store under tests/data/corpus/NAME/<s>/ instead (captures made
# with another torch, e.g. DEST_SUBDIR=torch-2.15.0).
# KEEP_STDOUT=DIR (optional): copy each program's output to DIR/<scenario>-stdout*.txt.
# EXTRA_SITE (optional): a directory put on PYTHONPATH for graph_break_kinds only (made with
# `pip install --target DIR numpy` when the interpreter has no numpy: graph_break_kinds then
# also breaks on numpy calls); its path is rewritten to the interpreter's site-packages before
# sanitizing, as if numpy were installed there.  The stored corpus was made that way.
# Then `python summarize.py` prints the README table of tests/data/corpus.
#
# Needs torch (CPU is enough) and a C++ compiler for inductor; 2 cores take ~1 h for all.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
SANITIZE="$HERE/../sanitize.py"
PYTHON="${PYTHON:-python3}"
DEST_ROOT="$ROOT/tests/data/corpus${DEST_SUBDIR:+/$DEST_SUBDIR}"
GZIP_OVER=$((2 * 1024 * 1024))  # 2 MiB: keeps the corpus near 40 MB on disk
ALL=(
  encoder_transformer decoder_lm convnet unet rnn_loop
  mark_dynamic automatic_dynamic data_dependent custom_ops higher_order_ops
  fullgraph_failures graph_break_kinds chained_break_loop recompile_limit cache
  compiled_autograd_transformer ddp_4ranks ddp_4ranks_divergent export_dynamic aoti_mlp
  many_functions optimizer_compile backends func_transforms set_stance explain
  inline_modules_off methods_closures
  failures_raised_suppressed two_runs_one_folder many_lambdas scan_errors
  decode_recompile_limit torchrun_ranks
  big_training big_many_models
)
if [ $# -gt 0 ]; then SCENARIOS=("$@"); else SCENARIOS=("${ALL[@]}"); fi
# scenarios that get EXTRA_SITE on PYTHONPATH (numpy: the torch 2.13 CPU wheel does not need it)
EXTRA_SITE_SCENARIOS=(graph_break_kinds)
# scenarios whose stdout (EVENT lines) is stored as program-output.txt (stderr kept apart)
PROGRAM_OUTPUT_SCENARIOS=(failures_raised_suppressed two_runs_one_folder many_lambdas scan_errors
  decode_recompile_limit torchrun_ranks)

VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
SITE="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
USER_NAME="$(id -un)"
TMP="${TMPDIR:-/tmp}"

# run <scenario> <work dir> <trace dir> <cache dir> <stdout file>
run() {
  local s="$1" work="$2" trace="$3" cache="$4" out="$5" pp=""
  pp="${PYTHONPATH:-}"
  case " ${EXTRA_SITE_SCENARIOS[*]} " in
    *" $s "*) [ -z "${EXTRA_SITE:-}" ] || pp="$EXTRA_SITE${PYTHONPATH:+:$PYTHONPATH}" ;;
  esac
  local start=$(date +%s) err="$out" launch=()
  if has_program_output "$s"; then err="${out%.txt}-stderr.txt"; fi
  if [ "$s" = torchrun_ranks ]; then
    launch=(-m torch.distributed.run --standalone --nproc-per-node 4)
  fi
  ( cd "$work" && env ${pp:+PYTHONPATH="$pp"} TORCHINDUCTOR_CACHE_DIR="$cache" TORCH_TRACE="$trace" \
      "$PYTHON" ${launch[@]+"${launch[@]}"} "$s.py" >"$out" 2>"$err" ) \
    || { echo "scenario $s failed, see $out $err" >&2; tail -20 "$err" >&2; exit 1; }
  echo "   ran in $(( $(date +%s) - start )) s"
  if [ -n "${KEEP_STDOUT:-}" ]; then
    mkdir -p "$KEEP_STDOUT"; cp "$out" "$KEEP_STDOUT/$s-$(basename "$out")"
    [ "$err" = "$out" ] || cp "$err" "$KEEP_STDOUT/$s-$(basename "$err")"
  fi
}

has_program_output() {
  case " ${PROGRAM_OUTPUT_SCENARIOS[*]} " in *" $1 "*) return 0 ;; esac
  return 1
}

# store_output <stdout file> <dest dir> <project dir>: program-output.txt, sanitized + checked
store_output() {
  local out="$1" dest="$2" work="$3" left
  mkdir -p "$dest"
  "$PYTHON" "$SANITIZE" "$out" "$dest/program-output.txt" \
    --venv "$VENV" --project "$work" --python-prefix "$BASE" --user "$USER_NAME" >/dev/null
  left=$(grep -c -E "$HOME/|\.pyenv|$ROOT/|torchinductor_${USER_NAME}\b|/tmp/tmp|$work" "$dest/program-output.txt" || true)
  echo "   program-output.txt: $(grep -c '^EVENT ' "$dest/program-output.txt" || true) EVENT lines, $left lines with machine paths left"
  [ "$left" = 0 ] || echo "   WARNING: machine paths left in $dest/program-output.txt" >&2
}

# store <trace dir> <dest dir> <project dir>: sanitize, check, gzip the big ones
store() {
  local trace="$1" dest="$2" work="$3" log name tmp left plain
  mkdir -p "$dest"
  rm -f "$dest"/*.log "$dest"/*.log.gz
  for log in "$trace"/*.log; do
    name="$(basename "$log")"
    if [ -n "${EXTRA_SITE:-}" ]; then
      tmp="$log.pre"
      EXTRA_SITE="$EXTRA_SITE" SITE="$SITE" "$PYTHON" - "$log" "$tmp" <<'EOF'
import os, sys
src, dst = sys.argv[1:3]
text = open(src, encoding="utf-8").read()
open(dst, "w", encoding="utf-8").write(text.replace(os.environ["EXTRA_SITE"].rstrip("/"), os.environ["SITE"]))
EOF
      log="$tmp"
    fi
    "$PYTHON" "$SANITIZE" "$log" "$dest/$name" \
      --venv "$VENV" --project "$work" --python-prefix "$BASE" --user "$USER_NAME" >/dev/null
  done
  for plain in "$dest"/*.log; do
    left=$(grep -c -E "$HOME/|\.pyenv|$ROOT/|torchinductor_${USER_NAME}\b|/tmp/tmp|$work" "$plain" || true)
    echo "   $(basename "$plain"): $(stat -c %s "$plain") bytes, $left lines with machine paths left"
    [ "$left" = 0 ] || echo "   WARNING: machine paths left in $plain" >&2
    if command -v tlparse >/dev/null; then
      tmp="$(mktemp -d)"
      echo "   $(tlparse "$plain" -o "$tmp" --overwrite --no-browser 2>&1 | grep -o 'Stats {.*}' | tail -1)"
      rm -rf "$tmp"
    fi
    if [ "$(stat -c %s "$plain")" -gt "$GZIP_OVER" ]; then
      gzip -9 -n -f "$plain"
      echo "   gzipped: $(stat -c %s "$plain.gz") bytes"
    fi
  done
}

total_start=$(date +%s)
for s in "${SCENARIOS[@]}"; do
  script="$HERE/$s.py"
  [ -f "$script" ] || { echo "no such scenario: $script" >&2; exit 2; }
  work="$(mktemp -d)"
  work="$(cd "$work" && pwd -P)"
  cp "$script" "$work/"
  cache="$(mktemp -d "$TMP/torchinductor_${USER_NAME}.XXXXXX")"
  if [ "$s" = cache ]; then
    # same program, same dir, one shared inductor cache: cold then warm
    for phase in cold warm; do
      echo "== $s/$phase (in $work, cache $cache)"
      run "$s" "$work" "$work/trace-$phase" "$cache" "$work/stdout-$phase.txt"
      store "$work/trace-$phase" "$DEST_ROOT/$s/$phase" "$work"
    done
  elif [ "$s" = two_runs_one_folder ]; then
    # same program twice, two processes, one TORCH_TRACE folder, one shared cache dir
    : >"$work/stdout.txt"
    for n in 1 2; do
      echo "== $s/run $n (in $work, cache $cache)"
      run "$s" "$work" "$work/trace" "$cache" "$work/stdout-run$n.txt"
      { echo "== run $n"; cat "$work/stdout-run$n.txt"; } >>"$work/stdout.txt"
    done
    store "$work/trace" "$DEST_ROOT/$s" "$work"
    store_output "$work/stdout.txt" "$DEST_ROOT/$s" "$work"
  else
    echo "== $s (in $work, cache $cache)"
    run "$s" "$work" "$work/trace" "$cache" "$work/stdout.txt"
    store "$work/trace" "$DEST_ROOT/$s" "$work"
    if has_program_output "$s"; then store_output "$work/stdout.txt" "$DEST_ROOT/$s" "$work"; fi
  fi
  rm -rf "$work" "$cache"
done
echo "all done in $(( $(date +%s) - total_start )) s"
