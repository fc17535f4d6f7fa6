"""A program that writes a real trace log where TORCH_TRACE says, as torch would, without
torch: the capture tests' stand-in for a torch.compile program.

CAPTURE_HOW (set by the page's :env:): ``ok`` writes the whole log; ``fail`` writes half of
it and fails; ``hang`` writes half of it and never ends; ``none`` writes nothing.  Each run
appends a line (its arguments and folder) to the file CAPTURE_RUNS names, so a test can
count the runs.
"""

import os
import sys
import time
from pathlib import Path

from helper import GREETING

LOG = Path(__file__).parent / "@DATA@/shared/simple/dedicated_log_torch_trace_5aek85xk.log"

how = os.environ.get("CAPTURE_HOW", "ok")
runs = os.environ.get("CAPTURE_RUNS")
if runs:
    with open(runs, "a", encoding="utf-8") as f:
        f.write(f"{how} {sys.argv[1:]} {os.getcwd()}\n")
print(GREETING, flush=True)
if how == "none":  # a program that compiles nothing
    sys.exit(0)
lines = LOG.read_text(encoding="utf-8").splitlines(keepends=True)
if how != "ok":  # the records before the middle one: a partial trace, as a crash leaves
    middle = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("V"))
    lines = lines[:middle]
out = Path(os.environ["TORCH_TRACE"])
out.mkdir(parents=True, exist_ok=True)
with open(out / "dedicated_log_torch_trace_rank_0_abcd1234.log", "w", encoding="utf-8") as f:
    f.writelines(lines)
time.sleep(float(os.environ.get("CAPTURE_SLEEP", "0")))
if how == "fail":
    sys.stderr.write('Traceback (most recent call last):\n  File "train.py", line 3\n')
    sys.stderr.write("RuntimeError: boom \x1b[31mred\x1b[0m\n")
    sys.exit(3)
if how == "hang":
    time.sleep(600)
