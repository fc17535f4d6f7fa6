"""``bootstrap.py`` talks: what each step runs, that a quiet step is still running, how long
it took; the step's own output (stderr too) passed on as it comes.

A fresh clone's ``bootstrap.py demo`` was silent for 25 s while pip installed, and a suite
run in the background looked hung for minutes.  A real step (a Python that prints, then
says nothing for a while) is run through the script's own runner.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bootstrap() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bootstrap", ROOT / "bootstrap.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_quiet_step_says_it_is_still_running_and_how_long_it_took(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bootstrap = _bootstrap()
    monkeypatch.setattr(bootstrap, "QUIET_S", 1.0)
    program = (
        "import sys, time\n"
        "print('installing', flush=False)\n"  # unflushed: the runner asks for unbuffered
        "sys.stderr.write('a warning\\n')\n"
        "time.sleep(3.5)\n"
        "print('installed')\n"
    )
    script = tmp_path / "step.py"
    script.write_text(program, encoding="utf-8")
    status = bootstrap.run([sys.executable, str(script)], "installing nox")
    out = capfd.readouterr().out.splitlines()
    assert status == 0
    assert out[0].startswith("bootstrap: installing nox: ") and out[0].endswith("step.py")
    assert out[1:3] == ["installing", "a warning"]  # as they came, stderr included
    still = [line for line in out if "still running" in line]
    assert len(still) >= 2 and all(s.startswith("bootstrap: installing nox: ") for s in still)
    assert out.index(still[0]) < out.index("installed")  # said while it was quiet
    assert out[-1].startswith("bootstrap: installing nox: done in ")


def test_a_failing_step_says_so_with_its_status(capfd: pytest.CaptureFixture[str]) -> None:
    bootstrap = _bootstrap()
    status = bootstrap.run([sys.executable, "-c", "raise SystemExit(3)"], "nox session 'demo'")
    assert status == 3
    assert (
        capfd.readouterr()
        .out.splitlines()[-1]
        .startswith("bootstrap: nox session 'demo': failed (exit 3) in ")
    )
