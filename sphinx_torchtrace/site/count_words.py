"""Graph breaks and errors counted in words: ``6 graph breaks (5 kinds, 6 places)``, as
every surface says them (the glance, the failures section, the CLI's summary), from the
figures the model counts (:class:`~..trace.analyses.graph_breaks.BreakCounts`)."""

from __future__ import annotations


def counts_text(n: int, noun: str, kinds: int, places: int, unplaced: int = 0) -> str:
    """``6 graph breaks (5 kinds, 6 places)``: what every surface says of them."""
    return f"{n} {noun if n == 1 else noun + 's'}" + kinds_text(n, kinds, places, unplaced)


def kinds_text(n: int, kinds: int, places: int, unplaced: int = 0) -> str:
    """`` (5 kinds, 6 places)`` after a count of more than one break or error; the ones
    the log names no place for are said apart (a place is a line of the user's code)."""
    if n <= 1:
        return ""
    said = [f"{kinds} kind{'' if kinds == 1 else 's'}"]
    if places:
        said.append(f"{places} place{'' if places == 1 else 's'}")
    if unplaced:
        said.append(f"{unplaced} with no place logged" if places else "no place logged")
    return f" ({', '.join(said)})"
