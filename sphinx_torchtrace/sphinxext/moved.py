"""Object names whose meaning changed since the last build: ``torchtrace.moved``.

A recaptured trace numbers its frames anew: ``run/[13/0]`` was ``strict_peak`` and
is now ``strict_clip``, under the same URL and object name, so prose that links it
silently changes meaning.  The environment keeps what each name stood for; a name
that now stands for another function or file is one warning per directive (on its
page, at its line), naming old and new, so the links can be checked.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from .built import Built

#: Where the environment keeps each object name's meaning (pickled with it).
_ENV_MEANINGS = "torchtrace_object_meanings"
#: Names one warning lists; the rest are counted.
NAMES_LISTED = 10


def note_moved(app: Sphinx, registry: Built) -> None:
    """After this build's inputs are planned: compare each directive's object meanings
    with the last build's, add a ``moved`` note where they changed, keep the new ones."""
    before: dict[str, str] = getattr(app.env, _ENV_MEANINGS, {})
    now: dict[str, str] = {}
    for generated in registry.directives.values():
        meanings = generated.meanings()
        now.update(meanings)
        changed = [
            (name, before[name], meaning)
            for name, meaning in meanings.items()
            if name in before and before[name] != meaning
        ]
        if changed:
            generated.notes.append(("moved", _message(changed)))
    setattr(app.env, _ENV_MEANINGS, now)


def _message(changed: list[tuple[str, str, str]]) -> str:
    listed = "; ".join(
        f"{name} was {old}, is now {new}" for name, old, new in changed[:NAMES_LISTED]
    )
    more = f"; and {len(changed) - NAMES_LISTED} more" if len(changed) > NAMES_LISTED else ""
    return (f"{len(changed)} object name(s) now stand for another function: {listed}{more} "
            "(check the links to them in your pages)")
