#!/usr/bin/env bash
# Regenerate tests/data/captured/debug_dir/{inference,training}/torch_compile_debug/.
#
#   tests/capture/capture_debug_dir.sh [inference|training ...]
#   PYTHON=/path/to/python tests/capture/capture_debug_dir.sh
#
# Each run happens in a fresh temp dir with TORCH_COMPILE_DEBUG=1 (and
# TORCHINDUCTOR_FORCE_DISABLE_CACHES=1, without which nothing is written) plus
# INDUCTOR_PROVENANCE=1 (the node-mapping JSON); the folder's text files are then copied with
# the same path rewrites as sanitize.py (sanitize_debug_dir.py), the run_* folder renamed to a
# fixed name so regenerating gives stable paths.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"
if [ $# -gt 0 ]; then KINDS=("$@"); else KINDS=(inference training); fi
for k in "${KINDS[@]}"; do
  work="$(mktemp -d)"; work="$(cd "$work" && pwd -P)"
  cp "$HERE/debug_dir_$k.py" "$work/"
  echo "== debug_dir/$k (in $work)"
  ( cd "$work" && TORCH_COMPILE_DEBUG=1 TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 INDUCTOR_PROVENANCE=1 \
      TORCHINDUCTOR_CACHE_DIR="$work/inductor_cache" "$PYTHON" "debug_dir_$k.py" >"$work/stdout.txt" 2>&1 ) \
    || { echo "debug_dir/$k failed" >&2; tail -20 "$work/stdout.txt" >&2; exit 1; }
  dest="$ROOT/tests/data/captured/debug_dir/$k"
  rm -rf "$dest"; mkdir -p "$dest"
  "$PYTHON" "$HERE/sanitize_debug_dir.py" "$work/torch_compile_debug" "$dest/torch_compile_debug" \
    --venv "$VENV" --project "$work" --python-prefix "$BASE" --user "$USER_NAME"
  left=$(grep -r -c -E "$HOME/|\.pyenv|torchinductor_${USER_NAME}\b|$work|/work/" "$dest" | grep -v ':0$' || true)
  [ -z "$left" ] || echo "   WARNING: machine paths left: $left" >&2
  rm -rf "$work"
done
