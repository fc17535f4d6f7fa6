#!/usr/bin/env bash
# Capture the issue-52 scenarios into tests/data/captured/<scenario>/ (sanitized), with the
# program's stdout as program-output.events.  PYTHON=... picks the interpreter (torch needed).
#   tests/capture/issue52/capture.sh [scenario ...]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
PYTHON="${PYTHON:-python3}"
ALL=(limit_fullgraph guard_sources unbacked_no_export reset_functions global_settings more_guards device_and_cells)
if [ $# -gt 0 ]; then SCENARIOS=("$@"); else SCENARIOS=("${ALL[@]}"); fi
VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"
for s in "${SCENARIOS[@]}"; do
  work="$(cd "$(mktemp -d)" && pwd -P)"
  cp "$HERE/$s.py" "$work/"
  export TORCHINDUCTOR_CACHE_DIR="$work/inductor-cache"
  ( cd "$work" && TORCH_TRACE="$work/trace" "$PYTHON" "$s.py" >"$work/stdout.txt" 2>"$work/stderr.txt" ) \
    || { echo "scenario $s failed, see $work/stderr.txt" >&2; exit 1; }
  dest="$ROOT/tests/data/captured/$s"
  mkdir -p "$dest"
  rm -f "$dest"/*.log
  for log in "$work"/trace/*.log; do
    "$PYTHON" "$ROOT/tests/capture/sanitize.py" "$log" "$dest/$(basename "$log")" \
      --venv "$VENV" --project "$work" --python-prefix "$BASE" --user "$USER_NAME"
  done
  sed -e "s#$work#/home/user/project#g" "$work/stdout.txt" >"$dest/program-output.events"
  left=$(grep -c -E "$HOME/|\.pyenv|torchinductor_${USER_NAME}\b|$work|$VENV" "$dest"/* || true)
  echo "== $s: $(ls "$dest") ; machine paths left: $left"
done
