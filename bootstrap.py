#!/usr/bin/env python3
"""Run a developer task from a fresh clone with nothing but a system Python.

    python3 bootstrap.py demo                  # build the demo docs from the bundled traces
    python3 bootstrap.py tests                 # the whole test suite
    python3 bootstrap.py SESSION [-- ARGS...]  # any nox session, ARGS passed on

Debian's and Ubuntu's system Python refuses ``pip install`` outside a virtual environment
(PEP 668, "externally-managed-environment") and, without the ``python3-venv`` package,
has no ``ensurepip`` to put pip into one.  This script needs neither: it makes ``.venv``
beside itself, with pip from ``ensurepip`` where there is one, or else pip's own wheel
fetched from PyPI and checked against the sha256 PyPI publishes for it; installs nox
there; and runs the nox session (nox makes each session's environment itself).  Only the
standard library is used, so the script runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import venv
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
#: where pip's wheel comes from when ``ensurepip`` is missing (PyPI's JSON API)
PIP_JSON = "https://pypi.org/pypi/pip/json"
#: set to 1 to take the no-``ensurepip`` path even where there is one (CI checks it)
NO_ENSUREPIP = "TORCHTRACE_BOOTSTRAP_NO_ENSUREPIP"


def has_ensurepip() -> bool:
    """Debian strips ``ensurepip`` from its Python unless ``python3-venv`` is installed."""
    if os.environ.get(NO_ENSUREPIP) == "1":
        return False
    try:
        import ensurepip  # noqa: F401
    except ImportError:
        return False
    return True


def say(message: str) -> None:
    print(f"bootstrap: {message}", flush=True)


def fetch_pip_wheel(folder: Path) -> Path:
    """pip's newest wheel from PyPI, refused unless its sha256 is the one PyPI lists."""
    with urllib.request.urlopen(PIP_JSON, timeout=60) as response:
        release = json.load(response)
    wheel = next(
        f
        for f in release["urls"]
        if f["packagetype"] == "bdist_wheel" and f["filename"].endswith("-none-any.whl")
    )
    say(f"no ensurepip here: fetching {wheel['filename']} from PyPI")
    url = urllib.parse.urljoin(PIP_JSON, wheel["url"])  # a mirror may answer relative URLs
    with urllib.request.urlopen(url, timeout=120) as response:
        data = response.read()
    if hashlib.sha256(data).hexdigest() != wheel["digests"]["sha256"]:
        raise SystemExit("bootstrap: pip's wheel does not match the sha256 PyPI lists; stopped")
    path = folder / wheel["filename"]
    path.write_bytes(data)
    return path


def imports(module: str) -> bool:
    """Whether ``.venv``'s Python imports ``module``."""
    return (
        subprocess.run([str(PYTHON), "-c", f"import {module}"], capture_output=True).returncode == 0
    )


def make_venv() -> None:
    """``.venv`` with pip in it, made once (and mended where an earlier try stopped)."""
    if PYTHON.exists() and imports("pip"):
        return
    with_pip = has_ensurepip()
    if not PYTHON.exists():
        say(f"making {VENV.name}/ with {sys.executable} (Python {sys.version.split()[0]})")
        venv.EnvBuilder(with_pip=with_pip, symlinks=os.name != "nt").create(VENV)
    if not imports("pip"):
        with tempfile.TemporaryDirectory() as tmp:
            wheel = fetch_pip_wheel(Path(tmp))
            # a wheel is a zip Python can import from: pip installs itself from its own wheel
            subprocess.run(
                [
                    str(PYTHON),
                    str(wheel / "pip"),
                    "install",
                    "--quiet",
                    "--no-cache-dir",
                    str(wheel),
                ],
                check=True,
            )


#: Seconds a step may go without printing before a line says it is still running.
QUIET_S = 30.0


def shown(command: list[str]) -> str:
    """A command as the user would type it (``.venv/bin/python``, not the whole path)."""
    return " ".join(os.path.relpath(c, ROOT) if c.startswith(str(ROOT)) else c for c in command)


def run(command: list[str], what: str) -> int:
    """Run one step, saying what it runs, that it is still running when it has printed
    nothing for :data:`QUIET_S` seconds (a pip install, a slow test), and how long it took.
    Its output is passed on as it comes (unbuffered: a log file or CI page sees it at once)."""
    say(f"{what}: {shown(command)}")
    started = time.monotonic()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert process.stdout is not None
    last = [time.monotonic()]

    def relay(pipe: IO[bytes]) -> None:
        out = sys.stdout.buffer
        while chunk := os.read(pipe.fileno(), 1 << 16):
            out.write(chunk)
            out.flush()
            last[0] = time.monotonic()

    thread = threading.Thread(target=relay, args=(process.stdout,), daemon=True)
    thread.start()
    try:
        while process.poll() is None:
            time.sleep(1.0)
            if time.monotonic() - last[0] >= QUIET_S:
                say(f"{what}: still running, {minutes(time.monotonic() - started)} so far")
                last[0] = time.monotonic()
    except KeyboardInterrupt:
        process.wait()
        raise
    thread.join(timeout=5)
    status = "done" if process.returncode == 0 else f"failed (exit {process.returncode})"
    say(f"{what}: {status} in {minutes(time.monotonic() - started)}")
    return process.returncode


def minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    session, rest = argv[0], argv[1:]
    if rest[:1] == ["--"]:
        rest = rest[1:]
    make_venv()
    if not imports("nox"):
        status = run([str(PYTHON), "-m", "pip", "install", "--quiet", "nox"], "installing nox")
        if status:
            return status
    command = [str(PYTHON), "-m", "nox", "-s", session, *(["--", *rest] if rest else [])]
    return run(command, f"nox session {session!r}")


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
