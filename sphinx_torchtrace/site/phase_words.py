"""Compile-time phases in words: the pages' name for each figure the model sums
(:data:`~..trace.analyses.summary.TIME_PHASES`), for the overview's compile-time table and
the comparison's.

Each is named with torch's key: a gloss such as "AOT Autograd + Inductor" would not hold for
a run with another backend.  The diff JSON names phases by its own published names
(``trace/comparing/diff.py``), which do not follow these.
"""

from __future__ import annotations

#: Each phase, as a table row names it.
PHASE_WORDS: dict[str, str] = {
    "entire_frame": "Whole frame (entire_frame_compile_time_s)",
    "dynamo_before_restart": "Dynamo before a restart (dynamo_time_before_restart_s)",
    "backend": "Backend (backend_compile_time_s)",
    "inductor": "Inductor (inductor_compile_time_s)",
    "code_gen": "Code generation (code_gen_time_s)",
    "backward_inductor": "Backward: Inductor (inductor_compile_time_s)",
    "backward_code_gen": "Backward: code generation (code_gen_time_s)",
}


def phase_words(key: str) -> str:
    """The words for one phase (a phase of a newer model: its key)."""
    return PHASE_WORDS.get(key, key)
