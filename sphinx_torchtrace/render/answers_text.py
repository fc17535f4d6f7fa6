"""``summary``'s answer as terminal lines: each failure, recompile and slow compile with
its place and its record, in the overview's order, coloured only where asked.

Every line is built of segments; each segment's text passes :func:`console_text`
(controls escaped, secrets masked) before any colour is put around it, so only our own
escape codes reach the terminal, and every line starts with our words or with blanks,
never with text of the log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..site.characters import console_text
from ..site.guard_words import guard_words
from ..site.outcome_words import OUTCOME_WORDS, REFUSAL_WORDS
from ..trace.analyses.answers import (
    Answers,
    CompileRef,
    Failure,
    GuardAnswer,
    Recompiled,
    Record,
    SlowCompile,
    bounded,
)

#: How many of each list the text shows without ``--all``.
FAILURES_SHOWN = 10
FUNCTIONS_SHOWN = 10
GUARDS_SHOWN = 3  # recompiles of one function
SLOWEST_SHOWN = 5
COMPILES_SHOWN = 4  # compile ids of one failure
RECORDS_SHOWN = 3  # records of one failure
#: Characters of torch's explanation a line shows (the record has all of it).
WORDS_SHOWN = 300
#: The width of a row's label, as ``summary``'s figures line up.
LABEL_WIDTH = 15

_CODES = {"bold": "1", "red": "31", "yellow": "33", "cyan": "36", "dim": "2", "green": "32"}
Segment = tuple[str, str]  # (text, style: a key of _CODES, or "")


def wants_colour(is_tty: bool, environ: Mapping[str, str]) -> bool:
    """Colour on a terminal only: ``NO_COLOR`` (any value but empty) turns it off,
    ``FORCE_COLOR`` (the same) on even in a pipe; ``NO_COLOR`` wins where both are set;
    a ``dumb`` terminal gets none."""
    if environ.get("NO_COLOR"):
        return False
    if environ.get("FORCE_COLOR"):
        return True
    return is_tty and environ.get("TERM") != "dumb"


class Lines:
    """Output lines made of escaped segments, coloured when ``colour``."""

    def __init__(self, colour: bool) -> None:
        self.colour = colour
        self.lines: list[str] = []

    def add(self, *segments: Segment | str) -> None:
        parts = []
        for segment in segments:
            text, style = (segment, "") if isinstance(segment, str) else segment
            shown = console_text(text)
            if self.colour and style and shown:
                shown = f"\x1b[{_CODES[style]}m{shown}\x1b[0m"
            parts.append(shown)
        self.lines.append("".join(parts))

    def row(self, label: str, *value: Segment | str) -> None:
        """``label:        value``: one of summary's figures."""
        self.add((f"{label + ':':<{LABEL_WIDTH}}", "bold"), " ", *value)

    def heading(self, text: str, note: str = "") -> None:
        self.add("")
        self.add((text, "bold"), note)


def _more(n: int, what: str = "more") -> str:
    return f" and {n} {what}" if n else ""


def _cut(text: str, limit: int = WORDS_SHOWN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short(text: str, limit: int = WORDS_SHOWN) -> str:
    """A name or a place, cut where a log made it absurdly long (its characters kept)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compiles(refs: Sequence[CompileRef]) -> str:
    distinct = list(dict.fromkeys(refs))
    shown, more = bounded(distinct, COMPILES_SHOWN)
    return ", ".join(str(r) for r in shown) + _more(more)


def _records(records: Sequence[Record]) -> str:
    shown, more = bounded(records, RECORDS_SHOWN)
    return ", ".join(str(r) for r in shown) + _more(more)


def log_rows(out: Lines, answers: Answers) -> None:
    """Which log was read, first: a folder's chosen file and why it was chosen."""
    read = answers.log
    if not read.folder:
        named = read.why == "the file named"  # else say what kind of log it is
        out.row("log", (read.path, "cyan"), *([] if named else [f" ({read.why})"]))
        return
    shown, more = bounded(read.logs, 4)
    out.row("log", (read.path, "cyan"), f": {read.why}")
    for log in shown:
        out.add(" " * (LABEL_WIDTH + 1), "read ", (log, "cyan"))
    if more:
        out.add(" " * (LABEL_WIDTH + 1), f"and {more} more logs")


def failure_lines(out: Lines, failures: Sequence[Failure], limit: int | None) -> None:
    """Compile errors first, then graph breaks and restarts, the most frequent first."""
    if not failures:
        return
    shown, more = bounded(failures, limit)
    note = f" ({len(shown)} of {len(failures)}; --all lists every one)" if more else ""
    out.heading("Compile errors and graph breaks", note + ":")
    for f in shown:
        if f.category == "error":
            head: list[Segment | str] = [("compile error", "red")]
            if f.error_type:
                head.append(f" {f.error_type}")
        elif f.category == "graph_break":
            head = [("graph break", "yellow")]
        else:
            head = [("restart", "yellow"), " (no graph break)"]
        if f.count > 1:
            head.append(f" ×{f.count}")
        head += [": ", (_cut(f.headline), "bold")]
        if f.registry_id:
            head.append(f" ({f.registry_id})")
        if f.outcome is not None:
            head.append(f"; {OUTCOME_WORDS[f.outcome]}")
        out.add("  ", *head)
        place: list[Segment | str] = (
            ["at ", (_short(f.place), "cyan")]
            if f.place
            else ["the log names no place in your code"]
        )
        if f.torch_place:
            place += [", raised in library code at ", _short(f.torch_place)]
        out.add("      ", *place, f", in {_compiles(f.compiles)}")
        why = f.explanation or (f.reason if f.reason and not f.reason.endswith(":") else None)
        if why:
            out.add("      why: ", _cut(why))
        out.add("      logged at ", (_records(f.records), "dim"))
    if more:
        out.add(f"  and {more} more (--all lists them; --json has every one)")


def _guard_line(g: GuardAnswer) -> list[Segment | str]:
    said: list[Segment | str] = [(str(g.compile), "bold"), ": "]
    if g.refused is not None:
        why = REFUSAL_WORDS[g.refused]
        said.append(f"no version made: {why[:1].lower()}{why[1:]}; ")
    if g.guard is None:
        said.append("no reason logged")
        return said
    said.append(guard_words(g.kind or "other"))
    if g.against:
        said.append(f" (a guard of {g.against} failed)")
    said += [": ", (_cut(g.guard), "cyan")]
    return said


def recompile_lines(out: Lines, functions: Sequence[Recompiled], limit: int | None) -> None:
    """Each recompiled function, with the guard that failed for each new version."""
    if not functions:
        return
    shown, more = bounded(functions, limit)
    note = f" ({len(shown)} of {len(functions)}; --all lists every one)" if more else ""
    out.heading("Recompiled functions", note + ":")
    for fn in shown:
        n = len(fn.recompiles)
        head: list[Segment | str] = ["  ", (_short(fn.function), "bold")]
        if fn.place and fn.place not in fn.function:
            head += [" at ", (_short(fn.place), "cyan")]
        if fn.rank is not None:
            head.append(f" on rank {fn.rank}")
        head.append(f": {fn.versions} version{'' if fn.versions == 1 else 's'}, ")
        head.append(f"{n} recompile{'' if n == 1 else 's'}")
        if fn.refused:
            head.append(f", {len(fn.refused)} refused")
        out.add(*head)
        guards = [*fn.recompiles, *fn.refused]
        listed, rest = bounded(guards, None if limit is None else GUARDS_SHOWN)
        for g in listed:
            out.add("      ", *_guard_line(g))
            if g.record is not None:
                out.add("          logged at ", (str(g.record), "dim"))
        if rest:
            out.add(f"      and {rest} more")
    if more:
        out.add(f"  and {more} more functions (--all lists them; --json has every one)")


def slowest_lines(out: Lines, slowest: Sequence[SlowCompile], limit: int | None) -> None:
    """The compiles that took longest, by their metrics' whole-frame time."""
    if not slowest:
        return
    shown, more = bounded(slowest, limit)
    note = f" ({len(shown)} of {len(slowest)})" if more else ""
    out.heading("Slowest compiles", note + ":")
    for s in shown:
        line: list[Segment | str] = ["  ", (f"{s.seconds:8.2f} s", "bold"), "  ", str(s.compile)]
        if s.function:
            line += [" ", (_short(s.function), "bold")]
        if s.place:
            line += [" at ", (_short(s.place), "cyan")]
        if s.record is not None:
            line += [", logged at ", (str(s.record), "dim")]
        out.add(*line)


def answer_lines(
    answers: Answers,
    rows: Sequence[tuple[str, str]],
    time_rows: Sequence[tuple[str, str]],
    *,
    colour: bool,
    everything: bool = False,
) -> list[str]:
    """The whole text: the log read, ``rows`` (the glance's figures), the failures, the
    recompiles, then the slowest compiles and ``time_rows`` (where the time went)."""
    out = Lines(colour)
    log_rows(out, answers)
    for label, value in rows:
        out.row(label, value)
    failure_lines(out, answers.failures, None if everything else FAILURES_SHOWN)
    recompile_lines(out, answers.recompiled, None if everything else FUNCTIONS_SHOWN)
    slowest_lines(out, answers.slowest, None if everything else SLOWEST_SHOWN)
    if time_rows:
        if not answers.slowest:
            out.add("")
        for label, value in time_rows:
            out.row(label, value)
    if answers.failures or answers.recompiled:
        out.add("")
        out.add("(sphinx-torchtrace show LOG:LINE prints a record; build makes the report)")
    return out.lines
