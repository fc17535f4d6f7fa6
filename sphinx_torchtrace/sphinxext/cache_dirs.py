"""Where the extension keeps its caches: never inside what a build publishes.

The model cache (``torchtrace-cache``: each log's model, its paths and messages as the
log has them) and the captures of ``torchtrace-capture`` (``torchtrace-captures``: whole
trace logs) hold what the pages rewrite or leave out.  They live in the doctree folder,
which Sphinx keeps apart from its output (``sphinx-build -M``, ``make``, ``-d``, Read the
Docs), except in a build without ``-d``: there it is ``<outdir>/.doctrees``, inside the
folder a CI job publishes whole (a GitHub Pages artifact takes hidden folders too) and an
EPUB build walks.  Such a build keeps them in the user's cache instead, a folder per
doctree folder; a folder that no build used for 30 days is removed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import time
from pathlib import Path

from sphinx.application import Sphinx

logger = logging.getLogger(__name__)

#: The caches' names, in the folder :func:`settle_caches` gives.
MODEL_CACHE = "torchtrace-cache"
CAPTURES = "torchtrace-captures"
#: Seconds after which a folder of the user's cache that no build used is removed.
UNUSED_FOR = 30 * 24 * 3600
#: A folder's mark of its last use (its modification time).
_USED = ".last-used"


def cache_home() -> Path:
    """The user's cache of the extension: ``$XDG_CACHE_HOME/sphinx-torchtrace``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "sphinx-torchtrace"


def settle_caches(app: Sphinx) -> Path:
    """The folder of this build's caches: its doctree folder, unless that lies inside its
    output folder.  Then it is a folder of the user's cache, marked as used, the caches an
    earlier version left in the output moved there, and the folders no build used for 30
    days removed.  A folder that cannot be written is no error: the caches then do
    without it."""
    doctrees = Path(app.doctreedir).resolve()
    if not doctrees.is_relative_to(Path(app.outdir).resolve()):
        return doctrees
    folder = cache_home() / "doctrees" / hashlib.sha256(os.fsencode(doctrees)).hexdigest()[:16]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / _USED).touch()
        for name in (MODEL_CACHE, CAPTURES):
            old = doctrees / name
            if old.is_dir() and not old.is_symlink():
                if (folder / name).exists():
                    shutil.rmtree(old)
                else:
                    shutil.move(os.fspath(old), os.fspath(folder / name))
        _prune(folder.parent, keep=folder)
    except OSError as e:
        logger.debug("the caches' folder %s: %s", folder, e)
    return folder


def _prune(parent: Path, keep: Path) -> None:
    """Folders of ``parent`` (each a doctree folder's caches) unused for 30 days."""
    cutoff = time.time() - UNUSED_FOR
    for entry in parent.iterdir():
        if entry == keep or not entry.is_dir() or entry.is_symlink():
            continue
        try:
            used = (entry / _USED).stat().st_mtime
        except OSError:
            continue  # not one of ours, or being made
        if used < cutoff:
            shutil.rmtree(entry, ignore_errors=True)
