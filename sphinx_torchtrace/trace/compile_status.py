"""A compile's own status, from its records, with tlparse's legend and check order.

``missing`` (no compilation metrics) → ``error`` (a ``fail_type``) →
``empty`` (``graph_op_count`` 0 or null) → ``break`` (non-empty
``restart_reasons``) → ``ok``.  One deliberate difference from tlparse 0.4.3:
tlparse counts a *null* ``restart_reasons`` as a break; a null list holds no
restart, so here it does not.

The readers set it while they build the model (it is part of what a log says), so these
rules sit beside the model; statuses over a frame's attempts are :mod:`.analyses.status`.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import Compile, Metrics, Status

#: vLLM's split of a Dynamo capture into pieces: after it, vLLM compiles the pieces itself.
VLLM_SPLIT = "vllm_piecewise_split_graph"


def combined_status(metrics: Iterable[Metrics]) -> Status:
    """The status over several ``compilation_metrics`` records (other kinds are ignored)."""
    records = [m for m in metrics if m.event == "compilation_metrics"]
    if not records:
        return "missing"
    if any(m.fail_type for m in records):
        return "error"
    if any(not m.data.get("graph_op_count") and names_graph(m) for m in records):
        return "empty"
    if any(m.restart_reasons for m in records):
        return "break"
    return "ok"


def names_graph(m: Metrics) -> bool:
    """Whether a metrics record can say a graph is empty: it names a frame, or gives a
    count (0 is a count)."""
    if m.data.get("graph_op_count") is not None:
        return True
    return any(m.data.get(k) is not None for k in ("compile_id", "frame_key", "co_name"))


def metrics_apart(compiles: list[Compile]) -> list[tuple[Compile, list[Metrics]]]:
    """Compiles whose Dynamo capture vLLM split and compiled itself, with the compilation
    metrics logged for it without a compile id.

    vLLM's ahead-of-time compile runs its backend outside Dynamo's compile context: only
    the capture (``dynamo_output_graph``) carries the id; the split
    (``vllm_piecewise_split_graph``), the piecewise compiles and their compilation metrics
    follow it without one.  Those metrics are the capture's outcome: its status reads
    them, so that it is not called ``missing``.  Only a compile with no metrics of its own,
    and only what the log puts between its capture and the next compile's first record.
    """
    unknown = [c for c in compiles if c.id.is_unknown]
    known = [c for c in compiles if not c.id.is_unknown]
    if not unknown:
        return []
    splits = sorted(a.line for u in unknown for a in u.artifacts if a.name == VLLM_SPLIT)
    loose = sorted(
        (m for u in unknown for m in u.compilation_metrics if not names_graph(m)),
        key=lambda m: m.line,
    )
    if not splits or not loose:
        return []
    out: list[tuple[Compile, list[Metrics]]] = []
    for c in known:
        graphs = [a.line for a in c.artifacts if a.event == "dynamo_output_graph"]
        if c.compilation_metrics or not graphs:
            continue
        begin = max(graphs)
        end = min((o.first_line for o in known if o.first_line > begin), default=None)
        split = next((s for s in splits if s > begin and (end is None or s < end)), None)
        if split is None:
            continue
        apart = [m for m in loose if m.line > split and (end is None or m.line < end)]
        if apart:
            out.append((c, apart))
    return out


def attempt_status(metrics: Iterable[Metrics], restarted: bool) -> Status:
    """The status of one attempt.

    torch logs a frame's compilation metrics once, under its last attempt; an
    earlier attempt was abandoned for a restart, so it is a ``break`` even
    though no metrics name it.
    """
    status = combined_status(metrics)
    if status == "missing" and restarted:
        return "break"
    return status


# -- a TORCH_LOGS text log: no metrics, statuses from what the lines say --------------------


def text_status(c: Compile) -> Status:
    """``error`` (a failure), ``break`` (restarted, or a graph break), else ``missing``;
    ``[-/-]`` is no compile: ``missing``, whatever failure it holds."""
    if c.id.is_unknown:
        return "missing"
    if any(f.kind == "failure" for f in c.failures):
        return "error"
    if c.restarted or any(f.kind == "graph_break" for f in c.failures):
        return "break"
    return "missing"


def combined_text_status(compiles: Iterable[Compile]) -> Status:
    """The status over several compiles of a text log: the worst of theirs."""
    statuses = {c.status for c in compiles}
    for status in ("error", "break"):
        if status in statuses:
            return "error" if status == "error" else "break"
    return "missing"
