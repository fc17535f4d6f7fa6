#!/usr/bin/env bash
# Capture newer_torch.py with a newer torch: tests/data/captured/newer_torch_t<NNN>/.
#
#   PYTHON=/path/to/torch-2.14/python tests/capture/capture_newer.sh     # -> newer_torch_t214
#   SCRIPT=nested_regions RUNS=cold PYTHON=... tests/capture/capture_newer.sh  # -> nested_regions_t214
#
# The program runs twice in one temp dir with one fresh inductor cache: the first log is a
# cold start, the second a warm one (cache hits).  Compile workers are on (two threads, the
# subprocess pool, a 1 s watchdog so that a slow C++ compile is reported).  Logs are
# sanitized as capture.sh does; then the leftover-path grep and tlparse's Stats.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
SCRIPT="${SCRIPT:-newer_torch}"
RUNS="${RUNS:-cold warm}"
VERSION="$("$PYTHON" -c 'import torch; print("".join(torch.__version__.split("+")[0].split(".")[:2]))')"
DEST="$ROOT/tests/data/captured/${SCRIPT}_t$VERSION"
VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"

work="$(mktemp -d)"
work="$(cd "$work" && pwd -P)"
cp "$HERE/$SCRIPT.py" "$work/"
echo "== $SCRIPT with torch $VERSION (in $work)"
for run in $RUNS; do
  start=$(date +%s)
  ( cd "$work" && env TORCH_TRACE="$work/trace-$run" TORCHINDUCTOR_CACHE_DIR="$work/cache" \
      TORCHINDUCTOR_COMPILE_THREADS=2 TORCHINDUCTOR_WORKER_START=subprocess \
      TORCHINDUCTOR_COMPILE_WORKER_WATCHDOG_INTERVAL=1 \
      "$PYTHON" "$SCRIPT.py" >"$work/stdout-$run.txt" 2>&1 ) \
    || { echo "run $run failed, see $work/stdout-$run.txt" >&2; tail -20 "$work/stdout-$run.txt" >&2; exit 1; }
  echo "   $run ran in $(( $(date +%s) - start )) s"
done
mkdir -p "$DEST"
rm -f "$DEST"/*.log
for run in $RUNS; do
  for log in "$work"/trace-$run/*.log; do
    "$PYTHON" "$HERE/sanitize.py" "$log" "$DEST/$run.log" \
      --venv "$VENV" --project "$work" --python-prefix "$BASE" --user "$USER_NAME"
  done
done
for log in "$DEST"/*.log; do
  left=$(grep -c -E "$HOME/|\.pyenv|torchinductor_${USER_NAME}\b|$work" "$log" || true)
  [ "$left" = 0 ] || { echo "   WARNING: $left lines with machine paths left in $log" >&2; }
  TLPARSE="${TLPARSE:-$(command -v tlparse || true)}"
  if [ -n "$TLPARSE" ] >/dev/null; then
    out="$(mktemp -d)"
    echo "   $(basename "$log"): $(stat -c %s "$log") bytes; $("$TLPARSE" "$log" -o "$out" --overwrite --no-browser 2>&1 | grep -o 'Stats {.*}' | tail -1)"
    rm -rf "$out"
  fi
done
echo "   kept in $work (remove when checked)"
