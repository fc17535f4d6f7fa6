"""Compile-time phases in words: the pages' name for each figure the model sums
(:data:`~..trace.analyses.phases.TIME_PHASES`), for the overview's compile-time table and
the comparison's.

Each is named with torch's key: a gloss such as "AOT Autograd + Inductor" would not hold for
a run with another backend.  The diff JSON names phases by its own published names
(``trace/comparing/json_form.py``); these start from them and may change on their own.
"""

from __future__ import annotations

from ..trace.comparing.json_form import JSON_PHASE_NAMES

#: Each phase, as a table row names it: today the names the diff JSON publishes
#: (torch's key in each); a page's wording changes here, never the JSON's.
PHASE_WORDS: dict[str, str] = dict(JSON_PHASE_NAMES)


def phase_words(key: str) -> str:
    """The words for one phase (a phase of a newer model: its key)."""
    return PHASE_WORDS.get(key, key)
