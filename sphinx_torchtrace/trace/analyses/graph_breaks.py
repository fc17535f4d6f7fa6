"""Graph breaks and compile errors as values: the parse of torch's message, and one event
per thing that went wrong.

Since about torch 2.7 a graph-break message has a shape: a header (``Graph break in user
code at FILE:LINE``), the reason (``Graph Break Reason: ...``), then one *part* per break
(the first, and each one chained after ``*** While handling this graph break, another
graph break occurred: ***``), each with its type line, ``Explanation:``, ``Hint:`` lines,
``Developer debug context:`` and a link to PyTorch's graph-break registry
(``.../gb/gb0025.html``: id ``GB0025``); then ``Stack variable source attribution:``,
``User code traceback:`` and Python's own traceback.  The same text, or its parts alone,
is in ``dynamo_graph_break_reason`` artifacts, ``restart_reasons``, ``fail_reason`` and
TORCH_LOGS lines.  :func:`parse_message` reads any of them; what it does not recognize
stays in the text, never dropped.

torch logs one event more than once (a ``dynamo_graph_break_reason`` artifact *and* the
restart reason of the next attempt; the artifact *and* the ``fail_reason`` of a frame it
made torch skip).  :func:`break_events` gives each event once, so every count of the
site comes from one list; :func:`event_groups` folds them into the rows a reader scans.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..model import Compile, Failure
from ..reader import json_list
from .outcome import Outcome, failure_outcome

#: Where torch chains one graph break to the next.
CHAIN_MARKER = "While handling this graph break, another graph break occurred"
_REGISTRY_URL = re.compile(
    r"https?://(?:meta-)?pytorch\.github\.io/compile-graph-break-site/gb/(gb\d{4})\.html"
)
_HEADER = re.compile(r"^Graph break in user code at (.+):(\d+)\s*$")
_TRACEBACK_FRAME = re.compile(r'^\s*File "(.+)", line (\d+)(?:, in (.+))?\s*$')
#: Lines of a message read at most: a cut or hostile message costs bounded time.
MAX_LINES = 20_000
#: Characters of one field kept (a type line, an explanation, a hint).
MAX_FIELD = 2_000

Category = Literal["graph_break", "error", "restart"]
#: A restart reason that names only an exception class of torch's restarts
#: (``<class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>``): Dynamo started its
#: analysis over, with no graph break: counted as a restart, never as a break.
_RESTART_ONLY = re.compile(r"^\s*<class '[\w.]*Restart\w*'>\s*$")


@dataclass(frozen=True, slots=True)
class UserFrame:
    """A frame of user code named by the message: where the break happened or was called."""

    filename: str
    line: int
    function: str | None = None

    @property
    def location(self) -> str:
        return f"{self.filename}:{self.line}"


@dataclass(frozen=True, slots=True)
class BreakPart:
    """One graph break of a message: the first, or one chained after it."""

    type: str  # torch's gb_type line: "Call to `torch._dynamo.graph_break()`"
    registry_id: str | None = None  # "GB0025", from the registry link
    explanation: str | None = None
    hints: tuple[str, ...] = ()
    context: str | None = None  # "Developer debug context:"
    url: str | None = None

    @property
    def key(self) -> str:
        """What makes two parts the same break: the registry id, else the type line."""
        return self.registry_id or self.type


@dataclass(frozen=True, slots=True)
class BreakMessage:
    """A graph-break or compile-error message, read."""

    text: str
    location: UserFrame | None = None  # from the header, with the function when known
    reason: str | None = None  # "Encountered graph break when attempting to trace CALL: ..."
    parts: tuple[BreakPart, ...] = ()
    attribution: str | None = None  # "Stack variable source attribution:" section
    user_traceback: tuple[UserFrame, ...] = ()
    headline: str = ""  # one line that names it: the first part's type, or the message's

    @property
    def key(self) -> tuple[str, ...]:
        """The parts' keys: two messages with the same key report the same break(s)."""
        return tuple(p.key for p in self.parts) or (self.headline,)

    @property
    def first_part(self) -> BreakPart:
        """The break that caused the others; a message torch cut before its first part is
        a part named by what it said, so it is never left out."""
        return self.parts[0] if self.parts else BreakPart(self.headline)


def _clip(text: str) -> str:
    text = text.strip()
    return text if len(text) <= MAX_FIELD else text[: MAX_FIELD - 1] + "…"


def _strip_marker(line: str) -> str:
    return line.strip().strip("*").strip()


def parse_message(text: str) -> BreakMessage:
    """Read a graph-break or error message; a text that does not parse keeps its first line."""
    lines = text.splitlines()[:MAX_LINES]
    # Python's traceback and what follows it repeat the message: read what comes before.
    for i, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last)"):
            lines = lines[:i]
            break
    location: UserFrame | None = None
    reason: str | None = None
    sections: dict[str, list[str]] = {"attribution": [], "traceback": []}
    chunks: list[list[str]] = [[]]
    current: list[str] | None = None
    for line in lines:
        stripped = line.strip()
        header = _HEADER.match(stripped)
        if header and location is None and not any(chunks):
            location = UserFrame(header.group(1), int(header.group(2)))
            continue
        if stripped.startswith("Graph Break Reason:") and reason is None:
            reason = _clip(stripped[len("Graph Break Reason:") :])
            if not reason.endswith(":"):  # older torch: the reason is the break's type
                chunks[-1].append(reason)
            continue
        if stripped.startswith("Stack variable source attribution:"):
            current = sections["attribution"]
            continue
        if stripped.startswith("User code traceback:"):
            current = sections["traceback"]
            continue
        if CHAIN_MARKER in stripped:
            current = None
            chunks.append([])
            continue
        if current is not None:
            current.append(line)
        else:
            chunks[-1].append(line)
    parts = tuple(p for p in (_part(chunk) for chunk in chunks) if p is not None)
    frames = tuple(_frames(sections["traceback"]))
    if location is not None and frames:
        last = frames[-1]
        if (last.filename, last.line) == (location.filename, location.line):
            location = last
    elif location is None and frames:
        location = frames[-1]
    attribution = "\n".join(sections["attribution"]).strip("\n") or None
    headline = parts[0].type if parts else _first_line(text)
    return BreakMessage(text, location, reason, parts, attribution, frames, _clip(headline))


def _first_line(text: str) -> str:
    for line in text.splitlines()[:MAX_LINES]:
        if line.strip() and not _HEADER.match(line.strip()):
            return line.strip()
    return "(no reason logged)"


def _part(lines: Sequence[str]) -> BreakPart | None:
    """One break from its lines: the type line first, then its labelled fields."""
    type_line: str | None = None
    explanation: list[str] = []
    hints: list[str] = []
    context: list[str] = []
    url: str | None = None
    field_: list[str] | None = None
    for line in lines:
        text = _strip_marker(line) if "***" in line else line.strip()
        if not text:
            field_ = None
            continue
        link = _REGISTRY_URL.search(text)
        if link:
            url = link.group(0)
            field_ = None
            continue
        if text.startswith("Explanation:"):
            explanation.append(text[len("Explanation:") :].strip())
            field_ = explanation
        elif text.startswith("Hint:"):
            hints.append(text[len("Hint:") :].strip())
            field_ = None
        elif text.startswith("Developer debug context:"):
            context.append(text[len("Developer debug context:") :].strip())
            field_ = context
        elif type_line is None:
            type_line = text
        elif type_line.endswith(":") and not explanation and not hints:
            type_line = f"{type_line} {text}"  # "backend='x' raised:" + the exception line
        elif field_ is not None:
            field_.append(text)
        elif text.startswith("For more details about this graph break"):
            continue
    if type_line is None and not explanation and url is None:
        return None
    registry = re.search(r"gb\d{4}", url).group(0).upper() if url else None  # type: ignore[union-attr]
    return BreakPart(
        _clip(type_line or "(graph break)"),
        registry,
        _clip(" ".join(explanation)) if explanation else None,
        tuple(_clip(h) for h in dict.fromkeys(hints) if h),
        _clip(" ".join(context)) if context else None,
        url,
    )


def _frames(lines: Sequence[str]) -> Iterable[UserFrame]:
    for line in lines:
        match = _TRACEBACK_FRAME.match(line)
        if match:
            yield UserFrame(match.group(1), int(match.group(2)), match.group(3))


# -- events ---------------------------------------------------------------------------------


@dataclass(slots=True)
class BreakEvent:
    """One graph break or compile error, however many records torch logged it in.

    ``compile`` is the attempt that broke (or failed); ``failures`` the records, first the
    one the event is read from.
    """

    category: Category
    compile: Compile
    failures: list[Failure]
    message: BreakMessage
    type: str | None = None  # the exception type of an error
    in_metrics: bool = True  # recorded by the compilation metrics (restart or fail reason)
    #: What followed an error, as the log records it (:mod:`.outcome`); None for a break.
    outcome: Outcome | None = None

    @property
    def failure(self) -> Failure:
        return self.failures[0]

    @property
    def location(self) -> str | None:
        """``file:line`` in the user's code: the innermost frame outside torch, the
        standard library and site-packages (see :func:`failure_places`)."""
        return self.places[0]

    @property
    def torch_location(self) -> str | None:
        """Where in torch it was raised, when torch named a frame of its own."""
        return self.places[1]

    @property
    def places(self) -> tuple[str | None, str | None]:
        named = named_place(self.compile, self.failures, self.message)
        return failure_places(self.compile, self.failure.reason, named)


def named_place(
    compile_: Compile, failures: Sequence[Failure], message: BreakMessage
) -> str | None:
    """The place torch named for a failure: the message's header, a record's user
    location, else the metrics' ``fail_user_frame`` (for an error)."""
    if message.location is not None:
        return message.location.location
    for f in failures:
        if f.user_location:
            return f.user_location
    if any(f.kind == "failure" for f in failures):
        data = _metrics_data(compile_)
        filename, lineno = data.get("fail_user_frame_filename"), data.get("fail_user_frame_lineno")
        if filename:
            return f"{filename}:{lineno}" if lineno is not None else str(filename)
    return None


def is_library_file(filename: str) -> bool:
    """Torch, the standard library and installed packages: not the code a reader wrote."""
    f = filename.replace("\\", "/")
    return (
        "/site-packages/" in f
        or "/dist-packages/" in f
        or "/torch/_" in f
        or "/lib/python3" in f
        or f.startswith(("<frozen", "<string>"))
    )


def failure_places(
    compile_: Compile, reason: str, named: str | None
) -> tuple[str | None, str | None]:
    """(the user's line, torch's line) of a failure torch placed at ``named`` (or nowhere).

    torch names the innermost frame it was tracing, which may be torch's own code it
    inlined (a higher-order op, a custom op's wrapper).  The user's line is then the
    innermost frame outside libraries among: the message's user traceback, the frames of
    the logged Python traceback, and the compile's logged stack (the root frame's line).
    """
    if named is not None and not is_library_file(named.rsplit(":", 1)[0]):
        return named, None
    data = _metrics_data(compile_)
    traces = [list(parse_message(reason).user_traceback) if reason else []]
    traces.append(list(_frames(_user_code_section(reason))))
    traces += [
        list(_frames(_user_code_section(a.text())))
        for a in compile_.artifacts_named("dynamo_error")
        if a.payload is not None
    ]
    traces += [
        list(_frames(t.splitlines()[:MAX_LINES]))
        for t in json_list(data.get("exception_stack_trace"))
        if isinstance(t, str)
    ]
    if named is not None:
        # last, where torch compiled a frame of its own (a higher-order op called eagerly):
        # the user's call into it, from the stack logged when the compile started
        traces.append([UserFrame(f.filename, f.line, f.name) for f in compile_.stack or []])
    for frames in traces:  # torch's user stack first, then Python's traceback
        user = [f for f in frames if not is_library_file(f.filename)]
        if user:
            return user[-1].location, named
    return named, None  # the log names no line of the user's: torch's, as torch said


def _user_code_section(text: str) -> list[str]:
    """The lines of torch's user stack in an error message, ``from user code:`` or ``User
    stack:`` (the user's call into torch first, torch's own frames after it)."""
    lines = text.splitlines()[:MAX_LINES]
    for i, line in enumerate(lines):
        if line.strip() in ("from user code:", "User stack:"):
            return lines[i + 1 :]
    return []


def _metrics_data(compile_: Compile) -> dict[str, Any]:
    for m in compile_.compilation_metrics:
        return m.data
    return {}


def break_events(compiles: Sequence[Compile]) -> list[BreakEvent]:
    """Every graph break and compile error of these compiles once, in log order.

    - The restart reasons of an attempt repeat the graph breaks logged by the attempt
      before it (same compile id and occurrence): one event each, on the attempt that broke.
    - A ``fail_type`` on an attempt that also logged a graph break is that break making
      torch give up on the frame (a break in a loop, ``fullgraph=True``): one event, an
      error, as tlparse counts it, read from the graph-break record (it says more).
    - A graph break no restart repeats (a data-dependent jump: torch compiles the graph so
      far and resumes, no restart) is an event too, though no metrics record it: tlparse's
      failures table, read from the metrics alone, leaves it out (``in_metrics`` False).
    - A restart whose reason names only a restart exception class is a ``restart``: Dynamo
      started over with no graph break.
    """
    restarts_of: dict[tuple[Any, int, int], int] = {}
    for c in compiles:
        n = sum(f.kind == "restart" for f in c.failures)
        if n:
            key = (c.id.frame, c.occurrence, c.id.attempt)
            restarts_of[key] = restarts_of.get(key, 0) + n
    repeated: dict[tuple[Any, int, int], int] = {}  # restarts an earlier attempt's breaks took
    events: list[BreakEvent] = []
    for c in compiles:
        breaks = [f for f in c.failures if f.kind == "graph_break"]
        errors = [f for f in c.failures if f.kind == "failure"]
        restarts = [f for f in c.failures if f.kind == "restart"]
        for i, error in enumerate(errors):
            records = [*breaks, error] if i == 0 and breaks else [error]
            text = _text(records[0].reason)
            message = parse_message(text)
            found = failure_outcome(c)
            outcome = found.outcome if found is not None else "not_recorded"
            # a built-in error torch raised as InternalTorchDynamoError is named so
            shown = error.type
            if found is not None and found.raised_as and error.type:
                shown = f"{found.raised_as} ({error.type})"
            events.append(BreakEvent("error", c, records, message, shown, outcome=outcome))
        if not errors:
            after = (c.id.frame, c.occurrence, c.id.attempt + 1)
            left = restarts_of.get(after, 0) - repeated.get(after, 0)
            for f in breaks:
                message = parse_message(_text(f.reason))
                events.append(BreakEvent("graph_break", c, [f], message, in_metrics=left > 0))
                if left > 0:
                    repeated[after] = repeated.get(after, 0) + 1
                    left -= 1
        already = repeated.get((c.id.frame, c.occurrence, c.id.attempt), 0)
        for f in restarts[already:]:
            kind: Category = "restart" if _RESTART_ONLY.match(_text(f.reason)) else "graph_break"
            events.append(BreakEvent(kind, c, [f], parse_message(_text(f.reason))))
    return events


def _text(reason: object) -> str:
    return reason if isinstance(reason, str) else str(reason)


# -- groups ---------------------------------------------------------------------------------


@dataclass
class EventGroup:
    """Events that are the same break (or error) at the same place: one row of a table."""

    category: Category
    type: str | None  # the exception type of errors
    key: tuple[str, ...]  # the parts' registry ids or types
    location: str | None
    message: BreakMessage  # the first event's
    events: list[BreakEvent] = field(default_factory=list)
    #: What followed the errors of the row (raised, ran eagerly ...): a raised and a
    #: suppressed error of one type are two rows.  None for graph breaks.
    outcome: Outcome | None = None

    @property
    def compiles(self) -> list[Compile]:
        """The compiles listed in the row, distinct, in first-seen order."""
        seen: dict[int, Compile] = {}
        for e in self.events:
            seen.setdefault(id(e.compile), e.compile)
        return list(seen.values())

    @property
    def count(self) -> int:
        return len(self.events)

    @property
    def identity(self) -> tuple[Any, ...]:
        """What makes two rows (of two ranks, say) the same distinct break."""
        return _identity(self.category, self.type, self.message, self.location, self.outcome)


def _identity(
    category: Category,
    type_: str | None,
    message: BreakMessage,
    location: str | None,
    outcome: Outcome | None,
) -> tuple[Any, ...]:
    """A row's key.  An error's explanation is part of it: one registry id may say two
    things (GB0039 past ``recompile_limit`` 2 and past ``accumulated_recompile_limit`` 6), and
    a row shows the first event's words for all of them."""
    said = message.first_part.explanation if category == "error" else None
    return (category, type_, message.key, location, outcome, said)


def event_groups(events: Iterable[BreakEvent]) -> list[EventGroup]:
    """Rows: errors first, then graph breaks; one per (kind, parts, user location, and
    for errors what followed them and what torch explained)."""
    groups: dict[tuple[Any, ...], EventGroup] = {}
    for e in events:
        key = _identity(e.category, e.type, e.message, e.location, e.outcome)
        group = groups.get(key)
        if group is None:
            group = groups[key] = EventGroup(
                e.category, e.type, e.message.key, e.location, e.message, outcome=e.outcome
            )
        group.events.append(e)
    order = {"error": 0, "graph_break": 1, "restart": 2}
    return sorted(groups.values(), key=lambda g: (order[g.category], -g.count))


@dataclass(frozen=True)
class BreakCounts:
    """The figures every page and command says of graph breaks and errors, defined once.

    - ``graph_breaks``: each graph break torch logged that did not stop its frame, once
      however many records repeat it (:func:`break_events`; a chained break is part of the
      break that caused it, not one of its own);
    - ``break_types``: distinct types among them (the first part's registry id, else its
      type line; the pages say "kinds");
    - ``break_places``: distinct places in the user's code named for them (kind and line);
      ``break_unplaced``: those for which the log names no place;
    - ``distinct_breaks``: rows of the failures table (kind and place);
    - ``errors``, ``error_types`` (exception type and message parts), ``error_places``,
      ``error_unplaced`` and ``distinct_errors`` (rows: kind, place, what followed and
      torch's explanation): the same for compile errors.
    """

    graph_breaks: int
    distinct_breaks: int
    errors: int
    distinct_errors: int
    break_types: int = 0
    error_types: int = 0
    break_places: int = 0
    break_unplaced: int = 0
    error_places: int = 0
    error_unplaced: int = 0
    #: Restarts of Dynamo's analysis that were no graph break (``TensorifyScalar...``).
    restarts: int = 0


def break_counts(groups: Sequence[EventGroup]) -> BreakCounts:
    """Events, kinds, places and rows by category; rows of several ranks with one key
    count once."""
    breaks = [g for g in groups if g.category == "graph_break"]
    errors = [g for g in groups if g.category == "error"]
    return BreakCounts(
        sum(g.count for g in breaks),
        len({g.identity for g in breaks}),
        sum(g.count for g in errors),
        len({g.identity for g in errors}),
        len({g.message.first_part.key for g in breaks}),
        len({(g.type, g.key) for g in errors}),
        len({(g.message.first_part.key, g.location) for g in breaks if g.location}),
        sum(g.count for g in breaks if not g.location),
        len({(g.type, g.key, g.location) for g in errors if g.location}),
        sum(g.count for g in errors if not g.location),
        sum(g.count for g in groups if g.category == "restart"),
    )
