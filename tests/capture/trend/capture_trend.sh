#!/usr/bin/env bash
# Regenerate tests/data/captured/trend/{v1,v2,v3}/: three runs of one program as it changed
# (a break fixed, recompiles gone, a new break), each run as `program.py` in one temp dir
# with TORCH_TRACE and a fresh inductor cache, sanitized with ../sanitize.py, then gzipped.
#
#   PYTHON=/path/to/python tests/capture/trend/capture_trend.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
PYTHON="${PYTHON:-python3}"
DEST_ROOT="$ROOT/tests/data/captured/trend"
VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"

work="$(mktemp -d)"
work="$(cd "$work" && pwd -P)"
mkdir -p "$work/project"
for run in v1 v2 v3; do
  cp "$HERE/$run.py" "$work/project/program.py"
  echo "== $run"
  ( cd "$work/project" && TORCHINDUCTOR_CACHE_DIR="$work/cache-$run" \
      TORCH_TRACE="$work/trace-$run" "$PYTHON" program.py >"$work/$run.txt" 2>&1 ) \
    || { echo "$run failed, see $work/$run.txt" >&2; tail -20 "$work/$run.txt" >&2; exit 1; }
  dest="$DEST_ROOT/$run"
  mkdir -p "$dest"
  rm -f "$dest"/*.log "$dest"/*.log.gz
  for log in "$work/trace-$run"/*.log; do
    "$PYTHON" "$HERE/../sanitize.py" "$log" "$dest/$(basename "$log")" \
      --venv "$VENV" --project "$work/project" --python-prefix "$BASE" --user "$USER_NAME"
  done
  for log in "$dest"/*.log; do
    left=$(grep -c -E "$HOME/|\.pyenv|torchinductor_${USER_NAME}\b|$work|/work/" "$log" || true)
    [ "$left" = 0 ] || echo "   WARNING: $left lines with machine paths left in $log" >&2
    echo "   $(basename "$log"): $(stat -c %s "$log") bytes"
  done
  gzip -9 "$dest"/*.log  # the loader reads gzip logs as they are
done
rm -rf "$work"
