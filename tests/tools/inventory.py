"""``objects.inv`` as a site's readers get it: parsed by Sphinx's own intersphinx reader.

Another project that links this site with intersphinx trusts every entry of its
inventory.  :func:`inventory_problems` checks that what the reader makes of the file
is exactly what the site wrote, line by line: each entry one the site declared, of a
role it declares, pointing at a page of the site (an anchor that exists), under a name
no other entry has.  Works with every Sphinx the project supports (``InventoryFile.loads``
from 8.2 on, ``InventoryFile.load`` before).
"""

from __future__ import annotations

import io
import posixpath
import re
import zlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from sphinx.util.inventory import InventoryFile

#: The roles a site of this project writes: the torchtrace domain's and Sphinx's pages and
#: labels.
OUR_ROLES = frozenset(
    {
        "torchtrace:frame",
        "torchtrace:graph",
        "torchtrace:kernel",
        "torchtrace:gb",
        "std:doc",
        "std:label",
    }
)
#: The labels Sphinx declares in every project, for pages a builder may not write (no
#: Python module index without Python modules).
SPHINX_LABELS = frozenset({"genindex", "modindex", "py-modindex", "search"})
_ID = re.compile(r'\sid="([^"]*)"')


def inventory_lines(outdir: Path) -> list[str]:
    """The entries' lines of ``objects.inv``, header left out."""
    raw = (outdir / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):
        header_end = raw.index(b"\n", header_end) + 1
    return zlib.decompress(raw[header_end:]).decode("utf-8").split("\n")[:-1]


def read_inventory(outdir: Path) -> dict[tuple[str, str], str]:
    """``{(role, name): uri}`` as Sphinx's intersphinx reader makes it of ``objects.inv``
    (URIs relative to the site: the reader joins them to an empty base)."""
    raw = (outdir / "objects.inv").read_bytes()
    data: Any
    if hasattr(InventoryFile, "loads"):  # Sphinx 8.2 and later
        data = InventoryFile.loads(raw, uri="").data
    else:
        data = InventoryFile.load(io.BytesIO(raw), "", posixpath.join)
    found: dict[tuple[str, str], str] = {}
    for role, entries in data.items():
        for name, item in entries.items():
            found[role, name] = item.uri if hasattr(item, "uri") else item[2]
    return found


def written_entries(lines: Iterable[str]) -> dict[tuple[str, str], str]:
    """``{(role, name): uri}`` as the site wrote the lines, each split where it meant its
    fields to be (a name is one token), ``$`` expanded as the format says."""
    written: dict[tuple[str, str], str] = {}
    for line in lines:
        name, role, _priority, uri, _display = line.split(" ", 4)
        written[role, name] = uri[:-1] + name if uri.endswith("$") else uri
    return written


def inventory_problems(outdir: Path, labels: Iterable[str] = ()) -> list[str]:
    """What is wrong with the site's ``objects.inv`` (empty when nothing): entries the
    reader makes that the site did not write, names two entries share, roles not ours,
    URIs outside the site or to no anchor; ``labels``: the traces' labels, which head every
    ``torchtrace`` object's name."""
    lines = inventory_lines(outdir)
    problems: list[str] = []
    bad_lines = [line for line in lines if len(line.split(" ")) < 5]
    problems += [f"not an entry of five fields: {line[:120]!r}" for line in bad_lines]
    lines = [line for line in lines if line not in bad_lines]
    read = read_inventory(outdir)
    written = written_entries(lines)
    problems += [
        f"read but not written: {k} -> {v[:80]}" for k, v in read.items() if written.get(k) != v
    ]
    problems += [f"written but not read: {k}" for k in written if k not in read]
    twice = Counter((line.split(" ")[1], line.split(" ")[0]) for line in lines)
    problems += [f"{n} entries name {k}" for k, n in twice.items() if n > 1]
    heads = tuple(f"{label}/" for label in labels)
    pages: dict[Path, frozenset[str]] = {}
    for (role, name), uri in read.items():
        if role not in OUR_ROLES:
            problems.append(f"a role the site does not declare: {role} {name}")
        if role.startswith("torchtrace:") and heads and not name.startswith(heads):
            problems.append(f"an object not of a trace of the site: {role} {name}")
        problem = _uri_problem(outdir, uri, pages)
        if problem == "no such page" and role == "std:label" and name in SPHINX_LABELS:
            problem = None
        if problem:
            problems.append(f"{role} {name} -> {uri[:80]}: {problem}")
    return problems


def _uri_problem(outdir: Path, uri: str, pages: dict[Path, frozenset[str]]) -> str | None:
    parts = urlsplit(uri)
    if parts.scheme or parts.netloc or uri.startswith(("/", "\\")):
        return "outside the site"
    target = Path(posixpath.normpath((outdir / unquote(parts.path)).as_posix()))
    if outdir.resolve() not in target.resolve().parents:
        return "outside the site"
    if not target.is_file():
        return "no such page"
    if parts.fragment:
        if target not in pages:
            pages[target] = frozenset(_ID.findall(target.read_text(encoding="utf-8")))
        if unquote(parts.fragment) not in pages[target]:
            return "no such anchor"
    return None
