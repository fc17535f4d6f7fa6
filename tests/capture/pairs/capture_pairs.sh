#!/usr/bin/env bash
# Regenerate the before/after log pairs under tests/data/captured/pairs/<pair>/{baseline,new}/.
#
#   tests/capture/pairs/capture_pairs.sh                 # every pair
#   tests/capture/pairs/capture_pairs.sh recompile       # one pair
#   PYTHON=/path/to/python tests/capture/pairs/capture_pairs.sh
#
# Both sides of a pair run as `program.py` in one temp dir (so both logs name the same user
# file, as an edited program would), each with TORCH_TRACE and its own fresh inductor cache;
# `cache_warm` runs the same program twice sharing one cache (cold, then warm).  Logs are
# sanitized with ../sanitize.py, then checked for machine paths.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
PYTHON="${PYTHON:-python3}"
DEST_ROOT="$ROOT/tests/data/captured/pairs"
ALL=(graph_break_fixed recompile compile_error cache_warm)
if [ $# -gt 0 ]; then PAIRS=("$@"); else PAIRS=("${ALL[@]}"); fi

VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"

for pair in "${PAIRS[@]}"; do
  [ -f "$HERE/$pair/baseline.py" ] || { echo "no such pair: $pair" >&2; exit 2; }
  work="$(mktemp -d)"
  work="$(cd "$work" && pwd -P)"
  mkdir -p "$work/project"
  for side in baseline new; do
    cache="$work/cache-$side"
    [ "$pair" = cache_warm ] && cache="$work/cache-shared"
    cp "$HERE/$pair/$side.py" "$work/project/program.py"
    echo "== $pair/$side"
    ( cd "$work/project" && TORCHINDUCTOR_CACHE_DIR="$cache" TORCH_TRACE="$work/trace-$side" \
        "$PYTHON" program.py >"$work/$side.txt" 2>&1 ) \
      || { echo "$pair/$side failed, see $work/$side.txt" >&2; tail -20 "$work/$side.txt" >&2; exit 1; }
    dest="$DEST_ROOT/$pair/$side"
    mkdir -p "$dest"
    rm -f "$dest"/*.log
    for log in "$work/trace-$side"/*.log; do
      "$PYTHON" "$HERE/../sanitize.py" "$log" "$dest/$(basename "$log")" \
        --venv "$VENV" --project "$work/project" --python-prefix "$BASE" --user "$USER_NAME"
    done
    for log in "$dest"/*.log; do
      left=$(grep -c -E "$HOME/|\.pyenv|torchinductor_${USER_NAME}\b|$work|/work/" "$log" || true)
      [ "$left" = 0 ] || echo "   WARNING: $left lines with machine paths left in $log" >&2
      echo "   $(basename "$log"): $(stat -c %s "$log") bytes"
    done
  done
  rm -rf "$work"
done
