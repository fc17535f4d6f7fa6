"""Object names whose meaning changed: ``torchtrace.moved``.

A recaptured trace numbers its frames anew: ``run/[13/0]`` was ``strict_peak`` and
is now ``strict_clip``, under the same URL and object name, so prose that links it
silently changes meaning.  A name that now stands for another function or file is
one warning per directive (on its page, at its line), naming old and new, so the
links can be checked; a function that only moved lines in its file is the same one.

What the names meant is published with the site, ``torchtrace-objects.json`` beside
``objects.inv``.  A fresh build (CI, Read the Docs: no earlier environment) compares
with the published site when ``torchtrace_moved_baseline`` names it, and then warns on
every build until the site that holds the new meanings is published; without it, a
build compares with the last build of its own environment.
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from ..site.characters import console_text
from .built import Built
from .config import torchtrace_config
from .files import write_if_changed
from .warnings import MOVED, warn

#: Where the environment keeps each object name's meaning (pickled with it).
_ENV_MEANINGS = "torchtrace_object_meanings"
#: Names one warning lists; the rest are counted.
NAMES_LISTED = 10
#: The manifest of the published site, in the output's root beside ``objects.inv``.
MANIFEST = "torchtrace-objects.json"
#: Bytes of a published manifest read at most (one line per object name).
MAX_MANIFEST_BYTES = 32 << 20
_LINE = re.compile(r":\d+\)$")
#: The builders whose output is published as a site (``objects.inv`` beside it).
WEB_BUILDERS = frozenset(("html", "dirhtml", "singlehtml"))


def note_moved(app: Sphinx, registry: Built) -> None:
    """After this build's inputs are planned: compare each directive's object meanings
    with the baseline's, add a ``moved`` note where they changed, keep the new ones."""
    source = torchtrace_config(app.config).moved_baseline
    published = _published(app, source) if source else None
    before = published if published is not None else getattr(app.env, _ENV_MEANINGS, {})
    than = "on the published site" if published is not None else "in the last build"
    now: dict[str, str] = {}
    for generated in registry.directives.values():
        meanings = generated.meanings()
        now.update(meanings)
        changed = [
            (name, before[name], meaning)
            for name, meaning in meanings.items()
            if name in before and not same_function(before[name], meaning)
        ]
        if changed:
            generated.notes.append((MOVED, _message(changed, than)))
    setattr(app.env, _ENV_MEANINGS, now)


def same_function(old: str, new: str) -> bool:
    """``f (a.py:15)`` and ``f (a.py:16)``: the same function, moved down a line."""
    return _LINE.sub(")", old) == _LINE.sub(")", new)


def write_manifest(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: ``torchtrace-objects.json`` in a web site's root, what each object
    name of this build stands for (written only when it changes; not in an EPUB folder,
    whose next book would pack it)."""
    if exception is not None or app.builder.name not in WEB_BUILDERS:
        return
    meanings: dict[str, str] = getattr(app.env, _ENV_MEANINGS, {})
    if not meanings:
        return
    text = json.dumps(
        {"version": 1, "objects": dict(sorted(meanings.items()))}, indent=0, ensure_ascii=True
    )
    write_if_changed(Path(app.outdir) / MANIFEST, text)


def _published(app: Sphinx, source: str) -> dict[str, str] | None:
    """The published site's meanings (None, with one warning, when they cannot be read)."""
    where = source
    try:
        if re.match(r"https?://", source):
            if not source.endswith(".json"):
                where = source.rstrip("/") + "/" + MANIFEST
            with urllib.request.urlopen(where, timeout=15) as response:
                raw = response.read(MAX_MANIFEST_BYTES + 1)
        else:
            path = Path(app.confdir) / source
            if path.is_dir():
                path = path / MANIFEST
            where = os.fspath(path)
            with open(path, "rb") as f:
                raw = f.read(MAX_MANIFEST_BYTES + 1)
        if len(raw) > MAX_MANIFEST_BYTES:
            raise ValueError(f"over {MAX_MANIFEST_BYTES >> 20} MB")
        return _objects(json.loads(raw))
    except (OSError, ValueError, RecursionError) as err:
        warn(
            MOVED,
            f"torchtrace_moved_baseline: cannot read {console_text(where)!r} "
            f"({console_text(str(err))[:200]}); compared with the last build instead",
        )
        return None


def _objects(data: Any) -> dict[str, str]:
    """The manifest's ``objects`` (ValueError for anything but ``{name: meaning}``)."""
    objects = data.get("objects") if isinstance(data, dict) else None
    if not isinstance(objects, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in objects.items()
    ):
        raise ValueError(f"not a {MANIFEST}: no {{name: meaning}} under 'objects'")
    return objects


def _message(changed: list[tuple[str, str, str]], than: str) -> str:
    listed = "; ".join(
        f"{name} was {old}, is now {new}" for name, old, new in changed[:NAMES_LISTED]
    )
    more = f"; and {len(changed) - NAMES_LISTED} more" if len(changed) > NAMES_LISTED else ""
    return (
        f"{len(changed)} object name(s) stand for another function than {than}: "
        f"{listed}{more} (check the links to them in your pages)"
    )
