#!/usr/bin/env python3
"""Check the draft_export/TORCH_DTRACE pairing claim for the logs in a directory.

For every log: which interned string ids it defines (`{"str": [s, id]}` records) and which
ids it uses (`"filename": <int>` in any stack frame of a metadata line).  Reports, per file,
the ids used but not defined there, and in which other file of the directory they are defined.

Usage: check_dtrace_pair.py DIR
"""
import glob
import json
import os
import re
import sys

META = re.compile(r"^[VIWEC]\d{4} [\d:.]+ \d+ \S+:\d+\] (\{.*\})$")


def walk_filenames(obj, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "filename" and isinstance(v, int):
                out.add(v)
            else:
                walk_filenames(v, out)
    elif isinstance(obj, list):
        for v in obj:
            walk_filenames(v, out)


def scan(path):
    defined, used = {}, set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = META.match(line.rstrip("\n"))
            if not m:
                continue
            rec = json.loads(m.group(1))
            if "str" in rec:
                s, i = rec["str"]
                defined[i] = s
            else:
                walk_filenames(rec, used)
    return defined, used


def main():
    d = sys.argv[1]
    info = {f: scan(f) for f in glob.glob(os.path.join(d, "*.log"))}
    # order by the smallest id a file defines (file names are random, mtimes not reliable)
    info = dict(sorted(info.items(), key=lambda kv: min(kv[1][0], default=1 << 30)))
    ok = False
    for f, (defined, used) in info.items():
        rng = f"{min(defined)}..{max(defined)}" if defined else "none"
        missing = sorted(used - set(defined))
        print(f"{os.path.basename(f)}: defines {len(defined)} str ids ({rng}), uses {len(used)}, "
              f"used-but-undefined {missing}")
        for i in missing:
            where = [(os.path.basename(g), dg[i]) for g, (dg, _) in info.items() if g != f and i in dg]
            print(f"  id {i} -> defined in {where if where else 'no file'}")
            ok = ok or bool(where)
    print("pairing claim holds" if ok else "pairing claim NOT observed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
