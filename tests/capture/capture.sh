#!/usr/bin/env bash
# Regenerate the real TORCH_TRACE logs under tests/data/captured/<scenario>/.
#
#   tests/capture/capture.sh                 # all scenarios below
#   tests/capture/capture.sh aoti draft_export
#   PYTHON=/path/to/python tests/capture/capture.sh ...
#
# Each scenario runs in a fresh temp dir with a fresh inductor cache; its logs are sanitized
# (sanitize.py: machine paths -> /home/user/..., payload md5s recomputed) into
# tests/data/captured/<scenario>/ after removing the old *.log there.  Needs torch (CPU is
# enough, plus a C++ compiler for inductor); tlparse is used for a check when on PATH.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
DEST_ROOT="$ROOT/tests/data/captured"
ALL=(compiled_autograd draft_export multi_rank_gloo aoti single_op_provenance ddp_graph_break optimizer_graph_break ranks_collective_order env_secrets frozen_constants)
if [ $# -gt 0 ]; then SCENARIOS=("$@"); else SCENARIOS=("${ALL[@]}"); fi

VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"
CACHE_DIR="${TMPDIR:-/tmp}/torchinductor_${USER_NAME}"

# environment per scenario (on top of the trace dir variable)
scenario_env() {
  case "$1" in
    draft_export) echo "TORCH_DTRACE" ;;   # dtrace: two files, see draft_export.py
    aoti) echo "TORCH_TRACE INDUCTOR_PROVENANCE=1" ;;
    single_op_provenance|provenance)
      echo "TORCH_TRACE INDUCTOR_PROVENANCE=1 TORCH_LOGS=+inductor TORCH_COMPILE_DEBUG=1" ;;
    ranks_collective_order) echo "TORCH_TRACE TORCHINDUCTOR_FORCE_DISABLE_CACHES=1" ;;
    *) echo "TORCH_TRACE" ;;
  esac
}

for s in "${SCENARIOS[@]}"; do
  script="$HERE/$s.py"
  [ -f "$script" ] || { echo "no such scenario: $script" >&2; exit 2; }
  work="$(mktemp -d)"
  work="$(cd "$work" && pwd -P)"
  cp "$script" "$work/"
  read -r tracevar extra <<<"$(scenario_env "$s")"
  echo "== $s (in $work)"
  rm -rf "$CACHE_DIR"
  start=$(date +%s)
  ( cd "$work" && env $extra "$tracevar=$work/trace" "$PYTHON" "$s.py" >"$work/stdout.txt" 2>&1 ) \
    || { echo "scenario $s failed, see $work/stdout.txt" >&2; tail -20 "$work/stdout.txt" >&2; exit 1; }
  echo "   ran in $(( $(date +%s) - start )) s"
  dest="$DEST_ROOT/$s"
  mkdir -p "$dest"
  rm -f "$dest"/*.log
  for log in "$work"/trace/*.log; do
    "$PYTHON" "$HERE/sanitize.py" "$log" "$dest/$(basename "$log")" \
      --venv "$VENV" --project "$work" --python-prefix "$BASE" --user "$USER_NAME"
  done
  for log in "$dest"/*.log; do
    left=$(grep -c -E "$HOME/|\.pyenv|torchinductor_${USER_NAME}\b|$work" "$log" || true)
    [ "$left" = 0 ] || { echo "   WARNING: $left lines with machine paths left in $log" >&2; }
    if command -v tlparse >/dev/null; then
      out="$(mktemp -d)"
      echo "   $(basename "$log"): $(stat -c %s "$log") bytes; $(tlparse "$log" -o "$out" --overwrite --no-browser 2>&1 | grep -o 'Stats {.*}' | tail -1)"
      rm -rf "$out"
    fi
  done
  if [ "$s" = draft_export ]; then "$PYTHON" "$HERE/check_dtrace_pair.py" "$dest" | tail -1; fi
  rm -rf "$work"
done
rm -rf "$CACHE_DIR"
