"""PyTorch's graph-break registry, when torch is installed: the current wording of each id.

torch ships ``torch/_dynamo/graph_break_registry.json``: for each id (``GB0025``) a list
of variants, each with ``Gb_type``, ``Context``, ``Explanation`` and ``Hints`` (templates
with ``{placeholders}``).  A log carries its own, concrete wording of the same; the
registry adds what a newer torch says and the hints the log's message left out.  The file
is found without importing torch (which takes seconds), read once, bounded, and never
required or fetched: without it the log's text is all there is.
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

#: The registry is about 300 KB; anything much larger is not it.
MAX_REGISTRY_BYTES = 16 << 20
REGISTRY_PATH = ("_dynamo", "graph_break_registry.json")


@dataclass(frozen=True)
class RegistryEntry:
    """One variant of a registry id (most ids have one)."""

    type: str
    explanation: str = ""
    hints: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class BreakRegistry:
    """The registry of the installed torch, by id."""

    path: str
    entries: dict[str, tuple[RegistryEntry, ...]] = field(default_factory=dict)

    def get(self, registry_id: str | None) -> tuple[RegistryEntry, ...]:
        return self.entries.get(registry_id or "", ())


def find_registry() -> Path | None:
    """The installed torch's registry file, found without importing torch; None if none."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder, *REGISTRY_PATH)
        if path.is_file():
            return path
    return None


def load_registry(path: str | os.PathLike[str]) -> BreakRegistry | None:
    """The registry at ``path``; None when it cannot be read or is not one."""
    stat = os.stat(path) if os.path.isfile(path) else None
    if stat is None or stat.st_size > MAX_REGISTRY_BYTES:
        return None
    return _load(os.fspath(path), stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=4)
def _load(path: str, size: int, mtime: int) -> BreakRegistry | None:
    """``size`` and ``mtime`` are the cache's key only: a file changed is read again."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    entries: dict[str, tuple[RegistryEntry, ...]] = {}
    for key, variants in data.items():
        if not isinstance(key, str) or not isinstance(variants, list):
            continue
        found = []
        for v in variants:
            if isinstance(v, dict) and isinstance(v.get("Gb_type"), str):
                hints = v.get("Hints")
                found.append(
                    RegistryEntry(
                        v["Gb_type"].strip(),
                        v["Explanation"].strip() if isinstance(v.get("Explanation"), str) else "",
                        tuple(h.strip() for h in hints if isinstance(h, str) and h.strip())
                        if isinstance(hints, list)
                        else (),
                    )
                )
        if found:
            entries[key.upper()] = tuple(found)
    return BreakRegistry(path, entries)


def installed_registry() -> BreakRegistry | None:
    """The installed torch's registry, or None."""
    path = find_registry()
    return load_registry(path) if path is not None else None
