#!/usr/bin/env bash
# Regenerate tests/data/captured/runtime_training/ (or runtime_ranks/): trace logs and
# torch's runtime profiles (issue 38), made by the command a user runs:
#
#   sphinx-torchtrace run --runtime --worth-it --no-browser -- python runtime_training.py
#   sphinx-torchtrace run --runtime --no-browser -- python multi_rank_gloo.py   (ranks)
#
# in a fresh temp dir, then the log through sanitize.py and the profiles with the same
# paths rewritten (their host name and first file's path are masked when published).
#   PYTHON=/path/to/python tests/capture/capture_runtime.sh [ranks]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
if [ "${1:-}" = ranks ]; then
  SCRIPT=multi_rank_gloo.py; DEST="$ROOT/tests/data/captured/runtime_ranks"; FLAGS=()
else
  SCRIPT=runtime_training.py; DEST="$ROOT/tests/data/captured/runtime_training"; FLAGS=(--worth-it)
fi
VENV="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
BASE="$("$PYTHON" -c 'import sys; print(sys.base_prefix)')"
USER_NAME="$(id -un)"

work="$(mktemp -d)"
work="$(cd "$work" && pwd -P)"
cp "$HERE/$SCRIPT" "$work/"
export XDG_CACHE_HOME="$work/cache"
( cd "$work" && CI=true "$PYTHON" -m sphinx_torchtrace run --runtime "${FLAGS[@]}" --no-browser \
    -q -o "$work/site" -- "$PYTHON" "$SCRIPT" >"$work/stdout.txt" 2>&1 ) \
  || { tail -20 "$work/stdout.txt" >&2; exit 1; }
run="$(ls -d "$work"/cache/sphinx-torchtrace/runs/*/ | head -1)"
rm -rf "$DEST"
mkdir -p "$DEST/runtime"
for log in "$run"/*.log; do
  "$PYTHON" "$HERE/sanitize.py" "$log" "$DEST/$(basename "$log")" \
    --venv "$VENV" --project "$work" --python-prefix "$BASE" --user "$USER_NAME"
done
for f in "$run"/runtime/*; do
  "$PYTHON" - "$f" "$DEST/runtime/$(basename "$f")" "$run" "$work" "$HOME" <<'PY'
import gzip, re, sys
src, dst, run, work, home = sys.argv[1:]
opener = gzip.open if src.endswith(".gz") else open
text = opener(src, "rt").read()
text = text.replace(run.rstrip("/"), "/home/user/project/trace").replace(work, "/home/user/project")
text = text.replace(home, "/home/user")
text = re.sub(r'"host_name": "[^"]*"', '"host_name": "host"', text)
with (gzip.open(dst, "wt", compresslevel=9) if dst.endswith(".gz") else open(dst, "w")) as f:
    f.write(text)
PY
done
left=$(zgrep -c -E "$HOME/|$work|torchinductor_${USER_NAME}\b" "$DEST"/*.log "$DEST"/runtime/* | grep -v ':0$' || true)
[ -z "$left" ] || echo "WARNING: machine paths left: $left" >&2
ls -la "$DEST" "$DEST/runtime"
rm -rf "$work"
