"""The code blocks of generated pages are highlighted by a second process while Sphinx reads.

On a big trace, highlighting the graphs and generated code (:mod:`...render.highlight`)
is the largest part of writing the pages, and it is a pure function of each block's
text and options, all known once the trace is loaded.  A serial build (``-j 1``, the
default) uses one core.  When the machine has another, a forked child process builds
the blocks of every generated page Sphinx is about to read, highlights each code
block the fast visitor (:mod:`.fast_code`) will highlight, and hands the HTML back
when writing starts.  The visitor's highlighter takes a result only for exactly the
text and options it was given (they are the key), and highlights anything else
itself: a result can be missing, never wrong.

Checked against Sphinx 7.0 to 9.0, on Linux with CPython 3.10 to 3.13.  Touches no
Sphinx internals (``Sphinx.parallel``, the ``env-before-read-docs`` event and the
builder's ``format`` are public); it wraps the highlighter that :mod:`.fast_code`'s
visitor calls.  Falls back to highlighting in the build's process when the platform
is not Linux, the process runs other threads (a fork would copy none of them, nor
release their locks), only one CPU is usable, the build is parallel (``-j``), the
builder is not HTML, no generated page is read, or the child fails.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ...render.highlight import FAST_LANGUAGES, is_fast
from ...render.highlight import highlight_fast as _ORIGINAL
from ...site import blocks as b
from .. import doctree
from ..built import Generated, built
from . import fast_code

_Key = tuple[str, str, bool, int, tuple[int, ...]]


def key(text: str, language: str, linenos: bool, first_line: int, hl_lines: Iterable[int]) -> _Key:
    """What the highlighter's result depends on: all of its arguments."""
    return (str(text), language, bool(linenos), int(first_line), tuple(hl_lines))


def code_blocks(blocks: Iterable[b.Block]) -> Iterator[b.CodeBlock]:
    """Every code block of a page, nested ones included."""
    for block in blocks:
        if isinstance(block, b.CodeBlock):
            yield block
        elif isinstance(block, (b.Section, b.Dropdown, b.Admonition)):
            yield from code_blocks(block.blocks)
        elif isinstance(block, b.TabSet):
            for tab in block.tabs:
                yield from code_blocks(tab.blocks)
        elif isinstance(block, b.BulletList):
            for entry in block.items:
                yield from code_blocks(entry)
        elif isinstance(block, b.Chart):
            yield from code_blocks(block.fallback)


def arguments(rewrite: Callable[[str], str], block: b.CodeBlock) -> tuple[Any, ...] | None:
    """The highlighter's arguments for a block, as :mod:`.doctree` and the fast visitor
    derive them; None for a block the fast visitor leaves to Sphinx."""
    text = doctree.code_text(rewrite, block)
    language = block.language or "text"
    if not is_fast(language, len(text)):
        return None
    if language not in FAST_LANGUAGES:
        language = "none"
    first_line = block.start if block.linenos else 1
    hl_lines = doctree.emphasized_lines(block, text) if block.emphasize else []
    return (text, language, bool(block.linenos), first_line, hl_lines)


def highlight_pages(pages: Mapping[str, Generated], docnames: Sequence[str]) -> dict[_Key, str]:
    """The fast visitor's HTML of every code block of these generated pages."""
    table: dict[_Key, str] = {}
    for docname in docnames:
        generated = pages[docname]
        page = generated.page(docname)
        for block in code_blocks(page.blocks):
            args = arguments(generated.rewrite, block)
            if args is not None:
                table[key(*args)] = _ORIGINAL(*args)
    return table


def _child(connection: Connection, pages: Mapping[str, Generated], docnames: Sequence[str]) -> None:
    """The forked child's work (it shares the parent's trace models: nothing is pickled)."""
    try:
        table = highlight_pages(pages, docnames)
    except Exception:
        table = {}  # the build's process highlights them all itself
    connection.send(table)
    connection.close()


@dataclass
class _Pending:
    """The child of this build, until its results are taken."""

    process: BaseProcess
    connection: Connection
    table: dict[_Key, str] | None = None

    def results(self) -> dict[_Key, str]:
        if self.table is None:
            try:
                self.table = self.connection.recv()
            except (EOFError, OSError, ValueError):
                self.table = {}
            self.close()
        return self.table

    def close(self) -> None:
        self.connection.close()
        if self.process.is_alive():
            self.process.terminate()
        self.process.join(timeout=5)


#: The page views build_page imports on first use.
_PAGE_MODULES = (
    "...site.pages.overview",
    "...site.pages.frame",
    "...site.pages.graph",
    "...site.pages.kernel",
)
#: The name :mod:`.fast_code`'s visitor calls its highlighter by.
_VISITOR_HIGHLIGHTER = "highlight_fast"
_PENDING: list[_Pending] = []


def highlight_fast(
    text: str,
    language: str,
    linenos: bool,
    first_line: int = 1,
    hl_lines: Collection[int] = (),
) -> str:
    """:func:`...render.highlight.highlight_fast`, from the child's results when it has them."""
    if _PENDING:
        html = _PENDING[-1].results().get(key(text, language, linenos, first_line, hl_lines))
        if html is not None:
            return html
    return _ORIGINAL(text, language, linenos, first_line, hl_lines)


def _usable_cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def start_child(app: Sphinx, env: BuildEnvironment, docnames: list[str]) -> None:
    """env-before-read-docs: fork the highlighting child for the generated pages read now."""
    pages = built(app).pages
    wanted = [d for d in docnames if d in pages]
    if (
        not wanted
        or _PENDING
        or not sys.platform.startswith("linux")
        or threading.active_count() > 1  # a fork copies no thread, and no lock they hold
        or app.parallel > 1
        or multiprocessing.current_process().daemon  # a pool's worker may start no process
        or app.builder.format != "html"
        or _usable_cpus() < 2
    ):
        return
    for module in _PAGE_MODULES:  # imported here: the child imports nothing
        importlib.import_module(module, __package__)
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(sender, pages, wanted), daemon=True)
    try:
        process.start()
    except OSError:
        return
    sender.close()
    _PENDING.append(_Pending(process, receiver))


def stop_child(app: Sphinx, exception: BaseException | None) -> None:
    while _PENDING:
        _PENDING.pop().close()


def setup_parallel_highlight(app: Sphinx) -> None:
    setattr(fast_code, _VISITOR_HIGHLIGHTER, highlight_fast)
    app.connect("env-before-read-docs", start_child)
    app.connect("build-finished", stop_child)


def remove_parallel_highlight() -> None:
    """The visitor highlights in the build's process again."""
    setattr(fast_code, _VISITOR_HIGHLIGHTER, _ORIGINAL)
