"""What failed, restarted or broke the graph, as torch structures the message."""

from __future__ import annotations

from ....trace import Artifact, Compile, Failure
from ....trace.analyses.graph_breaks import BreakMessage, failure_places, named_place, parse_message
from ....trace.analyses.outcome import failure_outcome
from ...blocks import (
    AnchorLink,
    Block,
    BulletList,
    Code,
    CodeBlock,
    Dropdown,
    Inline,
    Lines,
    Link,
    ObjectLink,
    Paragraph,
    Section,
    Strong,
    linked,
)
from ...words import _
from .view import FrameView, artifact_anchor

FAILURE_TITLES: dict[str, str] = {
    "failure": "Failure",
    "restart": "Restart",
    "graph_break": "Graph break",
}


def section(view: FrameView) -> Section | None:
    """Each failure, restart and graph break, then the tracebacks torch logged."""
    c = view.compile
    if not c.failures:
        return None
    title = failures_title(c)
    blocks: list[Block] = []
    for failure in c.failures:
        blocks += _failure_blocks(view, failure)
    for a in c.artifacts_named("dynamo_error"):
        if a.payload is not None:
            blocks.append(
                Dropdown(
                    [f"Traceback of the error (dynamo_error, line {a.line} of the log)"],
                    [CodeBlock(view.strip(a.text()), "pytb")],
                    anchor=artifact_anchor(a),
                )
            )
    return Section([title], blocks, anchor="failures")


def failures_title(c: Compile) -> str:
    """The failures section's title, which the artifacts shown in it are said to be under."""
    if len(c.failures) > 1:
        return "Failures, restarts and graph breaks"
    return FAILURE_TITLES.get(c.failures[0].kind, "Failure")


def _failure_blocks(view: FrameView, failure: Failure) -> list[Block]:
    """A failure as torch structures it: each break's type, registry id, explanation and
    hints, a chained break under "Then"; the debug context and the whole message folded."""
    reason = failure.reason
    message = parse_message(reason)
    head: list[Inline] = [Strong(failure.type or failure.kind.replace("_", " "))]
    found = failure_outcome(view.compile) if failure.kind == "failure" else None
    if found is not None and found.raised_as:  # torch's own error, as torch raised it
        head = [Strong(f"{found.raised_as} ({failure.type})")]
    error = next((f for f in view.compile.failures if f.kind == "failure"), None)
    if failure.kind == "graph_break" and error is not None:
        # one event, as the overview counts it: the break that made the compile fail
        head = [Strong("Compile error"), f" ({error.type or 'failure'}): a graph break"]
    named = named_place(view.compile, [failure], message)
    where, in_torch = failure_places(view.compile, reason, named)
    if where:
        head += [" at ", Code(view.strip(where))]
    if in_torch:
        head += [" (raised in library code at ", Code(view.strip(in_torch)), ")"]
    head.append(f" (line {failure.line} of the log)" + (":" if message.parts else "."))
    blocks: list[Block] = [Paragraph(head)]
    if not message.parts and reason.strip():
        blocks.append(Paragraph(linked(view.strip(message.headline))))
    for i, part in enumerate(message.parts):
        title: list[Inline] = ["Then: "] if i else []
        title.append(Strong(view.strip(part.type)))
        if part.registry_id:
            title += [" (", Link(part.url, part.registry_id) if part.url else part.registry_id, ")"]
        lines: list[list[Inline]] = [title]
        if part.explanation:
            lines.append(linked(view.strip(part.explanation)))
        blocks.append(Lines(lines))
        hints = [h for h in part.hints if not h.lower().startswith("please report")]
        if hints:
            items = [[Paragraph(["Hint: ", *linked(view.strip(h))])] for h in hints]
            blocks.append(BulletList(items))
    blocks += _failure_links(view, failure, message)
    contexts = [p.context for p in message.parts if p.context]
    folded = "\n".join(contexts)
    if folded:
        context = CodeBlock(view.strip(folded), "text")
        blocks.append(Dropdown([_("Developer debug context")], [context]))
    logged = _logged_break(view.compile, failure)  # its artifact's row links this fold
    if message.parts or reason.strip() != message.headline or logged is not None:
        whole = "The whole message, with tracebacks"
        anchor = ""
        if logged is not None:
            whole += f" ({logged.name}, line {logged.line} of the log)"
            anchor = artifact_anchor(logged)
        blocks.append(Dropdown([whole], [CodeBlock(view.strip(reason), "text")], anchor=anchor))
    return blocks


def _logged_break(c: Compile, failure: Failure) -> Artifact | None:
    """The ``dynamo_graph_break_reason`` artifact a graph break was read from: its text is
    the break's whole message, so the page shows it once, here, at the artifact's anchor."""
    if failure.kind != "graph_break":
        return None
    for a in c.artifacts_named("dynamo_graph_break_reason"):
        if a.line == failure.line and a.payload is not None and a.text().strip() == failure.reason:
            return a
    return None


def break_of(c: Compile, a: Artifact) -> Failure | None:
    """The graph break shown from artifact ``a``, if it is one (see :func:`_logged_break`)."""
    if a.name != "dynamo_graph_break_reason":
        return None
    return next((f for f in c.failures if _logged_break(c, f) is a), None)


def _failure_links(view: FrameView, failure: Failure, message: BreakMessage) -> list[Block]:
    """Where else to look: the break among the trace's distinct graph breaks (its ``gb``
    object, every place it happened) and where this compilation started in the stack trie."""
    links: list[list[Inline]] = []
    # a graph break that made torch give up on the frame is listed as that compile error
    failed = any(f.kind == "failure" for f in view.compile.failures)
    name = view.plan.break_object(message) if not failed else None
    if name is not None and view.settings.shows("failures"):
        gb = ObjectLink("gb", name, message.first_part.type)
        links.append(["This graph break, everywhere the trace has it: ", gb])
    anchor = view.plan.trie_anchor(view.frame) if view.settings.shows("trie") else None
    if anchor is not None:
        trie = AnchorLink(view.plan.index_docname, anchor, "where this compilation started")
        links.append(["In the overview's stack trie: ", trie])
    return [Lines(links)] if links else []
