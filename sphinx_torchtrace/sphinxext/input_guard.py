"""Input folders are data, not documents: keeping them out of Sphinx's discovery.

Guides keep traces inside the docs' source folder (``traces/run``).  Sphinx
would then publish any ``*.rst`` or ``*.md`` an attached trace, debug or
text-log folder holds (a symlink to ``/proc/self/environ`` included), and walk
a ``loop -> /`` link inside it for ever.  So every file and folder a directive
names is excluded before Sphinx first looks for documents:

- at ``config-inited`` a light scan of the sources (:func:`.scan.input_paths`)
  finds the paths the directives name, and ``exclude_patterns`` gets one
  pattern per path.  The additions depend only on the directives, so an
  unchanged project has an unchanged configuration: Sphinx does not rebuild
  everything on every build (only when a directive names a new input);
- at ``env-get-outdated``, once Sphinx has found its documents, any document
  still inside an input (reached by a path the light scan could not see) is
  dropped from the found documents, as a safety net;
- one ``torchtrace.input_sources`` warning per input folder that holds source
  files, so that a user knows they are not pages.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment

from ..site.naming import generated_prefix
from . import families
from .scan import NamedPaths, input_paths, source_suffixes
from .warnings import INPUT_SOURCES, warn

#: How many entries of an input folder are looked at for source files (bounded work).
LOOK_LIMIT = 20_000


@dataclass
class _Guard:
    generated: str  # the folder of generated pages (absolute)
    inputs: dict[str, str] = field(default_factory=dict)  # absolute path -> naming page
    scanned: set[str] = field(default_factory=set)  # sources the light scan read
    warned: set[str] = field(default_factory=set)

    def roots(self, srcdir: str) -> list[str]:
        """The inputs kept out of discovery: those inside the source folder, except a folder
        that holds the page naming it or the generated pages (a user's choice of layout)."""
        return sorted(
            p
            for p, page in self.inputs.items()
            if _inside(p, srcdir) is not None
            and _inside(page, p) is None
            and p != self.generated
            and _inside(self.generated, p) is None
        )


_GUARDS: dict[str, _Guard] = {}


def exclusion_pattern(relative: str) -> str:
    """An ``exclude_patterns`` entry matching exactly ``relative`` (a posix path under the
    source folder): glob characters are made literal (Sphinx's ``[`` cannot be, so it
    matches any one character there)."""
    out = []
    for c in unicodedata.normalize("NFC", relative):  # Sphinx matches NFC paths
        out.append({"*": "[*]", "?": "[?]", "[": "?"}.get(c, c))
    return "".join(out)


def _named_paths() -> dict[str, NamedPaths]:
    """The families whose directives name inputs, and the paths each names."""
    return {f.name: f.input_paths for f in families.FAMILIES if f.input_paths is not None}


def exclude_inputs(app: Sphinx, config: Config) -> None:
    """config-inited: every input under the source folder is excluded from discovery."""
    srcdir = os.path.normpath(os.fspath(app.srcdir))
    generated = os.path.join(srcdir, generated_prefix(config.torchtrace_generated_dir))
    guard = _GUARDS[srcdir] = _Guard(os.path.normpath(generated))
    suffixes = source_suffixes(config.source_suffix)
    found, guard.scanned = input_paths(
        srcdir, suffixes, list(config.exclude_patterns), _named_paths()
    )
    guard.inputs = found
    patterns = list(config.exclude_patterns)  # a new list: the default one is shared
    for path in guard.roots(srcdir):
        page = found[path]
        relative = _inside(path, srcdir)
        assert relative is not None
        pattern = exclusion_pattern(relative)
        if pattern not in patterns:
            patterns.append(pattern)
        if os.path.isdir(path) and not os.path.islink(path):
            _warn_sources(guard, path, page, suffixes)
    config.exclude_patterns = patterns


def drop_input_documents(
    app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str], removed: set[str]
) -> list[str]:
    """env-get-outdated: no document Sphinx found inside an input is read or published."""
    srcdir = os.path.normpath(os.fspath(app.srcdir))
    guard = _GUARDS.get(srcdir)
    if guard is None:
        return []
    unseen = [
        str(env.doc2path(d))
        for d in env.found_docs
        if os.path.normpath(env.doc2path(d)) not in guard.scanned
    ]
    if unseen:  # pages the light scan did not read (through a link it does not follow)
        suffixes = source_suffixes(app.config.source_suffix)
        extra, _ = input_paths(srcdir, suffixes, [], _named_paths(), only=unseen)
        guard.inputs.update(extra)
    roots = guard.roots(srcdir)
    if not roots:
        return []
    for docname in sorted(env.found_docs):
        source = os.path.normpath(env.doc2path(docname))
        root = next((r for r in roots if _inside(source, r) is not None), None)
        if root is None:
            continue
        env.project.docnames.discard(docname)
        added.discard(docname)
        changed.discard(docname)
        if docname in env.all_docs:
            removed.add(docname)
        if root not in guard.warned:
            guard.warned.add(root)
            _warn(root, guard.inputs[root], 1)
    return []


def forget_guard(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished."""
    _GUARDS.pop(os.path.normpath(os.fspath(app.srcdir)), None)


def setup_input_guard(app: Sphinx) -> None:
    # after Sphinx's own config-inited handlers (source_suffix becomes a dict at 800)
    app.connect("config-inited", exclude_inputs, priority=900)
    app.connect("env-get-outdated", drop_input_documents)
    app.connect("build-finished", forget_guard)


def _inside(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` (posix) when it lies strictly inside it, else None."""
    try:
        relative = os.path.relpath(path, folder)
    except ValueError:  # another drive
        return None
    if relative == os.curdir or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return Path(relative).as_posix()


def _warn_sources(guard: _Guard, folder: str, page: str, suffixes: tuple[str, ...]) -> None:
    """Count the source files in an input folder (links not followed, bounded)."""
    count = looked = 0
    for _root, dirs, files in os.walk(folder):
        looked += len(dirs) + len(files)
        count += sum(1 for f in files if f.endswith(suffixes))
        if looked > LOOK_LIMIT:
            break
    if count:
        guard.warned.add(folder)
        _warn(folder, page, count)


def _warn(folder: str, page: str, count: int) -> None:
    warn(
        INPUT_SOURCES,
        f"{folder} is read by a directive and holds {count} source file(s) "
        "(.rst, .md ...): an input folder is data, so they are not published as pages",
        f"{page}:",
    )
