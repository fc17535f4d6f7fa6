#!/usr/bin/env bash
# Regenerate the TORCH_LOGS text logs under tests/data/captured/torch_logs/ (torch 2.13, CPU).
#
#   tests/capture/capture_torch_logs.sh          # PYTHON=/path/to/python to pick the interpreter
#
# torch_logs.py runs once per TORCH_LOGS setting (stderr to a file), once with TORCH_TRACE and
# TORCH_LOGS together (with_trace/: the trace log and the text log of the same run), and
# torch_logs_ranks.py as a 2-rank gloo job under torchrun (ranks.log: `[rankN]:` prefixes).
# Each log is sanitized with sanitize.py (the same path rewrites as the trace logs), then
# checked for machine paths.  seed003_old_format.log is not captured: it is the lines of the
# older `[date time] [4/0] logger: [LEVEL]` format quoted in ../shared/seeds/003 (see README).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
DEST="$ROOT/tests/data/captured/torch_logs"
VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"
CACHE_DIR="${TMPDIR:-/tmp}/torchinductor_${USER_NAME}"
work="$(mktemp -d)"; work="$(cd "$work" && pwd -P)"
cp "$HERE/torch_logs.py" "$HERE/torch_logs_ranks.py" "$work/"
cd "$work"

run() {  # run OUT_NAME ENV... -- python args
  local out="$1"; shift
  rm -rf "$CACHE_DIR"
  env "$@" >"stdout_$(basename "$out").txt" 2>"$out"
}
mkdir -p trace
run options.log TORCH_LOGS="graph_breaks,recompiles,guards,dynamic,output_code" "$PYTHON" torch_logs.py
run plus_dynamo.log TORCH_LOGS="+dynamo" "$PYTHON" torch_logs.py
run plus_inductor.log TORCH_LOGS="+inductor" "$PYTHON" torch_logs.py
run with_trace.log TORCH_TRACE="$work/trace" TORCH_LOGS="graph_breaks,recompiles,guards,output_code" \
  "$PYTHON" torch_logs.py
# torchrun's --tee 3 with this template writes each worker line as `[rankN]:[rankN]:...`
run ranks.log TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[rank${rank}]:' \
  TORCH_LOGS="graph_breaks,recompiles" "$(dirname "$PYTHON")/torchrun" --standalone \
  --nproc-per-node 2 --tee 3 torch_logs_ranks.py

sanitize() {
  "$PYTHON" "$HERE/sanitize.py" "$1" "$2" --venv "$VENV" --project "$work" \
    --python-prefix "$BASE" --user "$USER_NAME"
}
mkdir -p "$DEST/with_trace"
rm -f "$DEST/with_trace/"*.log
for name in options plus_dynamo plus_inductor ranks; do sanitize "$name.log" "$DEST/$name.log"; done
sanitize with_trace.log "$DEST/with_trace/torch_logs.log"
for log in trace/*.log; do sanitize "$log" "$DEST/with_trace/$(basename "$log")"; done
for log in "$DEST"/*.log "$DEST"/with_trace/*.log; do
  left=$(grep -c -E "$HOME/|\.pyenv|torchinductor_${USER_NAME}\b|$work" "$log" || true)
  [ "$left" = 0 ] || echo "   WARNING: $left lines with machine paths left in $log" >&2
done
echo "done: $DEST"
