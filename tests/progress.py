"""A progress line at least once a minute, whatever pytest's own output does.

The suite takes tens of minutes on a busy two-core machine.  Run in the background
(``nohup``, ``&``, a CI log) pytest's dots go to a file that Python fills a block at a
time, and one slow test writes nothing for minutes: the run looked hung for 15 minutes.
This plugin (the controller's, never an xdist worker's) prints one flushed line every
``TORCHTRACE_PROGRESS_S`` seconds (60 by default; 0 turns it off): how many tests of how
many are done, how many failed, the time so far, and the tests running now.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any

import pytest

#: Seconds between lines (the environment variable of that name overrides it).
EVERY_S = 60.0
#: Tests named as running now, at most.
NAMED = 2


class Progress:
    """Counts tests as their reports arrive; a thread prints the counts every ``every`` s."""

    def __init__(self, every: float, fd: int) -> None:
        self.every = every
        self.fd = fd  # the run's real standard output (a test's output is captured)
        self.started = time.monotonic()
        self.total: int | None = None
        self.done = 0
        self.failed: set[str] = set()
        self.running: dict[str, float] = {}  # test id -> when it started
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="test-progress", daemon=True)

    def line(self) -> str:
        with self.lock:
            elapsed = time.monotonic() - self.started
            of = f" of {self.total}" if self.total is not None else ""
            failed = f", {len(self.failed)} failed" if self.failed else ""
            now = sorted(self.running.items(), key=lambda kv: kv[1])[:NAMED]
            names = "; ".join(f"{t} ({time.monotonic() - s:.0f} s)" for t, s in now)
            more = f" and {len(self.running) - NAMED} more" if len(self.running) > NAMED else ""
            running = f"; running {names}{more}" if names else ""
            return (
                f"[progress] {self.done}{of} tests done{failed} after "
                f"{elapsed / 60:.1f} min{running}"
            )

    def _loop(self) -> None:
        while not self.stop.wait(self.every):
            try:
                os.write(self.fd, ("\n" + self.line() + "\n").encode("utf-8", "replace"))
            except OSError:
                return

    # -- hooks -----------------------------------------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if session.items:
            self.total = len(session.items)

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist's, when it is installed
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.total = len(ids)  # each worker collects the whole suite

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        with self.lock:
            self.running[nodeid] = time.monotonic()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        with self.lock:
            if report.failed:
                self.failed.add(report.nodeid)
            if report.when == "teardown":
                self.running.pop(report.nodeid, None)
                self.done += 1

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.thread.start()

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.stop.set()


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller reports
        return
    every = float(os.environ.get("TORCHTRACE_PROGRESS_S", EVERY_S))
    if every > 0:
        config.pluginmanager.register(Progress(every, _real_stdout(config)), "torchtrace-progress")


def _real_stdout(config: pytest.Config) -> int:
    """A descriptor of the run's standard output: while a test runs, pytest points
    descriptor 1 at its capture file and keeps the real one aside (``fd`` capture); with
    ``-s`` or ``--capture=sys`` descriptor 1 is the real one."""
    capman = config.pluginmanager.getplugin("capturemanager")
    out = getattr(getattr(capman, "_global_capturing", None), "out", None)
    saved = getattr(out, "targetfd_save", None)
    return os.dup(saved if isinstance(saved, int) else sys.__stdout__.fileno())
