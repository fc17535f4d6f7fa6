"""Running a program under ``TORCH_TRACE`` and keeping its trace in a cache keyed by content.

Docs that show a report of *their current code* capture it at build time
(``torchtrace-capture``), and ``sphinx-torchtrace run`` captures a program before
building its report; both run it here.  A capture costs seconds to minutes, so its
trace is kept under a key of everything that decides what the program does: the
script's bytes, its dependencies' bytes (by default the local modules it imports, found
with :mod:`ast`, never by running it), arguments, environment, the Python and torch
builds (read from files, torch never imported here).  Builds that share the cache
(``-j``, two CI jobs on one runner) take a lock per key and publish an entry with one
``os.replace``, so no reader ever sees half of one.  Standard library only: the
``sphinx-torchtrace`` command and the Sphinx side both use it.
"""

from __future__ import annotations

import ast
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..diagnostics import quote
from ..folders import inside, list_folder, real_root, refusal, walk_files
from ..runtime import BOOT_DIR, RUNTIME_DIR, runtime_environment

#: Bumped when what a key covers or an entry holds changes: older entries are misses.
CACHE_FORMAT = 1
RECORD = "record.json"
LOCKS = ".locks"  # a lock file per key, beside the entries
#: An entry no build made or found for this many days is removed (CaptureCache.prune).
UNUSED_DAYS = 30
TRACE = "trace"
#: Entries of a cache entry's ``trace/`` looked at, at most, before it is used (a capture
#: writes a few logs and profiles; the reader checks its folder again on its own).
MAX_ENTRY_FILES = 10_000
#: What a record keeps of the program's stderr: its last lines, at most this many bytes.
STDERR_TAIL_BYTES = 4000
STDERR_TAIL_LINES = 30

# exit statuses a record may hold besides the program's own
TIMED_OUT = "timeout"
FAILED = "failed"
OK = "ok"


def capture_environment(trace_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a captured program: ours, the page's, then ``TORCH_TRACE`` (a
    fresh folder) and no Inductor caches (a cached compile logs less: the report would
    depend on what ran before)."""
    env = dict(os.environ)
    env.update(extra or {})
    env["TORCH_TRACE"] = os.fspath(trace_dir)
    env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    return env


# -- what decides the key -------------------------------------------------------------------


def local_imports(script: Path, root: Path) -> list[Path]:
    """The modules of ``root`` that ``script`` imports, and theirs (found by reading, with
    :mod:`ast`; an import inside a function counts too).  A module is looked for beside the
    importing file, then beside the script, then at ``root``; nothing outside ``root``."""
    root = root.resolve()
    found: dict[Path, None] = {}
    queue = [script.resolve()]
    seen: set[Path] = set(queue)
    while queue:
        current = queue.pop(0)
        try:
            tree = ast.parse(current.read_bytes(), os.fspath(current))
        except (OSError, SyntaxError, ValueError):
            continue
        for name, level in _imported_names(tree):
            bases = (
                [current.parent, script.parent, root]
                if level == 0
                else [
                    current.parents[level - 1]
                    if level - 1 < len(current.parents)
                    else current.parent
                ]
            )
            for path in _module_files(name, bases, root):
                if path not in seen:
                    seen.add(path)
                    found[path] = None
                    queue.append(path)
    return sorted(found)


def _imported_names(tree: ast.AST) -> Iterator[tuple[str, int]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, 0
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            yield module, node.level
            for alias in node.names:  # ``from pkg import mod`` may name a module
                yield f"{module}.{alias.name}" if module else alias.name, node.level


def _module_files(name: str, bases: list[Path], root: Path) -> list[Path]:
    """The files of module ``name`` (and of its packages' ``__init__``) under a base."""
    parts = [p for p in name.split(".") if p]
    for base in bases:
        files = []
        folder = base
        for i, part in enumerate(parts):
            package = folder / part
            module = folder / f"{part}.py"
            if (package / "__init__.py").is_file():
                files.append(package / "__init__.py")
                folder = package
            elif module.is_file() and i == len(parts) - 1:
                files.append(module)
            elif package.is_dir() and i < len(parts) - 1:
                folder = package  # a namespace package
            else:
                break
        inside = [f.resolve() for f in files if f.resolve().is_relative_to(root)]
        if inside:
            return inside
    return []


def glob_depends(patterns: Sequence[str], base: Path, root: Path) -> tuple[list[Path], list[str]]:
    """The files ``:depends:`` globs name (relative to ``base``; ``**`` recurses) inside
    ``root``, and the patterns that name a file outside it (by ``..``, an absolute path or
    a link): a dependency the cache key cannot vouch for, which the caller refuses."""
    real = real_root(root)
    found: set[Path] = set()
    outside: list[str] = []
    for pattern in patterns:
        for name in glob.glob(os.path.join(glob.escape(os.fspath(base)), pattern), recursive=True):
            if not inside(name, real):  # by ``..``, an absolute path or a link
                if pattern not in outside:
                    outside.append(pattern)
            elif refusal(name, real) is None:  # a file (not a folder, a FIFO, a dead link)
                found.add(Path(name).resolve())
    return sorted(found), outside


_FACTS = r"""
import importlib.metadata, importlib.util, json, os, platform, sys
facts = {"python": sys.version, "implementation": platform.python_implementation(),
         "torch": None}
try:
    spec = importlib.util.find_spec("torch")
except (ImportError, ValueError):
    spec = None
if spec is not None and spec.submodule_search_locations:
    torch = {"version": None, "git_version": None, "build": None}
    try:
        torch["version"] = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        pass
    for folder in spec.submodule_search_locations:
        path = os.path.join(folder, "version.py")
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                torch["build"] = f.read()
            break
    facts["torch"] = torch
print(json.dumps(facts))
"""


@dataclass(frozen=True)
class Interpreter:
    """The Python that runs captures, and the torch it would import (never imported here:
    ``find_spec``, the installed version and ``torch/version.py``, which names the build)."""

    python: str  # sys.version of that interpreter
    torch_version: str | None  # None: no torch importable
    torch_git: str | None
    torch_build_sha: str | None  # of torch/version.py: version, commit, CUDA/ROCm/XPU

    @property
    def has_torch(self) -> bool:
        return self.torch_version is not None or self.torch_build_sha is not None


def interpreter_facts(
    python: str = sys.executable,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> Interpreter:
    """What :class:`Interpreter` says of ``python`` in ``env`` and ``cwd``, where the
    capture runs (a small subprocess: the page's ``PYTHONPATH`` may name another torch than
    the docs' own process sees)."""
    try:
        done = subprocess.run(
            [python, "-c", _FACTS],
            capture_output=True,
            text=True,
            timeout=60,
            env=dict(env) if env is not None else None,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
        )
        facts = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError, RecursionError):
        return Interpreter(sys.version, None, None, None)
    if not isinstance(facts, dict):  # something else printed on that Python's stdout
        return Interpreter(sys.version, None, None, None)
    torch = facts.get("torch") or None
    if not isinstance(torch, dict):
        return Interpreter(str(facts.get("python")), None, None, None)
    build = torch.get("build")
    build = build if isinstance(build, str) else ""
    git = re.search(r"""^git_version\s*=\s*['"]([^'"]*)['"]""", build, re.M)
    version = torch.get("version")
    if version is None:
        found = re.search(r"""^__version__\s*=\s*['"]([^'"]*)['"]""", build, re.M)
        version = found.group(1) if found else "unknown"
    return Interpreter(
        python=str(facts.get("python")),
        torch_version=str(version),
        torch_git=git.group(1) if git else None,
        torch_build_sha=hashlib.sha256(build.encode()).hexdigest() if build else None,
    )


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError:
        return "unreadable"
    return h.hexdigest()


@dataclass(frozen=True)
class CaptureSpec:
    """One capture: what runs, where, with what; ``root`` bounds every file it names."""

    script: Path
    root: Path  # the source folder: relative names in the key, and where scripts may be
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path | None = None  # default: the script's folder
    timeout: float = 600.0
    depends: tuple[Path, ...] = ()  # every file whose bytes count (imports, or :depends:)
    python: str = sys.executable
    runtime: bool = False  # profile what ran too (``run --runtime``): ``trace/runtime/``
    steps: tuple[int, int] | None = None  # with runtime: optimizer steps FIRST to LAST

    @property
    def workdir(self) -> Path:
        return self.cwd if self.cwd is not None else self.script.parent

    def key(self, interpreter: Interpreter) -> str:
        """The cache key: a sha256 of everything that decides what the program logs."""
        material = {
            "source": self.source_key(),
            "python": interpreter.python,
            "torch": [
                interpreter.torch_version,
                interpreter.torch_git,
                interpreter.torch_build_sha,
            ],
        }
        text = json.dumps(material, sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def source_key(self) -> str:
        """The part of the key that is the project's own: script, dependencies, arguments,
        environment, folder (not the Python or torch that ran it)."""

        def name(path: Path) -> str:
            try:
                return path.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                return os.fspath(path)

        material = {
            "format": CACHE_FORMAT,
            "script": [name(self.script), file_digest(self.script)],
            "depends": sorted([name(p), file_digest(p)] for p in self.depends),
            "args": list(self.args),
            "env": sorted(self.env),
            "cwd": name(self.workdir),
        }
        if self.runtime:  # only then: the keys of captures without it stay as they were
            material["runtime"] = list(self.steps) if self.steps else True
        text = json.dumps(material, sort_keys=True, ensure_ascii=True)
        return hashlib.sha256(text.encode()).hexdigest()


# -- running --------------------------------------------------------------------------------


@dataclass
class CaptureRecord:
    """What a cache entry says of its run (``record.json`` beside the trace)."""

    key: str
    script: str  # relative to the source folder
    started: float  # seconds since the epoch
    duration: float  # seconds
    status: str  # OK, FAILED or TIMED_OUT
    returncode: int | None
    stderr_tail: str
    torch_version: str | None = None
    source_key: str = ""  # CaptureSpec.source_key(): the same code, whatever ran it
    python: str = ""
    format: int = CACHE_FORMAT

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, ensure_ascii=True) + "\n"

    @classmethod
    def from_file(cls, path: Path) -> CaptureRecord | None:
        """The record at ``path``; None when there is none, or it does not parse, is of
        another format or holds a value of another type than this class has (a damaged or
        hostile entry is a cache miss, never a failed build)."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return None
        return cls.from_json(data)

    @classmethod
    def from_json(cls, data: object) -> CaptureRecord | None:
        """A record from its decoded JSON, every field checked (see :meth:`from_file`)."""
        if not isinstance(data, dict) or not set(_REQUIRED) <= set(data) <= set(_FIELD_CHECKS):
            return None
        if not all(_FIELD_CHECKS[name](value) for name, value in data.items()):
            return None
        if data.get("format", CACHE_FORMAT) != CACHE_FORMAT:
            return None
        return cls(**data)


def _text(value: object) -> bool:
    return isinstance(value, str)


def _optional_text(value: object) -> bool:
    return value is None or isinstance(value, str)


def _seconds(value: object) -> bool:
    """A time a record can hold: a finite number of seconds from 0 to year 9999 (what
    ``time.gmtime`` and a page's ``{:.1f}`` take)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and 0 <= value <= MAX_RECORD_SECONDS
    )


def _exit_status(value: object) -> bool:
    return value is None or (
        isinstance(value, int) and not isinstance(value, bool) and -(2**31) <= value < 2**32
    )


def _format(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: Seconds a record's times may reach: the last second of year 9999.
MAX_RECORD_SECONDS = 253_402_300_799
#: Each field of a record and the test its JSON value must pass.
_FIELD_CHECKS = {
    "key": _text,
    "script": _text,
    "started": _seconds,
    "duration": _seconds,
    "status": lambda v: v in (OK, FAILED, TIMED_OUT),
    "returncode": _exit_status,
    "stderr_tail": _text,
    "torch_version": _optional_text,
    "source_key": _text,
    "python": _text,
    "format": _format,
}
#: The fields without a default: a record lacking one is no record.
_REQUIRED = ("key", "script", "started", "duration", "status", "returncode", "stderr_tail")


def run_program(
    argv: Sequence[str],
    trace_dir: Path,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    stdout: int | None = subprocess.DEVNULL,
    stderr_path: Path | None = None,
    own_session: bool = True,
    progress: Callable[[float], None] | None = None,
) -> tuple[int | None, bool]:
    """Run ``argv`` with ``TORCH_TRACE=trace_dir``: (exit status, timed out).

    stdout and stderr go where they are told (inherited: ``None``); a program past its
    timeout is killed with everything it started (``own_session``: its own process group).
    Without ``own_session`` it shares the terminal: Ctrl+C reaches it as in a shell, and
    its exit status is returned once it has ended (its partial trace has a report too).
    ``progress`` is told the seconds elapsed every :data:`PROGRESS_SECONDS` while it runs
    (a long capture says it is alive, as Sphinx's own status lines do)."""
    trace_dir.mkdir(parents=True, exist_ok=True)
    stderr_file = open(stderr_path, "wb") if stderr_path is not None else None  # noqa: SIM115
    try:
        process = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=capture_environment(trace_dir, env),
            stdin=subprocess.DEVNULL if stderr_path is not None else None,
            stdout=stdout,
            stderr=stderr_file,
            start_new_session=own_session and os.name == "posix",
        )
        try:
            return _wait(process, timeout, progress), False
        except subprocess.TimeoutExpired:
            _kill(process, own_session)
            return None, True
        except KeyboardInterrupt:
            if own_session:
                _kill(process, own_session)
                raise
            try:  # the program got the same Ctrl+C: let it end as it does
                return process.wait(), False
            except KeyboardInterrupt:
                _kill(process, own_session)
                raise
    finally:
        if stderr_file is not None:
            stderr_file.close()


#: Seconds between two progress calls while a program runs.
PROGRESS_SECONDS = 5.0


def _wait(
    process: subprocess.Popen[bytes],
    timeout: float | None,
    progress: Callable[[float], None] | None,
) -> int:
    """``process.wait(timeout)``, calling ``progress(elapsed)`` every few seconds."""
    if progress is None:
        return process.wait(timeout=timeout)
    start = time.monotonic()
    while True:
        elapsed = time.monotonic() - start
        step = PROGRESS_SECONDS if timeout is None else min(PROGRESS_SECONDS, timeout - elapsed)
        try:
            return process.wait(timeout=max(step, 0.0))
        except subprocess.TimeoutExpired:
            elapsed = time.monotonic() - start
            if timeout is not None and elapsed >= timeout:
                raise
            progress(elapsed)


def _kill(process: subprocess.Popen[bytes], group: bool = True) -> None:
    if group and os.name == "posix":
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
    process.kill()
    process.wait()


def tail(data: bytes) -> str:
    """The end of a program's stderr: its last lines, decoded leniently (still raw text:
    whoever shows it escapes it)."""
    text = data[-STDERR_TAIL_BYTES:].decode("utf-8", errors="replace")
    return "\n".join(text.splitlines()[-STDERR_TAIL_LINES:])


@dataclass
class Capture:
    """A cache entry, found or made: its trace folder and its record."""

    folder: Path
    record: CaptureRecord
    cached: bool  # found in the cache (not run by this call)
    refused: str = ""  # run again in place of an entry refused unread: why it was

    @property
    def trace_dir(self) -> Path:
        return self.folder / TRACE

    def has_logs(self) -> bool:
        try:
            files = list_folder(self.trace_dir).files
        except OSError:
            return False
        return any(f.name.startswith("dedicated_log_torch_trace_") for f in files)


def _refused(name: str, why: str) -> str:
    """What a warning says of an entry refused: its name escaped (a file name is input)."""
    return f"{quote(name, 200)} is {why}"


@dataclass
class CaptureCache:
    """Entries ``<folder>/<key>/{trace/, record.json}``; locks ``<folder>/.locks/<key>.lock``."""

    folder: Path
    stale_after: float = 3600.0  # a lock file (no flock) older than this is abandoned
    _interpreters: dict[tuple[str, tuple[tuple[str, str], ...], Path], Interpreter] = field(
        default_factory=dict
    )
    #: Entries whose record.json a lookup found but could not read (damaged, hostile):
    #: misses, made again by the next capture of their key.
    damaged: set[str] = field(default_factory=set)
    #: Entries a lookup refused, by key, with why (:meth:`refusal`): nothing of them is
    #: read; misses too, replaced by the next capture of their key.
    refused: dict[str, str] = field(default_factory=dict)

    def interpreter(self, spec: CaptureSpec) -> Interpreter:
        """The facts of the capture's interpreter in its environment (one look per build)."""
        facts_key = (spec.python, spec.env, spec.workdir)
        found = self._interpreters.get(facts_key)
        if found is None:
            env = dict(os.environ)
            env.update(dict(spec.env))
            found = self._interpreters[facts_key] = interpreter_facts(
                spec.python, env, spec.workdir
            )
        return found

    def refusal(self, key: str) -> str | None:
        """Why the entry of ``key`` must not be read, None when it may (or is not there).

        A cache folder may come from elsewhere (CI's, restored on a docs host): an entry
        that is a link out of the cache, or whose ``record.json``, ``trace/`` or any file in
        it is a link out of the entry, a FIFO or a device, would publish what is not its
        capture (:mod:`..folders` decides, as for every folder the user named)."""
        entry = self.folder / key
        if not os.path.lexists(entry):
            return None
        why = refusal(entry, real_root(self.folder))
        if why:
            return _refused(key, why)
        if why is None:
            return None  # a file, not an entry: a miss
        root = real_root(entry)
        for name in (RECORD, TRACE):
            why = refusal(entry / name, root) if os.path.lexists(entry / name) else None
            if why:
                return _refused(f"{key}/{name}", why)
        if os.path.isdir(entry / TRACE):
            _, refused = walk_files(entry / TRACE, MAX_ENTRY_FILES, root)
            if refused:
                path, why = refused[0]
                return _refused(Path(key, os.path.relpath(path, entry)).as_posix(), why)
        return None

    def lookup(self, key: str) -> Capture | None:
        entry = self.folder / key
        why = self.refusal(key)
        if why is not None:
            self.refused[key] = why
            return None
        record = CaptureRecord.from_file(entry / RECORD)
        if record is None and (entry / RECORD).is_file():
            self.damaged.add(key)
        if record is None or record.key != key or not (entry / TRACE).is_dir():
            return None
        try:
            os.utime(entry / RECORD)  # used now: see prune()
        except OSError:
            pass
        return Capture(entry, record, cached=True)

    def prune(self, max_age_days: float = UNUSED_DAYS) -> list[str]:
        """Remove the entries no build has used for ``max_age_days`` (a record's time is
        when it was last made or found); returns their keys.  An entry is moved aside
        before it is removed, so a build reading it at that moment finds all or nothing."""
        cutoff = time.time() - max_age_days * 86400
        removed = []
        try:
            entries = [e for e in self.folder.iterdir() if not e.name.startswith(".")]
        except OSError:
            return []
        for entry in entries:
            try:
                if not entry.is_dir() or (entry / RECORD).stat().st_mtime >= cutoff:
                    continue
                aside = Path(tempfile.mkdtemp(prefix=f".old-{entry.name}-", dir=self.folder))
                os.replace(entry, aside / "entry")
            except OSError:
                continue
            shutil.rmtree(aside, ignore_errors=True)
            removed.append(entry.name)
        return removed

    def lookup_source(self, source_key: str) -> Capture | None:
        """The newest entry of the same code made by any Python and torch: what a docs host
        without torch (``never``) can still publish of a capture CI made."""
        found: list[Capture] = []
        try:
            entries = [e for e in self.folder.iterdir() if not e.name.startswith(".")]
        except OSError:
            return None
        for entry in entries:
            capture = self.lookup(entry.name)
            if capture is not None and capture.record.source_key == source_key:
                found.append(capture)
        return max(found, key=lambda c: c.record.started, default=None)

    def get_or_run(
        self,
        spec: CaptureSpec,
        key: str,
        *,
        rerun: bool = False,
        progress: Callable[[float], None] | None = None,
    ) -> Capture:
        """The entry of ``key``: found, else (or with ``rerun``) made by running ``spec``
        (``progress``: see :func:`run_program`).  One process at a time runs a key; the
        others wait for it and find its entry."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if not rerun:
            found = self.lookup(key)
            if found is not None:
                return found
        with self._lock(key, spec.timeout):
            if not rerun:
                found = self.lookup(key)  # made while we waited
                if found is not None:
                    return found
            capture = self._run(spec, key, progress)
            capture.refused = self.refused.pop(key, "")  # replaced: no longer in the cache
            return capture

    def _run(
        self, spec: CaptureSpec, key: str, progress: Callable[[float], None] | None = None
    ) -> Capture:
        # under this key's lock, a temporary folder of this key is a dead process's
        for leftover in self.folder.glob(f".*-{key}-*"):
            shutil.rmtree(leftover, ignore_errors=True)
        work = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=self.folder))
        try:
            started = time.time()
            clock = time.monotonic()
            env = dict(spec.env)
            if spec.runtime:
                profiled = runtime_environment(work / TRACE / RUNTIME_DIR, spec.steps)
                if "PYTHONPATH" in env:  # the page's own path, after the bootstrap
                    profiled["PYTHONPATH"] = os.pathsep.join([str(BOOT_DIR), env["PYTHONPATH"]])
                env.update(profiled)
            returncode, timed_out = run_program(
                [spec.python, os.fspath(spec.script), *spec.args],
                work / TRACE,
                cwd=spec.workdir,
                env=env,
                timeout=spec.timeout,
                stderr_path=work / "stderr",
                progress=progress,
            )
            duration = time.monotonic() - clock
            try:
                stderr = (work / "stderr").read_bytes()
            except OSError:
                stderr = b""
            (work / "stderr").unlink(missing_ok=True)
            status = TIMED_OUT if timed_out else (OK if returncode == 0 else FAILED)
            try:
                script = spec.script.resolve().relative_to(spec.root.resolve()).as_posix()
            except ValueError:
                script = os.fspath(spec.script)
            record = CaptureRecord(
                key=key,
                script=script,
                started=started,
                duration=round(duration, 3),
                status=status,
                returncode=returncode,
                stderr_tail=tail(stderr),
                torch_version=self.interpreter(spec).torch_version,
                source_key=spec.source_key(),
                python=self.interpreter(spec).python,
            )
            (work / RECORD).write_text(record.to_json(), encoding="utf-8")
            entry = self.folder / key
            self._publish(work, entry)
            return Capture(entry, record, cached=False)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _publish(self, work: Path, entry: Path) -> None:
        """Put ``work`` in place of ``entry`` whole (a reader sees the old entry or the new,
        never a mix): an old entry is moved aside first, then removed."""
        old: Path | None = None
        if os.path.lexists(entry):  # a link too (moved aside, never followed)
            old = Path(tempfile.mkdtemp(prefix=f".old-{entry.name}-", dir=self.folder))
            os.replace(entry, old / "entry")
        os.replace(work, entry)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    @contextmanager
    def _lock(self, key: str, timeout: float) -> Iterator[None]:
        """One runner per key across processes: ``flock`` where there is one (released by
        the system if the holder dies), else a lock file, taken over when its holder is
        gone or it is older than the capture could take."""
        (self.folder / LOCKS).mkdir(exist_ok=True)
        path = self.folder / LOCKS / f"{key}.lock"
        try:
            import fcntl
        except ImportError:  # Windows
            fcntl = None  # type: ignore[assignment]
        if fcntl is not None:
            with open(path, "a+b") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX)
                try:
                    yield
                finally:
                    fcntl.flock(handle, fcntl.LOCK_UN)
            return
        stale = max(self.stale_after, timeout + 60)
        while True:
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    age = time.time() - path.stat().st_mtime
                except OSError:
                    continue
                if age > stale:
                    path.unlink(missing_ok=True)
                    continue
                time.sleep(0.2)
                continue
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            break
        try:
            yield
        finally:
            path.unlink(missing_ok=True)
