"""The project's root, from the docs' own folder: one path rule for every page of a build.

A trace captured in the project's checkout names its files by the checkout's absolute
path (``/builds/acme/proj/train.py``, ``/__w/proj/proj/...``).  A path under a home
folder is hidden by the home rule; a checkout elsewhere (self-hosted CI, containers) is
hidden only by a rule for the checkout itself.  The checkout is found from where the
docs are, not guessed from a trace: the nearest folder above the source folder that
holds a repository (``.git``, ``.hg`` ...), else one that holds a project file
(``pyproject.toml``, ``setup.py``), else the source folder itself.  Every family
(``torchtrace``, ``-diff``, ``-trend``, ``-capture``, debug folders, their downloads)
builds its rules here, so whatever hides a path on one page hides it on all: the docs'
root, and the project root each shown trace's own file names share
(:func:`~..render.paths.project_roots`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from ..render.paths import (
    DEFAULT_PATH_REWRITES,
    PROJECT,
    PYTHON_PREFIX,
    SITE_PACKAGES,
    project_roots,
)
from ..trace.model import Trace
from ..trace.sharing.private import HOME_ROOTS
from .config import TorchTraceConfig

#: What marks a repository's root, then a project's (a checkout without its history).
REPOSITORY_MARKS = (".git", ".hg", ".svn", ".jj", ".bzr")
PROJECT_MARKS = ("pyproject.toml", "setup.py", "setup.cfg")
#: Folders climbed from the source folder, at most (bounded work).
_MAX_UP = 64
# A home folder or below it: the home rule hides those (``~/proj``), as on every page.
_UNDER_HOME = re.compile(rf"/(?:(?:{HOME_ROOTS}|data/users)/[^/]+|root)(?:/|$)")


@lru_cache(maxsize=64)
def docs_roots(srcdir: str) -> tuple[str, ...]:
    """The project root of the docs in ``srcdir``, as written and as its real path (a
    checkout reached through a link is logged by either); none under a home folder,
    none that is ``/``."""
    start = os.path.abspath(srcdir)
    found = _marked(start, REPOSITORY_MARKS) or _marked(start, PROJECT_MARKS) or start
    roots = {found, os.path.realpath(found)}
    return tuple(
        sorted(
            (r for r in roots if r != os.sep and not _UNDER_HOME.match(r) and "\n" not in r),
            key=lambda r: (-len(r), r),
        )
    )


def _marked(start: str, marks: tuple[str, ...]) -> str | None:
    folder = start
    for _ in range(_MAX_UP):
        if any(os.path.lexists(os.path.join(folder, mark)) for mark in marks):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def page_rules(
    config: TorchTraceConfig, srcdir: str | os.PathLike[str], traces: Iterable[Trace] = ()
) -> dict[str, str]:
    """The rules for pages showing ``traces``: the user's, then the built-in ones with each
    project root (the docs', each trace's) rewritten to ``<project>`` after the library
    rules (a virtualenv inside a checkout stays ``<site-packages>/``) and before the rest."""
    roots = set(docs_roots(os.fspath(srcdir)))
    for trace in traces:
        roots.update(project_roots(trace))
    ordered = sorted(roots, key=lambda r: (-len(r), r))
    return rules_with_roots(config.path_rewrites, ordered, config.default_path_rewrites)


def rules_with_roots(
    user_rules: Mapping[str, str], roots: Iterable[str], defaults: bool = True
) -> dict[str, str]:
    """``user_rules``, then (unless ``defaults`` is off) the built-in rules with ``roots``
    (longest first: a root inside another is rewritten first) placed after the library
    rules."""
    rules = dict(user_rules)
    if not defaults:
        return rules
    pending = list(roots)
    for pattern, replacement in DEFAULT_PATH_REWRITES.items():
        if pattern not in (SITE_PACKAGES, PYTHON_PREFIX):
            for root in pending:
                rules.setdefault(re.escape(root) + r"(?![\w.-])", PROJECT)
            pending = []
        rules.setdefault(pattern, replacement)
    return rules
