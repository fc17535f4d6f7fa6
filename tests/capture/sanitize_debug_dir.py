#!/usr/bin/env python3
"""Copy a torch_compile_debug/ folder with the path rewrites of sanitize.py.

Usage:
  sanitize_debug_dir.py SRC_DIR DST_DIR --venv VENV --project PROJECT [--python-prefix P]
                        [--user NAME]

Text files get sanitize.py's rewrites (trace logs (`*.log` whose first line is a glog record
with JSON) through sanitize.sanitize so payload md5s stay right); `run_<timestamp>-pid_<pid>`
folders become `run_2026_01_01_00_00_00_000000-pid_1` so regenerating keeps paths stable;
binary files (none expected) are skipped with a note.
"""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sanitize  # noqa: E402

RUN = re.compile(r"^run_[0-9_]+-pid_[0-9]+$")
STABLE_RUN = "run_2026_01_01_00_00_00_000000-pid_1"


def is_trace_log(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline()
    return re.match(r"^[VIWEC]\d{4} ", first) is not None and "{" in first


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("dst")
    ap.add_argument("--venv", required=True)
    ap.add_argument("--project", required=True)
    ap.add_argument("--python-prefix", default=None)
    ap.add_argument("--user", default=os.environ.get("USER", "root"))
    a = ap.parse_args()
    rules = sanitize.build_rules(a.venv.rstrip("/"), a.project.rstrip("/"),
                                 a.python_prefix.rstrip("/") if a.python_prefix else None, a.user)
    for root, _dirs, files in os.walk(a.src):
        rel = os.path.relpath(root, a.src)
        parts = [STABLE_RUN if RUN.match(p) else p for p in rel.split(os.sep) if p != "."]
        out_dir = os.path.join(a.dst, *parts)
        os.makedirs(out_dir, exist_ok=True)
        for name in sorted(files):
            src = os.path.join(root, name)
            dst = os.path.join(out_dir, name)
            try:
                with open(src, encoding="utf-8") as f:
                    text = f.read()
            except UnicodeDecodeError:
                print(f"skipped binary {src}")
                continue
            if is_trace_log(src):
                sanitize.sanitize(src, dst, rules)
                continue
            for pat, rep in rules:
                text = pat.sub(rep, text)
            with open(dst, "w", encoding="utf-8") as f:
                f.write(text)
    shutil.copystat(a.src, a.dst)
    print(f"{a.dst}: sanitized")


if __name__ == "__main__":
    main()
