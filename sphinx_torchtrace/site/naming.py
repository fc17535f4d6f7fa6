"""Names of generated pages and domain objects: stable, readable, safe on every OS.

Object names follow tlparse's compile ids (``train/[0/0]``, ``train/rank1/[1/0_1]``,
``train/[!0/2/0]``, ``train/[0/0]#2`` for a repeat after ``torch._dynamo.reset()``);
file names never hold ``!``, ``[``, ``]`` or upper case, so they cannot clash on
case-insensitive file systems.
"""

from __future__ import annotations

import os
import re

from ..trace import Artifact, Compile, RankTrace, Trace

_UNSAFE = re.compile(r"[^a-z0-9]+")

#: Where generated pages go when ``torchtrace_generated_dir`` names no usable folder.
DEFAULT_GENERATED_DIR = "torchtrace"


def generated_folder(value: object) -> str | None:
    """``torchtrace_generated_dir`` as a folder of docnames, or None if it names none.

    The extension empties that folder of anything it did not generate, so it must
    be a sub-folder of the sources, never the sources themselves.
    """
    folder = str(value or "").replace("\\", "/").strip("/")
    parts = folder.split("/")
    if not folder or any(p in ("", ".", "..") for p in parts) or os.path.isabs(folder):
        return None
    return folder


def generated_prefix(value: object) -> str:
    """The docname prefix of every generated page (``torchtrace/``)."""
    return (generated_folder(value) or DEFAULT_GENERATED_DIR) + "/"


def slugify(text: str) -> str:
    """Lower-case letters, digits and single dashes."""
    return _UNSAFE.sub("-", text.lower()).strip("-") or "x"


def rank_prefix(trace: Trace, rank: RankTrace) -> str:
    """``rank1/`` when the trace has several ranks, else nothing.

    Two logs can claim the same rank (copied logs, a restarted job): the later
    ones become ``rank1-2/``, ``rank1-3/`` so that no two pages share a name.
    """
    if not trace.is_multi_rank:
        return ""
    bases = [
        f"rank{r.rank if r.rank is not None else i}" for i, r in enumerate(trace.ranks)
    ]
    names = [n.replace("#", "-") for n in numbered(bases)]
    for r, name in zip(trace.ranks, names, strict=True):
        if r is rank:
            return name + "/"
    return f"rank{rank.rank}/"


def frame_name(label: str, trace: Trace, rank: RankTrace, compile_: Compile) -> str:
    """The domain object name of a compile: ``<label>/[<rank>/][0/0]`` (+ ``#2`` for repeats)."""
    suffix = f"#{compile_.occurrence}" if compile_.occurrence > 1 else ""
    return f"{label}/{rank_prefix(trace, rank)}{compile_.id}{suffix}"


def frame_slug(compile_: Compile) -> str:
    """A file name for a compile: ``frame-0-0``, ``frame-1-0-attempt1``, ``frame-ca0-2-0``."""
    cid = compile_.id
    if cid.is_unknown:
        base = "frame-none"
    else:
        parts = []
        if cid.compiled_autograd_id is not None:
            parts.append(f"ca{cid.compiled_autograd_id}")
        if cid.frame_id is not None:
            parts.append(str(cid.frame_id))
            parts.append("x" if cid.frame_compile_id is None else str(cid.frame_compile_id))
        base = "frame-" + "-".join(parts)
    if cid.attempt:
        base += f"-attempt{cid.attempt}"
    if compile_.occurrence > 1:
        base += f"-occurrence{compile_.occurrence}"
    return base


def artifact_slug(artifact: Artifact) -> str:
    """``graph-12-dynamo-output-graph``: the log-wide ordinal keeps it unique and stable."""
    return f"{artifact.ordinal}-{slugify(artifact.name)}"


def numbered(names: list[str]) -> list[str]:
    """Append ``#2``, ``#3`` to repeated names, keeping the first one plain."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out
