"""Several runs of one program in order: the kind of the ``torchtrace-trend`` directive.

Each path is read as a ``torchtrace-diff`` side is (a trace the site shows is reused);
where the directive stands it shows a row per function with each run's status, graph
breaks, recompiles and compile time, and a chart of the compile times.  No pages of
its own.  What changed in how consecutive runs were made is a
``torchtrace.comparability`` warning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from ...render.paths import PathRewriter
from ...site.blocks import Admonition, Block, BulletList, Chart, Page, Paragraph, Strong, item
from ...site.pages.trend import trend_blocks
from ...site.published import published_trace
from ...trace import Trace
from ...trace.comparing.trend import MAX_RUNS, Trend, trend
from ...trace.comparing.unread import unread
from ..doctree import DoctreeBuilder, chart_nodes
from ..options import checked_options
from ..project_root import page_rules
from ..scan import DirectiveRequest, resolve_argument
from ..secrets import trace_masker, warn_trace_secrets
from ..warnings import OPTION, Note
from .base import Context
from .diff import COMPARABILITY, open_side, read_side
from .family import Family, Options

DIRECTIVE = "torchtrace-trend"


def labels_option(value: str | None) -> tuple[str, ...]:
    """``:labels: v1, v2, v3``: what each run of a trend is called."""
    labels = tuple(" ".join(part.split()) for part in (value or "").split(","))
    if not labels or not all(labels):
        raise ValueError("give a comma-separated label for each run")
    return labels


#: The ``torchtrace-trend`` directive's options.
TREND_OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {"labels": labels_option}


@dataclass(frozen=True)
class TrendOptions:
    """A ``torchtrace-trend`` directive's options, checked."""

    labels: tuple[str, ...] = ()  # one per run; default: the paths' last parts


def parse_trend_options(raw: Mapping[str, str | None]) -> TrendOptions:
    values = checked_options(raw, TREND_OPTION_SPEC)
    return TrendOptions(labels=values.get("labels") or ())


@dataclass
class GeneratedTrend:
    """A trend as this build knows it: its request, the trend, the logs (and runtime
    profiles) it read, and what of its runs it did not read."""

    request: DirectiveRequest
    trend: Trend
    logs: list[Path]
    rewrite: PathRewriter
    notes: list[Note] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # of every run, the oldest included

    def page(self, docname: str) -> Page:
        raise KeyError(docname)  # it shows where it stands; no pages of its own

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        raise KeyError(docname)

    def meanings(self) -> dict[str, str]:
        return {}

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        def special(builder: DoctreeBuilder, block: object) -> list[nodes.Node]:
            if isinstance(block, Chart):
                return chart_nodes(builder, block)
            raise TypeError(f"no nodes for {type(block).__name__}")

        builder = DoctreeBuilder(
            directive.env,
            directive.state.document,
            self.rewrite,
            special=lambda block: special(builder, block),
        )
        container = nodes.container(classes=["torchtrace-trend"])
        container.extend(builder.blocks(self._unread_blocks() + trend_blocks(self.trend)))
        directive.set_source_info(container)
        return [container]

    def _unread_blocks(self) -> list[Block]:
        """What of the runs was not read, first: the rows show only what was."""
        if not self.unread:
            return []
        said = Paragraph(
            [
                Strong("Not read"),
                ": the rows show what was read; this was not, so no change in it can show:",
            ]
        )
        return [Admonition("warning", [said, BulletList([item(u) for u in self.unread])])]


class TrendHandler:
    """Runs of one program: trace logs or folders of rank logs."""

    def accepts(self, path: str, options: TrendOptions) -> bool:
        return True

    def generate(
        self, context: Context, request: DirectiveRequest, options: TrendOptions
    ) -> list[DirectiveRequest]:
        paths = request.argument.split()
        labels = list(options.labels) or [DirectiveRequest("", "", p).label() for p in paths]
        if not 2 <= len(paths) <= MAX_RUNS or len(labels) != len(paths):
            context.fail(
                request,
                DIRECTIVE,
                f"{DIRECTIVE} takes 2 to {MAX_RUNS} paths, oldest "
                f"first, and as many :labels: ({len(paths)} paths, {len(labels)} "
                "labels)",
                OPTION,
            )
            return []
        source_dir = context.source_dir(request)
        traces, logs = [], []
        read_here: list[tuple[str, Trace]] = []  # not shown by a torchtrace directive
        for argument in paths:
            path = resolve_argument(argument, source_dir, context.srcdir)
            opened, site = open_side(context, path)
            try:
                trace = read_side(context, argument, opened, site)
            except ValueError as err:
                message, subtype = err.args
                context.fail(request, DIRECTIVE, message, subtype, opened.logs)
                return []
            traces.append(trace)
            if site is None:  # a trace a torchtrace directive shows warned already
                read_here.append((DirectiveRequest("", "", path).label(), trace))
            logs += opened.files
        masker = trace_masker(context.config, traces)
        for label, trace in read_here:
            warn_trace_secrets(label, trace, masker)
        rewrite = PathRewriter(page_rules(context.config, context.srcdir, traces), masker)
        # each run as its pages show it: a run read here masked whole, record by record, by
        # the masker of every run (a name a chart's label cuts is masked before); a run a
        # torchtrace directive shows is its pages' copy already
        homes = context.config.default_path_rewrites
        here = {id(trace) for _, trace in read_here}
        traces = [published_trace(t, masker, homes=homes) if id(t) in here else t for t in traces]
        result = trend(traces, labels, rewrite=rewrite)
        # every run, the oldest included: a trend shows each, so each must have been read whole
        missed = [
            u for t, label in zip(traces, labels, strict=True) for u in unread(t, f"run {label}")
        ]
        generated = GeneratedTrend(request, result, logs, rewrite, unread=missed)
        if missed:
            generated.notes.append(
                (COMPARABILITY, "not read, so not compared: " + "; ".join(missed))
            )
        if result.setup:
            generated.notes.append((COMPARABILITY, "not like for like: " + "; ".join(result.setup)))
        context.register(request, DIRECTIVE, generated)
        return []


def input_paths(argument: str, raw: Mapping[str, str]) -> list[str]:
    return argument.split()  # the runs, oldest first


FAMILY = Family(
    name=DIRECTIVE,
    description="each function over several runs, a row per function and a chart",
    options=Options(TREND_OPTION_SPEC, parse_trend_options),
    handlers=(TrendHandler(),),
    input_paths=input_paths,
)
