"""``torchtrace-capture``: a report of the project's current code, captured at build time.

At ``builder-inited`` the script runs (or its cached capture is found: the cache is keyed
by content, :mod:`...trace.inputs.capture`) and the trace it wrote becomes the input of the trace
kind, exactly as a ``.. torchtrace::`` of that folder: same pages, same objects.  Only
scripts inside the source folder run; nothing of a trace is ever executed.  A script that
fails or times out is one ``torchtrace.capture`` warning at the directive, and the trace
it wrote so far is still shown; one that imports torch where no torch is installed is
not run: the directive says so in a note (a docs host without torch is not an error).
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from ...render.paths import PathRewriter
from ...site import blocks as b
from ...site.blocks import Page
from ...site.characters import console_text
from ...trace.diagnostics import quote
from ...trace.inputs.capture import (
    FAILED,
    TIMED_OUT,
    Capture,
    CaptureCache,
    CaptureSpec,
    glob_depends,
    local_imports,
)
from ...trace.runtime import parse_steps
from ...trace.secrets import mask_secrets
from ..built import Generated, Problem
from ..cache_dirs import CAPTURES
from ..config import setting, settings_of
from ..doctree import DoctreeBuilder
from ..options import checked_options
from ..project_root import page_rules
from ..scan import DirectiveRequest, resolve_argument
from ..warnings import Note, WarningType
from .base import Context, request_key
from .captures_table import CaptureRow, Captures, CapturesTable, note_tables
from .family import Family, Options
from .trace import TraceHandler
from .trace_options import DIRECTIVE as TRACE_DIRECTIVE
from .trace_options import OPTION_SPEC, TraceOptions, from_directive

DIRECTIVE = "torchtrace-capture"

#: The family's own warning subtype (``Family.warnings``).
CAPTURE = WarningType(
    "capture",
    "a torchtrace-capture script failed or timed out (the end of its stderr is "
    "quoted; the trace it wrote so far is shown), is not a file inside the source folder, or "
    "has no cached capture while torchtrace_capture = 'never'",
)


def args_option(value: str | None) -> tuple[str, ...]:
    """``:args:``: the script's arguments, split as a shell would (quotes group, nothing
    is expanded)."""
    try:
        return tuple(shlex.split(value or ""))
    except ValueError as err:
        raise ValueError(f"cannot split the arguments: {err}") from None


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def env_option(value: str | None) -> tuple[tuple[str, str], ...]:
    """``:env: NAME=value NAME2="two words"``: variables set for the script."""
    pairs = []
    for item in args_option(value):
        name, sep, text = item.partition("=")
        if not sep or not _ENV_NAME.match(name):
            raise ValueError(f"expected NAME=value items, got {item!r}")
        pairs.append((name, text))
    if not pairs:
        raise ValueError("expected NAME=value items")
    return tuple(pairs)


def timeout_option(value: str | None) -> float:
    """Seconds a capture may run (a number above 0)."""
    try:
        seconds = float((value or "").strip())
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if not seconds > 0 or seconds == float("inf"):
        raise ValueError("expected a number of seconds above 0")
    return seconds


def depends_option(value: str | None) -> tuple[str, ...]:
    """``:depends: model/*.py, data/config.json``: globs of the files whose bytes count."""
    globs = tuple(p for p in re.split(r"[,\s]+", value or "") if p)
    if not globs:
        raise ValueError("expected one or more globs, relative to the page")
    return globs


def runtime_option(value: str | None) -> tuple[int, int] | None:
    """``:runtime:`` alone (the whole run) or ``:runtime: FIRST:LAST`` (optimizer steps)."""
    text = (value or "").strip()
    if not text:
        return None
    return parse_steps(text)


def folder_option(value: str | None) -> str:
    text = (value or "").strip()
    if not text:
        raise ValueError("expected a folder, relative to the page")
    return text


#: The ``torchtrace-capture`` directive's options: the report's (as ``torchtrace``'s), and
#: how the script runs.
CAPTURE_OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {
    **{k: OPTION_SPEC[k] for k in ("name", "latest", "ranks", "sections", "no-source")},
    "args": args_option,
    "env": env_option,
    "timeout": timeout_option,
    "depends": depends_option,
    "cwd": folder_option,
    "runtime": runtime_option,
}


@dataclass(frozen=True)
class CaptureOptions:
    """A ``torchtrace-capture`` directive's options, checked."""

    trace: TraceOptions
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None  # None: torchtrace_capture_timeout
    depends: tuple[str, ...] | None = None  # None: the local modules the script imports
    cwd: str | None = None  # None: the script's folder
    runtime: bool = False  # profile what ran (torch.profiler), as run --runtime
    steps: tuple[int, int] | None = None  # with runtime: a window of optimizer steps


def parse_capture_options(raw: Mapping[str, str | None]) -> CaptureOptions:
    """``torchtrace-capture`` options as the scan found them; ValueError names the bad one."""
    values = checked_options(raw, CAPTURE_OPTION_SPEC)
    return CaptureOptions(
        trace=from_directive(values),
        args=values.get("args") or (),
        env=values.get("env") or (),
        timeout=values.get("timeout"),
        depends=values.get("depends"),
        cwd=values.get("cwd"),
        runtime="runtime" in values,
        steps=values.get("runtime"),
    )


#: ``torchtrace_capture``: use the cache, else run; always run; only use the cache.
CAPTURE_MODES = ("auto", "always", "never")


def _capture_mode(value: Any) -> str:
    if value not in CAPTURE_MODES:
        raise ValueError(f"must be one of {', '.join(map(repr, CAPTURE_MODES))}")
    return str(value)


def _folder(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a folder (a path, relative to conf.py's folder) or None")
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
        raise ValueError("must be a number of seconds above 0")
    return float(value)


@dataclass(frozen=True)
class CaptureSettings:
    """The family's configuration values (``torchtrace_<field>``)."""

    # "auto" runs a script when no cached capture matches its content, "always" runs every
    # one, "never" uses the cache only (a warning when none matches: a docs host without
    # torch can publish what CI captured).
    capture: str = setting("auto", _capture_mode)
    # Where captures are kept (a folder CI can persist, relative to conf.py's folder);
    # None: ``torchtrace-captures`` in the doctree folder.
    capture_cache: str | None = setting(None, _folder)
    # Seconds a capture may run before it is stopped (a directive's :timeout: overrides).
    capture_timeout: float = setting(600.0, _seconds)


logger = logging.getLogger(__name__)


def _status(line: str) -> None:
    """A status line of the build (what Sphinx's ``-q`` silences), the script's name escaped."""
    logger.info(console_text(f"torchtrace: {line}"))


#: stderr lines a warning quotes (the page shows the whole tail the record keeps).
WARNED_LINES = 3


@dataclass
class CapturedTrace:
    """A capture's report: the trace kind's pages, and at the directive, how it was made."""

    script: str
    capture: Capture | None  # None: not run (``reason`` says why)
    inner: Generated | None  # the trace kind's, when the capture wrote a log
    reason: str = ""
    capture_notes: list[Note] = field(default_factory=list)

    @property
    def rewrite(self) -> Callable[[str], str]:
        # no trace: its stderr still hides what looks secret (a token in a traceback)
        return self.inner.rewrite if self.inner is not None else mask_secrets

    @property
    def notes(self) -> list[Note]:
        return self.capture_notes + (self.inner.notes if self.inner is not None else [])

    @property
    def logs(self) -> list[Path]:
        return self.inner.logs if self.inner is not None else []

    def page(self, docname: str) -> Page:
        if self.inner is None:
            raise KeyError(docname)
        return self.inner.page(docname)

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        if self.inner is None:
            raise KeyError(docname)
        return self.inner.page_nodes(directive, docname)

    def meanings(self) -> dict[str, str]:
        return self.inner.meanings() if self.inner is not None else {}

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        """How the report was made (run now, or from the cache, and how it ended), then the
        trace's own summary."""
        # the trace's path rewrites apply to its stderr too (home folders, site-packages)
        builder = DoctreeBuilder(directive.env, directive.state.document, self.rewrite)
        out = builder.blocks(self.blocks())
        if self.inner is not None:
            out += self.inner.inline_nodes(directive)
        return out

    def blocks(self) -> list[b.Block]:
        if self.capture is None:
            return [
                b.Admonition(
                    "note",
                    [
                        b.Paragraph(
                            ["Not captured in this build: ", b.Code(self.script), " ", self.reason]
                        )
                    ],
                )
            ]
        record = self.capture.record
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(record.started))
        made_by = f" with torch {record.torch_version}" if record.torch_version else ""
        how = (
            f"from the cache (captured {when}{made_by}, in {record.duration:.1f} s)"
            if self.capture.cached
            else f"at this build ({record.duration:.1f} s)"
        )
        said: list[b.Block] = [
            b.Paragraph(
                ["Captured from ", b.Code(self.script), f" {how}: {status_text(self.capture)}."]
            )
        ]
        if record.status != "ok":
            shown: list[b.Block] = (
                [b.Paragraph(["The end of its stderr:"])] if record.stderr_tail else []
            )
            if record.stderr_tail:
                shown.append(b.CodeBlock(record.stderr_tail))
            said.append(b.Admonition("warning", shown or [b.Paragraph(["No stderr."])]))
        if self.inner is None:
            said.append(b.Paragraph(["It wrote no trace log."]))
        return said


def status_text(capture: Capture) -> str:
    """``ok``, ``failed (exit status 1)``, ``timed out``."""
    record = capture.record
    if record.status == TIMED_OUT:
        return "timed out (stopped)"
    if record.status == FAILED:
        return f"failed (exit status {record.returncode})"
    return "ok"


class CaptureHandler:
    """A script run under ``TORCH_TRACE`` (its report is the trace kind's)."""

    def accepts(self, path: str, options: CaptureOptions) -> bool:
        return True

    def generate(
        self, context: Context, request: DirectiveRequest, options: CaptureOptions
    ) -> list[DirectiveRequest]:
        """Check what the directive runs, find its capture (cached, or run now; none where
        ``never`` finds none or torch is missing), then report it."""
        script = self._script(context, request, options)
        if script is None:
            return []
        config = settings_of(context.app.config, CaptureSettings)
        spec = _spec(script, context.srcdir.resolve(), options, config)
        cache = self._cache(context)
        interpreter = cache.interpreter(spec)
        capture_key = spec.key(interpreter)
        shown = " ".join(request.argument.split())
        capture: Capture | None
        if config.capture == "never":
            capture = _cached(cache, spec, capture_key)
            if capture is None:
                self._fail(
                    context,
                    request,
                    f"no cached capture of {shown} matches its "
                    "script, dependencies, arguments and environment "
                    f"(torchtrace_capture = 'never'){_damaged(cache)}",
                    row="missing",
                )
                return []
        elif not interpreter.has_torch and _imports_torch([script.path, *script.depends]):
            capture = _cached(cache, spec, capture_key)
            if capture is None:
                self._skip(context, request, script, _refused_note(cache, capture_key, shown))
                return []
        else:
            capture = _run(context, cache, spec, capture_key, script.listed, config.capture)
        refused = _refused_note(cache, capture_key, shown, capture.refused)
        return self._report(context, request, options, shown, script.listed, capture, refused)

    def _script(
        self, context: Context, request: DirectiveRequest, options: CaptureOptions
    ) -> _Script | None:
        """The script, its folder and the files that decide its capture, each inside the
        source folder; None (the directive's warning said why) when one is not."""
        srcdir = context.srcdir.resolve()
        script = Path(request.path)
        page_dir = context.source_dir(request)
        if not _inside(script, srcdir) or not script.is_file():
            self._fail(
                context,
                request,
                f"no script at {request.argument!r} inside the "
                "source folder: only scripts of the docs' sources are run",
            )
            return None
        cwd = None
        if options.cwd is not None:
            cwd = Path(resolve_argument(options.cwd, page_dir, context.srcdir))
            if not _inside(cwd, srcdir) or not cwd.is_dir():
                self._fail(
                    context, request, f":cwd: {options.cwd!r} is no folder inside the source folder"
                )
                return None
        # the table names scripts from the source folder, whichever page runs them
        listed = script.resolve().relative_to(srcdir).as_posix()
        if options.depends is None:
            return _Script(script, cwd, local_imports(script, srcdir), listed)
        depends, outside = glob_depends(options.depends, page_dir, srcdir)
        if outside:
            self._fail(
                context,
                request,
                f":depends: {quote(outside[0])} names files "
                "outside the source folder: only files of the docs' sources "
                "decide a capture, so nothing runs",
            )
            return None
        return _Script(script, cwd, list(depends), listed)

    def _skip(
        self,
        context: Context,
        request: DirectiveRequest,
        script: _Script,
        refused: list[Note],
    ) -> None:
        """A script that imports torch where the build's Python has none: not run, and the
        directive says so in a note (a docs host without torch is not an error)."""
        shown = " ".join(request.argument.split())
        reason = (
            "imports torch, which the Python building these docs cannot "
            "import; with torch installed, this build would show its report."
        )
        self._register(context, request, CapturedTrace(shown, None, None, reason, refused))
        context.built.part(Captures).rows.append(
            CaptureRow(request.docname, script.listed, "skipped", None, "torch not installed")
        )

    def _report(
        self,
        context: Context,
        request: DirectiveRequest,
        options: CaptureOptions,
        shown: str,
        listed: str,
        capture: Capture,
        refused: Sequence[Note] = (),
    ) -> list[DirectiveRequest]:
        """The capture's row in the table, its warnings, and its trace read by the trace
        kind as the directive's report (the problem, when that cannot be read)."""
        record = capture.record
        # after how it ended: a failure's warning names that first
        notes = [*_ending_notes(context, capture, shown), *refused]
        context.built.part(Captures).rows.append(
            CaptureRow(
                request.docname,
                listed,
                "cached" if capture.cached else "ran",
                record.duration,
                status_text(capture),
            )
        )
        inner: Generated | None = None
        more: list[DirectiveRequest] = []
        if capture.has_logs():
            sub = _trace_request(request, capture)
            more = TraceHandler().generate(context, sub, options.trace)
            trace_key = request_key(sub, TRACE_DIRECTIVE)
            inner = context.built.directives.pop(trace_key, None)
            problem = context.built.problems.pop(trace_key, None)
            if inner is None:
                if problem is not None:
                    if notes:  # one warning: how the capture ended, and why no report
                        problem = Problem(
                            f"{notes[0][1]}; its trace cannot be shown: {problem.message}",
                            CAPTURE,
                            problem.logs,
                        )
                    context.built.problems[request_key(request, DIRECTIVE)] = problem
                return more
        self._register(context, request, CapturedTrace(shown, capture, inner, capture_notes=notes))
        return more

    def _register(self, context: Context, request: DirectiveRequest, made: CapturedTrace) -> None:
        """What the directive stands for; its page is read again when the capture's
        outcome changes too (run now, from the cache, skipped), since it says which."""
        context.register(request, DIRECTIVE, made)
        outcome = "skipped" if made.capture is None else f"{made.capture.cached}"
        before = context.built.digests.get(request.docname, "")
        context.built.digests[request.docname] = hashlib.sha256(
            (before + outcome).encode()
        ).hexdigest()

    def _fail(
        self, context: Context, request: DirectiveRequest, message: str, row: str = "not run"
    ) -> None:
        shown = " ".join(request.argument.split())
        context.built.part(Captures).rows.append(
            CaptureRow(request.docname, shown, row, None, message)
        )
        context.fail(request, DIRECTIVE, message, CAPTURE)

    def _cache(self, context: Context) -> CaptureCache:
        folder = settings_of(context.app.config, CaptureSettings).capture_cache
        app = context.app
        path = Path(app.confdir, folder) if folder is not None else context.caches / CAPTURES
        caches: dict[Path, CaptureCache] = context.shared.setdefault("capture-caches", {})
        cache = caches.get(path)
        if cache is None:
            cache = caches[path] = CaptureCache(path)
            # once a build, after every lookup: entries no build used for a month
            context.finish.append(cache.prune)
        return cache


@dataclass(frozen=True)
class _Script:
    """What a directive runs, checked: every path inside the source folder."""

    path: Path
    cwd: Path | None  # None: the script's folder
    depends: list[Path]  # the files whose bytes decide its capture
    listed: str  # as the captures' table names it (from the source folder)


def _spec(
    script: _Script, srcdir: Path, options: CaptureOptions, config: CaptureSettings
) -> CaptureSpec:
    """What decides a capture: the script, its arguments, environment and files."""
    return CaptureSpec(
        script=script.path.resolve(),
        root=srcdir,
        args=options.args,
        env=options.env,
        cwd=script.cwd.resolve() if script.cwd is not None else None,
        timeout=options.timeout or config.capture_timeout,
        depends=tuple(script.depends),
        runtime=options.runtime,
        steps=options.steps,
    )


def _cached(cache: CaptureCache, spec: CaptureSpec, capture_key: str) -> Capture | None:
    """The cached capture of this very run, else of the same code captured by another
    Python or torch (CI's, on a docs host without torch): the page says which torch."""
    return cache.lookup(capture_key) or cache.lookup_source(spec.source_key())


def _run(
    context: Context,
    cache: CaptureCache,
    spec: CaptureSpec,
    capture_key: str,
    listed: str,
    mode: str,
) -> Capture:
    """The capture, from the cache or run now (``always``: run once a build), saying in
    the build's status lines what runs and how it ended."""
    ran: set[str] = context.shared.setdefault("captures-ran", set())
    rerun = mode == "always" and capture_key not in ran
    if rerun or cache.lookup(capture_key) is None:
        _status(f"capturing {listed} (timeout {spec.timeout:g} s)")

    def running(seconds: float) -> None:
        _status(f"capturing {listed}: running for {seconds:.0f} s")

    capture = cache.get_or_run(spec, capture_key, rerun=rerun, progress=running)
    if not capture.cached:
        ran.add(capture_key)
        _status(f"captured {listed}: {capture.record.status} in {capture.record.duration:.1f} s")
    return capture


def _ending_notes(context: Context, capture: Capture, shown: str) -> list[Note]:
    """A warning when the capture failed, timed out or wrote no trace log."""
    record = capture.record
    if record.status != "ok":
        # masked and its paths rewritten whole, as its page shows it (a key's lines
        # are masked as one), before its last lines are joined into the warning
        tail = PathRewriter(page_rules(context.config, context.srcdir))(record.stderr_tail)
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        end = mask_secrets(" | ".join(lines[-WARNED_LINES:])) or "(nothing on stderr)"
        kept = (
            "the trace it wrote so far is shown" if capture.has_logs() else "it wrote no trace log"
        )
        cached = " (cached)" if capture.cached else ""
        return [
            (
                CAPTURE,
                f"capture of {shown} {status_text(capture)}{cached} "
                f"after {record.duration:.1f} s; {kept}; its stderr ends: {end}",
            )
        ]
    if not capture.has_logs():
        return [
            (
                CAPTURE,
                f"capture of {shown} ran but wrote no trace log (does it call torch.compile?)",
            )
        ]
    return []


def _trace_request(request: DirectiveRequest, capture: Capture) -> DirectiveRequest:
    """The capture's trace as a ``torchtrace`` directive of the same page and line: the
    report's options, named after the script unless ``:name:`` says otherwise."""
    raw = dict(request.raw_options)
    for option in ("args", "env", "timeout", "depends", "cwd", "runtime"):
        raw.pop(option, None)
    raw.setdefault("name", Path(request.path).stem)
    return DirectiveRequest(
        request.docname,
        request.argument,
        os.fspath(capture.trace_dir),
        raw,
        line=request.line,
    )


def _damaged(cache: CaptureCache) -> str:
    """What a miss message adds of the entries whose record.json could not be read, and of
    those refused unread (a link leading out of the entry: :meth:`CaptureCache.refusal`)."""
    said = ""
    if cache.damaged:
        n = len(cache.damaged)
        said += (
            f"; {n} cache entr{'y' if n == 1 else 'ies'} with a record.json that cannot be "
            "read (damaged) ignored"
        )
    if cache.refused:
        n, first = len(cache.refused), next(iter(cache.refused.values()))
        said += f"; {n} cache entr{'y' if n == 1 else 'ies'} refused, not read: {first}"
    return said


def _refused_note(cache: CaptureCache, key: str, shown: str, replaced: str = "") -> list[Note]:
    """A warning when the entry of this very capture was refused (``replaced``: why the
    one this build's run replaced was): the build says its cache held what is not a
    capture, whatever it shows instead."""
    if replaced:
        return [
            (
                CAPTURE,
                f"the cached capture of {shown} was refused, not read, and run again: {replaced}",
            )
        ]
    why = cache.refused.get(key)
    if why is None:
        return []
    return [(CAPTURE, f"the cached capture of {shown} was refused, not read: {why}")]


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root)
    except OSError:
        return False


def _imports_torch(files: list[Path]) -> bool:
    """Whether any of these files imports torch (read, not run)."""
    for path in files:
        try:
            tree = ast.parse(path.read_bytes(), os.fspath(path))
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(n == "torch" or n.startswith("torch.") for n in names):
                return True
    return False


FAMILY = Family(
    name=DIRECTIVE,
    description="the report of a script run under TORCH_TRACE at build time (or cached)",
    options=Options(CAPTURE_OPTION_SPEC, parse_capture_options),
    handlers=(CaptureHandler(),),
    settings=(CaptureSettings,),
    warnings=(CAPTURE,),
    companions={"torchtrace-captures": CapturesTable},
    finish=note_tables,
)
