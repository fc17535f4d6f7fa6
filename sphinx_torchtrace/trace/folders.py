"""Reading a folder the user named without ever leaving it.

Every reader of a folder (rank discovery, debug folders, ``check``/``redact``/``bundle``,
``serve``, the capture cache, runtime profiles) asks here before it opens an entry.  An
entry whose real path (every link followed) is outside the folder the user named is
refused, whatever its name: a ``rank_1.log -> /etc/passwd`` link would otherwise be read,
published and zipped as a rank's log.  So is what is not a regular file or a folder (a
FIFO blocks a read for ever, a device never ends) and what cannot be examined.

A path the user names directly (a log file given on the command line) may be a link:
that is the user's choice, not something found inside an input.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

#: Why an entry whose real path is outside the named folder is not read.
LEADS_OUT = "a link that leads out of the folder"
#: Why an entry that cannot be examined (a dangling link, a loop, no permission) is not read.
UNREADABLE = "a link that leads nowhere, or an entry that cannot be examined"
#: Why a FIFO, socket or device is not read.
NOT_A_FILE = "not a regular file"


def real_root(folder: str | os.PathLike[str]) -> str:
    """The real path of a folder the user named (links in the name itself followed)."""
    return os.path.realpath(folder)


def inside(path: str | os.PathLike[str], root: str) -> bool:
    """Whether ``path``'s real path is ``root`` (a :func:`real_root`) or below it."""
    try:
        target = os.path.realpath(path)
        return os.path.commonpath([root, target]) == root
    except (OSError, ValueError):
        return False


def refusal(entry: str | os.PathLike[str], root: str) -> str | None:
    """Why ``entry`` (found under the folder whose real path is ``root``) must not be read;
    ``""`` for a folder inside it (walk it with the same root); None for a regular file
    that may be read."""
    try:
        mode = os.lstat(entry).st_mode
        if stat.S_ISLNK(mode):
            if not inside(entry, root):
                return LEADS_OUT
            mode = os.stat(entry).st_mode
    except (OSError, ValueError):
        return UNREADABLE
    if stat.S_ISDIR(mode):
        return ""
    if not stat.S_ISREG(mode):
        return NOT_A_FILE
    return None


@dataclass
class Listing:
    """A folder's entries split by what may be read."""

    files: list[Path] = field(default_factory=list)  # regular files, inside the folder
    folders: list[Path] = field(default_factory=list)  # subfolders, inside the folder
    refused: list[tuple[Path, str]] = field(default_factory=list)  # entry, why not read


def list_folder(folder: str | os.PathLike[str], root: str | None = None) -> Listing:
    """The entries of ``folder`` by name, each checked against ``root`` (the real path of
    the folder the user named; ``folder`` itself when None)."""
    directory = Path(folder)
    root = real_root(directory) if root is None else root
    listing = Listing()
    for entry in sorted(directory.iterdir()):
        why = refusal(entry, root)
        if why is None:
            listing.files.append(entry)
        elif why == "":
            listing.folders.append(entry)
        else:
            listing.refused.append((entry, why))
    return listing


def walk_files(
    folder: str | os.PathLike[str], limit: int | None = None, root: str | None = None
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Every regular file under ``folder`` that stays inside ``root`` (the real path of
    the folder the user named; ``folder`` itself when None), by path, and every entry
    refused with why; at most ``limit`` entries looked at (bounded work)."""
    root = real_root(folder) if root is None else root
    files: list[Path] = []
    refused: list[tuple[Path, str]] = []
    seen: set[str] = set()
    queue = [Path(folder)]
    looked = 0
    while queue:
        current = queue.pop()
        real = os.path.realpath(current)
        if real in seen:  # two links to one folder inside: walk it once
            continue
        seen.add(real)
        try:
            listing = list_folder(current, root)
        except OSError as e:
            refused.append((current, f"cannot be listed ({e.strerror or e})"))
            continue
        looked += len(listing.files) + len(listing.folders) + len(listing.refused)
        files += listing.files
        refused += listing.refused
        queue += reversed(listing.folders)
        if limit is not None and looked >= limit:
            break
    return sorted(files), refused
