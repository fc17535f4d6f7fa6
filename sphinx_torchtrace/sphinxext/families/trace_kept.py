"""A trace whose input did not change since the last build: kept, not read again.

A no-change rebuild reads no page, yet reading, masking and planning a big log at
``builder-inited`` cost seconds per hundred megabytes.  When the directive's input
(its files' paths, sizes and times), its options, the extension's configuration and
code are those of the last build, and every stub and download it made is still
there, the build keeps them: :class:`KeptTrace` registers the same pages and
downloads from a small file in the model cache, says again what the last build said
at ``builder-inited`` (warnings, info lines), and reads the trace only if something
asks for more (a page of it read again for another reason).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util import logging as sphinx_logging
from sphinx.util.docutils import SphinxDirective

from ...site.blocks import Page
from ...site.naming import label_segment
from ...trace.inputs.opening import OpenedInput
from ...version import __version__
from ..built import Generated
from ..files import CODE_STAMP
from ..scan import DirectiveRequest
from .base import Context

#: The loggers whose records a build of a trace says at ``builder-inited``.
_OURS = "sphinx.sphinx_torchtrace"


@dataclass
class LoadCount:
    """How many times this process read a trace's input into the model."""

    n: int = 0


#: Counted by the trace family's loader; a kept trace adds nothing to it.
MODEL_LOADS = LoadCount()


@dataclass
class Made:
    """What a full build of one directive made, to keep when nothing changed."""

    pages: list[tuple[str, str]]  # (docname, page kind)
    downloads: list[str]
    meanings: dict[str, str]
    said: list[list[Any]]  # [logger, level, message, location, type, subtype]


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.records: list[list[Any]] = []
        self.unkeepable = False

    def emit(self, record: logging.LogRecord) -> None:
        location = getattr(record, "location", None)
        if isinstance(location, tuple):
            location = list(location)
        if location is not None and not isinstance(location, str | list):
            self.unkeepable = True  # a node: not said again from a file
        kind, subtype = getattr(record, "type", None), getattr(record, "subtype", None)
        message = record.getMessage()
        self.records.append([record.name, record.levelno, message, location, kind, subtype])


@contextmanager
def recorded() -> Iterator[_Recorder]:
    """What the extension says while a trace is read and planned (said again when kept)."""
    recorder = _Recorder()
    target = logging.getLogger(_OURS)
    target.addHandler(recorder)
    try:
        yield recorder
    finally:
        target.removeHandler(recorder)


def _key(context: Context, request: DirectiveRequest, opened: OpenedInput) -> str:
    """Everything the pages and downloads of a trace depend on, but the files' content."""
    parts = [
        __version__,
        CODE_STAMP,
        request.label(),
        sorted(request.raw_options.items()),
        os.fspath(request.path),
        context.gen_dir,
        context.suffix,
        context.parser,
        context.detail_toctree,
        repr(context.config),
        os.fspath(context.srcdir),
        [os.fspath(p) for p in opened.logs],
        [(os.fspath(s.path), s.size, s.mtime_ns) for s in opened.stamps],
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def _stamp_path(context: Context, request: DirectiveRequest) -> Path:
    return Path(context.cache_dir) / f"kept-{label_segment(request.label())}.json"


def _stat(path: str) -> list[int]:
    try:
        st = os.stat(path)
    except OSError:
        return [-1, -1]
    return [st.st_size, st.st_mtime_ns]


def save_made(
    context: Context,
    request: DirectiveRequest,
    opened: OpenedInput,
    generated: Generated,
    made: Made,
    recorder: _Recorder,
) -> None:
    """Remember what this directive's full build made (nothing when it cannot be kept)."""
    path = _stamp_path(context, request)
    if recorder.unkeepable:
        path.unlink(missing_ok=True)
        return
    files = [[os.fspath(p), *_stat(os.fspath(p))] for p in generated.logs]
    saved = {
        "key": _key(context, request, opened),
        "files": files,
        "pages": made.pages,
        "downloads": made.downloads,
        "meanings": made.meanings,
        "said": recorder.records,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(saved), "utf-8")
    except OSError:
        pass  # nothing kept: the next build reads the trace again


def kept_trace(
    context: Context,
    request: DirectiveRequest,
    opened: OpenedInput,
    load: Callable[[], Generated | None],
) -> KeptTrace | None:
    """The last build's trace of this directive, when nothing it depends on changed."""
    try:
        saved = json.loads(_stamp_path(context, request).read_text(encoding="utf-8"))
        if not isinstance(saved, dict) or saved.get("key") != _key(context, request, opened):
            return None
        files = [(str(p), [int(size), int(mtime)]) for p, size, mtime in saved["files"]]
        pages = [(str(d), str(k)) for d, k in saved["pages"]]
        downloads = [str(f) for f in saved["downloads"]]
        meanings = {str(k): str(v) for k, v in saved["meanings"].items()}
        said = [list(s) for s in saved["said"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None
    if any(size < 0 or _stat(p) != [size, mtime] for p, (size, mtime) in files):
        return None
    if not all((context.srcdir / (d + context.suffix)).is_file() for d, _ in pages):
        return None
    if not all(context.has_download(f) for f in downloads):
        return None
    made = Made(pages, downloads, meanings, said)
    return KeptTrace(request, [Path(p) for p, _ in files], made, load)


class KeptTrace:
    """A :class:`..built.Generated` from the last build's record: its pages, downloads,
    logs and object meanings; anything else reads the trace (once) and asks it."""

    def __init__(
        self,
        request: DirectiveRequest,
        logs: list[Path],
        made: Made,
        load: Callable[[], Generated | None],
    ) -> None:
        self.request = request
        self._logs = logs
        self.made = made
        self._load = load
        self._real: Generated | None = None

    def register(self, context: Context, directive: str) -> None:
        """Add to this build what the last one made, and say again what it said."""
        context.register(self.request, directive, self)
        for docname, kind in self.made.pages:
            context.add_page(docname, self, kind)
        for relpath in self.made.downloads:
            context.add_file(relpath, None)
        for name, level, message, location, kind, subtype in self.made.said:
            where = tuple(location) if isinstance(location, list) else location
            logger = sphinx_logging.getLogger(str(name).removeprefix("sphinx."))
            logger.log(int(level), "%s", message, location=where, type=kind, subtype=subtype)

    def resolved(self) -> Generated:
        """The trace read and planned, as a full build makes it (said once already)."""
        if self._real is None:
            with sphinx_logging.suppress_logging():
                self._real = self._load()
            if self._real is None:  # changed since it was found unchanged, moments ago
                argument = self.request.argument
                raise RuntimeError(f"torchtrace: {argument!r} changed during the build")
        return self._real

    @property
    def logs(self) -> list[Path]:
        return self._logs

    @property
    def rewrite(self) -> Callable[[str], str]:
        return self.resolved().rewrite

    @property
    def notes(self) -> list[tuple[Any, str]]:
        return self.resolved().notes

    def meanings(self) -> dict[str, str]:
        return dict(self.made.meanings)

    def page(self, docname: str) -> Page:
        return self.resolved().page(docname)

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        return self.resolved().page_nodes(directive, docname)

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        return self.resolved().inline_nodes(directive)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.resolved(), name)
