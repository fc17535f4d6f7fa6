"""Runs first in a program started by ``sphinx-torchtrace run --runtime``: torch's profiler.

This folder is put first on the program's ``PYTHONPATH``; Python imports this module at
start-up in every process of the program (torchrun's workers, spawned ranks too).  Where
``SPHINX_TORCHTRACE_RUNTIME`` names a folder, it starts ``torch.profiler`` (CPU activity:
torch marks each call of compiled code as ``Torch-Compiled Region: <compile id>``) and, at
exit, writes the profile there as ``profile-<pid>.json.gz`` (Chrome trace format, the one
torch writes) with ``profile-<pid>.meta.json`` (the process's wall time, rank, window).  A
process that ran no compiled region (a launcher, a compile worker) writes nothing.

``SPHINX_TORCHTRACE_RUNTIME_STEPS=A:B`` profiles from optimizer step A to step B (torch's
global optimizer-step hooks count them) instead of the whole run.  Then the
``sitecustomize`` this one hides (a distribution's, a virtual environment's) runs as it
would have.  Standard library and torch only: the program's Python may not have this
package.
"""

import os
import sys
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
_OUT = "SPHINX_TORCHTRACE_RUNTIME"
_STEPS = "SPHINX_TORCHTRACE_RUNTIME_STEPS"
_MODE = "SPHINX_TORCHTRACE_RUNTIME_MODE"
_MARK = b"Torch-Compiled Region"


def _chain() -> None:
    """Import the ``sitecustomize`` this file hides, as Python would have."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
    mine = sys.modules.pop("sitecustomize", None)
    try:
        import sitecustomize  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        pass
    except Exception as e:  # theirs failed: Python prints that and goes on, so do we
        print(f"Error in sitecustomize; set PYTHONVERBOSE for traceback:\n{e!r}", file=sys.stderr)
    if mine is not None and "sitecustomize" not in sys.modules:
        sys.modules["sitecustomize"] = mine


def _window(text: str) -> "tuple[int, int] | None":
    start, sep, stop = text.partition(":")
    try:
        first, last = int(start or 0), int(stop) if stop else 0
    except ValueError:
        return None
    return (first, last) if sep and last > first >= 0 else None


def _start(out: str) -> None:
    import atexit
    import gzip
    import json
    import shutil
    import time

    began = time.perf_counter()
    began_unix = time.time()
    try:
        import torch  # type: ignore[import-not-found,unused-ignore]
        from torch.profiler import (  # type: ignore[import-not-found,unused-ignore]
            ProfilerActivity,
            profile,
        )
    except ImportError:
        return
    window = _window(os.environ.get(_STEPS, ""))
    prof = profile(activities=[ProfilerActivity.CPU])
    state: dict[str, Any] = {"running": False, "steps": 0, "started_step": None}

    def start() -> None:
        prof.start()
        state["running"] = True

    def stop() -> None:
        if state["running"]:
            prof.stop()
            state["running"] = False

    if window is None:
        start()
    else:
        from torch.optim.optimizer import (  # type: ignore[import-not-found,unused-ignore]
            register_optimizer_step_post_hook,
        )

        def on_step(*_args: object) -> None:
            state["steps"] += 1
            if state["steps"] == window[0] and not state["running"]:
                state["started_step"] = state["steps"]
                start()
            elif state["steps"] == window[1] and state["running"]:
                stop()

        if window[0] == 0:
            state["started_step"] = 0
            start()
        register_optimizer_step_post_hook(on_step)

    def finish() -> None:
        ended = time.perf_counter()
        profiled = state["running"] or state["started_step"] is not None
        stop()
        if not profiled:
            if window is not None and state["steps"]:  # a window the program did not reach
                print(
                    f"sphinx-torchtrace: no runtime profile: the steps {window[0]}:{window[1]} "
                    f"were not reached ({state['steps']} optimizer steps counted)",
                    file=sys.stderr,
                )
            return
        pid = os.getpid()
        raw = os.path.join(out, f".profile-{pid}.json")
        try:
            os.makedirs(out, exist_ok=True)
            prof.export_chrome_trace(raw)
            with open(raw, "rb") as f:
                ran = any(_MARK in chunk for chunk in iter(lambda: f.read(1 << 22), b""))
            if ran:
                with (
                    open(raw, "rb") as src,
                    gzip.open(
                        os.path.join(out, f"profile-{pid}.json.gz"), "wb", compresslevel=6
                    ) as dst,
                ):
                    shutil.copyfileobj(src, dst, 1 << 20)
                meta = {
                    "format": 1,
                    "pid": pid,
                    "rank": os.environ.get("RANK"),
                    "mode": os.environ.get(_MODE, "compiled"),
                    "wall_s": ended - began,
                    "started_unix": began_unix,
                    "steps": list(window) if window else None,
                    "steps_seen": state["steps"],
                    "torch": torch.__version__,
                }
                with open(os.path.join(out, f"profile-{pid}.meta.json"), "w") as f:
                    json.dump(meta, f)
        except OSError as e:
            print(f"sphinx-torchtrace: no runtime profile written: {e}", file=sys.stderr)
        finally:
            if os.path.exists(raw):
                os.remove(raw)

    atexit.register(finish)


_chain()
if os.environ.get(_OUT):
    _start(os.environ[_OUT])
