"""Two runs compared: the kind of the ``torchtrace-diff`` directive.

Each path is read as the ``torchtrace`` directive's is (a trace the site already shows
is reused, its frame pages linked, and its ``:no-source:`` inherited); the comparison
is planned (:mod:`...site.diff_plan`) with a detail page per changed frame.  Where the
directive stands it shows the comparison and warns ``torchtrace.regression_<kind>``
at its own line, so that ``sphinx-build -W`` fails when compilation got worse.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.util.docutils import SphinxDirective

from ...render.paths import PathRewriter
from ...site.blocks import Page
from ...site.diff_plan import DiffPlan, plan_diff
from ...site.pages.diff import comparison_blocks, diff_frame_page
from ...site.published import published_trace
from ...trace import Trace, TraceReadError, load_trace
from ...trace.comparing.diff import diff_traces
from ...trace.comparing.regressions import (
    DEFAULT_REGRESSIONS,
    regressions,
    uncompared,
    validate_regressions,
)
from ...trace.comparing.run_frames import FrameFacts
from ...trace.inputs.formats import DEBUG_DIR, TORCH_LOGS
from ...trace.inputs.opening import OpenedInput, open_input
from ..config import setting, settings_of
from ..doctree import DoctreeBuilder
from ..options import checked_options, name_option
from ..project_root import page_rules
from ..scan import DirectiveRequest, resolve_argument
from ..secrets import trace_masker, warn_trace_secrets
from ..warnings import LABEL, OPTION, Note, WarningType, diagnostic, warn
from .base import Context, missing_input, page_section
from .family import Family, Options
from .trace import GeneratedTrace
from .trace_kept import KeptTrace
from .trace_options import DEBUG_FOLDER, TEXT_LOG, TRACE_FOLDER, TRACE_LOG

DIRECTIVE = "torchtrace-diff"
PAGE_ROLE = "diff-frame"


#: The family's own warning subtypes (``Family.warnings``): the runs could not be
#: compared like for like, and what got worse (``torchtrace_regressions`` says which count;
#: ``:no-regressions:`` turns them off for one comparison).
COMPARABILITY = WarningType(
    "comparability",
    "torchtrace-diff: the runs were made differently (PyTorch, Python, "
    "compile configs or ranks differ), or nothing could be compared (no rank or no frame in "
    "common)",
)
#: By regression kind (:data:`...trace.comparing.regressions.REGRESSION_KINDS`, in its order).
REGRESSIONS: dict[str, WarningType] = {
    "error": WarningType(
        "regression_error",
        "torchtrace-diff: the new run has a compile error the baseline has not",
    ),
    "graph_break": WarningType(
        "regression_graph_break",
        "torchtrace-diff: the new run has a graph break (reason and user "
        "location) the baseline has not",
    ),
    "recompile": WarningType(
        "regression_recompile",
        "torchtrace-diff: a frame compiles more times in the new run, or for a new reason",
    ),
    "compile_time": WarningType(
        "regression_compile_time",
        "torchtrace-diff: total compile time grew past the ratio set in "
        "torchtrace_regressions (off by default: timings are noisy)",
    ),
    "kernels": WarningType(
        "regression_kernels",
        "torchtrace-diff: a frame generates more kernels in the new run (a "
        "fusion lost; off by default)",
    ),
    "runtime": WarningType(
        "regression_runtime",
        "torchtrace-diff: a frame's compiled code takes longer per call in "
        "the new run past the ratio set in torchtrace_regressions (both runs captured with run "
        "--runtime; off by default: timings are noisy)",
    ),
}
READ = diagnostic("read")


#: The ``torchtrace-diff`` directive's options (checked by the scan and the directive alike).
DIFF_OPTION_SPEC: dict[str, Callable[[str | None], Any]] = {
    "name": name_option,
    "baseline-label": name_option,
    "new-label": name_option,
    "no-regressions": directives.flag,
    "no-source": directives.flag,
}


@dataclass(frozen=True)
class DiffOptions:
    """A ``torchtrace-diff`` directive's options, checked."""

    name: str | None = None
    baseline_label: str = "baseline"
    new_label: str = "new"
    no_regressions: bool = False  # no ``regression_*`` warnings for this comparison
    no_source: bool = False  # the user's source lines left out (also when a side has it)


def parse_diff_options(raw: Mapping[str, str | None]) -> DiffOptions:
    """``torchtrace-diff`` options as the scan found them; ValueError names the bad one."""
    values = checked_options(raw, DIFF_OPTION_SPEC)
    return DiffOptions(
        name=values.get("name"),
        baseline_label=values.get("baseline-label") or "baseline",
        new_label=values.get("new-label") or "new",
        no_regressions="no-regressions" in values,
        no_source="no-source" in values,
    )


#: The kinds a ``torchtrace-diff`` side may be, and what its options do on them.
DIFF_FORMATS = (TRACE_LOG, TRACE_FOLDER)
#: A side of another kind is not compared: its warning says why.
DIFF_REFUSED = {
    DEBUG_FOLDER: "compare its run's trace logs (a ``torchtrace.read`` warning says so)",
    TEXT_LOG: "it does not say which function each compile ran, so frames cannot be matched "
    "(a ``torchtrace.read`` warning says so)",
}
DIFF_OPTION_EFFECTS: dict[str, dict[str, str]] = {
    "name": dict.fromkeys(DIFF_FORMATS, "the comparison's label: folder of its pages"),
    "baseline-label": dict.fromkeys(DIFF_FORMATS, "what the pages call the first run"),
    "new-label": dict.fromkeys(DIFF_FORMATS, "what the pages call the second run"),
    "no-regressions": dict.fromkeys(
        DIFF_FORMATS, "no ``regression_*`` warnings (the page still lists them)"
    ),
    "no-source": dict.fromkeys(
        DIFF_FORMATS,
        "no line of user source on its pages; also when either run is shown with ``:no-source:``",
    ),
}


@dataclass(frozen=True)
class DiffSettings:
    """The family's configuration values (``torchtrace_<field>``)."""

    # What a ``torchtrace-diff`` warns about as a regression (``regression_<kind>``), and
    # the thresholds: missing keys take the defaults; ``compile_time`` is a ratio or None.
    regressions: dict[str, bool | float | None] = setting(
        dict(DEFAULT_REGRESSIONS), validate_regressions
    )


@dataclass
class GeneratedDiff:
    """A comparison as this build knows it: its request, options, plan, logs (and runtime
    profiles) and the two runs (what a gate could not compare is said of them)."""

    request: DirectiveRequest
    options: DiffOptions
    plan: DiffPlan
    logs: list[Path]
    rewrite: PathRewriter
    notes: list[Note] = field(default_factory=list)  # (subtype, message) to warn
    runs: tuple[Trace, Trace] | None = None  # the baseline, the new run

    def page(self, docname: str) -> Page:
        return diff_frame_page(self.plan, self.plan.page_of(docname))

    def meanings(self) -> dict[str, str]:
        return {}  # no object whose meaning a recapture changes under the same name

    def page_nodes(self, directive: SphinxDirective, docname: str) -> list[nodes.Node]:
        return page_section(directive, docname, self.page(docname), self.rewrite)

    def inline_nodes(self, directive: SphinxDirective) -> list[nodes.Node]:
        """The comparison, and each regression as a warning at the directive's line."""
        plan, options = self.plan, self.options
        settings = settings_of(directive.config, DiffSettings).regressions
        found = regressions(plan.diff, settings)
        # what the gate could not compare (a ratio that is no number, a runtime profile not
        # read while runtime is gated): a warning, as records not read are, never a pass
        lost = uncompared(plan.diff, settings, *(self.runs or (None, None)))
        location = directive.get_location()
        if plan.diff.nothing_compared:
            warn(
                COMPARABILITY,
                f"{plan.label}: nothing compared: {plan.diff.nothing_compared}",
                location,
            )
        if plan.diff.unread:
            warn(
                COMPARABILITY,
                f"{plan.label}: not read, so not compared: " + "; ".join(plan.diff.unread),
                location,
            )
        if lost:
            warn(
                COMPARABILITY,
                f"{plan.label}: not compared: " + "; ".join(lost),
                location,
            )
        if plan.diff.setup:
            warn(
                COMPARABILITY,
                f"{plan.label}: not like for like: " + "; ".join(plan.diff.setup),
                location,
            )
        if not options.no_regressions:
            for r in found:
                where = f"rank {r.rank}: " if plan.multi_rank else ""
                warn(REGRESSIONS[r.kind], f"{plan.label}: {where}{r.message}", location)
        builder = DoctreeBuilder(directive.env, directive.state.document, self.rewrite)
        out = builder.blocks(
            comparison_blocks(plan, found, warned=not options.no_regressions, uncompared=lost)
        )
        container = nodes.container(classes=["torchtrace-diff"])
        container.extend(out)
        directive.set_source_info(container)
        return [container]


class DiffHandler:
    """Two runs: trace logs or folders of rank logs."""

    def accepts(self, path: str, options: DiffOptions) -> bool:
        return True

    def generate(
        self, context: Context, request: DirectiveRequest, options: DiffOptions
    ) -> list[DirectiveRequest]:
        try:
            generated = _generate(context, request, options)
        except ValueError as err:
            message, subtype = err.args
            context.fail(request, DIRECTIVE, message, subtype)
            return []
        plan = generated.plan
        other = context.folders.get(plan.root)
        if other is not None:
            context.fail(
                request,
                DIRECTIVE,
                f"comparison label {plan.label!r} is used twice "
                f"(also in {other.docname}); give one a :name:",
                LABEL,
            )
            return []
        clash = [
            d for d in plan.docnames if context.srcdir / (d + context.suffix) in context.wanted
        ]
        if clash:
            context.fail(
                request,
                DIRECTIVE,
                f"comparison pages {clash[0]!r} clash with a "
                "trace's pages; give the comparison another :name:",
                LABEL,
            )
            return []
        context.folders[plan.root] = request
        context.register(request, DIRECTIVE, generated)
        for docname in plan.docnames:
            context.add_page(docname, generated, PAGE_ROLE)
        return []


def _generate(context: Context, request: DirectiveRequest, options: DiffOptions) -> GeneratedDiff:
    """One comparison planned; ValueError(message, subtype) when it cannot be."""
    paths = request.argument.split()
    if len(paths) != 2:
        raise ValueError(
            f"{DIRECTIVE} takes two paths, the baseline run's and the new run's, not "
            f"{len(paths)} ({request.argument!r})",
            OPTION,
        )
    source_dir = context.source_dir(request)
    sides: list[tuple[Trace, GeneratedTrace | None, str]] = []
    logs: list[Path] = []
    for argument in paths:
        path = resolve_argument(argument, source_dir, context.srcdir)
        opened, site = open_side(context, path)
        sides.append((read_side(context, argument, opened, site), site, path))
        logs += opened.files
    (old, old_site, old_path), (new, new_site, new_path) = sides
    config = context.config
    masker = trace_masker(config, [old, new])
    for trace, site, path in sides:
        if site is None:  # a trace a torchtrace directive shows warned already
            warn_trace_secrets(DirectiveRequest("", "", path).label(), trace, masker)
    rewrite = PathRewriter(page_rules(config, context.srcdir, [old, new]), masker)
    # compared as the pages show each run: a run read here is masked whole, record by record,
    # by the masker of both (a name a cell or title cuts is masked before); a run a
    # torchtrace directive shows is its pages' copy already (its frames are linked)
    homes = config.default_path_rewrites
    old, new = (
        published_trace(t, masker, homes=homes) if site is None else t
        for t, site in ((old, old_site), (new, new_site))
    )
    diff = diff_traces(old, new, rewrite=rewrite, mask=masker)
    old_label, new_label = (DirectiveRequest("", "", p).label() for p in (old_path, new_path))
    label = options.name or f"{old_label}-vs-{new_label}"
    # a side shown with :no-source: by a torchtrace directive keeps its source out here too
    no_source = options.no_source or any(
        g.options.no_source for g in _traces(context) if g.request.path in (old_path, new_path)
    )
    plan = plan_diff(
        label,
        diff,
        config.generated_dir,
        baseline_label=options.baseline_label,
        new_label=options.new_label,
        baseline_object=_frame_objects(old_site),
        new_object=_frame_objects(new_site),
        no_source=no_source,
    )
    plan.baseline_index = old_site.plan.index_docname if old_site else None
    plan.new_index = new_site.plan.index_docname if new_site else None
    return GeneratedDiff(request, options, plan, logs, rewrite, runs=(old, new))


def _traces(context: Context) -> list[GeneratedTrace]:
    """The traces the site shows (a comparison reuses them)."""
    out: list[GeneratedTrace] = []
    for generated in context.built.directives.values():
        if isinstance(generated, KeptTrace):  # compared as its pages show it: read
            generated = generated.resolved()
        if isinstance(generated, GeneratedTrace):
            out.append(generated)
    return out


def open_side(context: Context, path: str) -> tuple[OpenedInput, GeneratedTrace | None]:
    """A run a comparison names, opened once; with the site's own trace of it when a
    ``torchtrace`` directive shows it whole (all ranks, read as a trace)."""
    for generated in _traces(context):
        if generated.request.path == path and not generated.options.ranks:
            if all(r.source == "trace" for r in generated.trace.ranks):  # not a text log's
                same = generated.inputs and not generated.options.latest
                return (generated.inputs[0] if same else open_input(path)), generated
    return open_input(path), None


def read_side(
    context: Context, argument: str, opened: OpenedInput, site: GeneratedTrace | None
) -> Trace:
    """A run's trace: the site's own (``site``), else read; ValueError(message, subtype)
    when it cannot be compared."""
    path = opened.path
    if not opened.exists:
        raise ValueError(missing_input(argument, path), READ)
    if site is not None:
        return site.trace
    if opened.format == DEBUG_DIR:
        raise ValueError(
            f"{argument!r} is a TORCH_COMPILE_DEBUG folder; compare its run's TORCH_TRACE "
            "logs instead",
            READ,
        )
    if opened.format == TORCH_LOGS:
        raise ValueError(
            f"{argument!r} is a TORCH_LOGS text log, which does not say which function each "
            "compile ran (frames are matched by file and function); compare the run's "
            "TORCH_TRACE logs instead",
            READ,
        )
    if opened.problem is not None:
        raise ValueError(f"{argument!r}: {opened.problem}", READ)
    try:
        trace = load_trace(
            path,
            choice=opened.choice,
            display_root=context.srcdir,
            cache_dir=context.cache_dir,
            max_bytes=context.config.max_log_bytes,
        )
    except (TraceReadError, OSError) as err:
        raise ValueError(f"{argument!r}: {err}", READ) from None
    if not any(sum(r.stats.values()) for r in trace.ranks):
        raise ValueError(f"{argument!r}: no TORCH_TRACE records found", READ)
    return trace


def _frame_objects(site: GeneratedTrace | None) -> Callable[[FrameFacts], str | None] | None:
    """The frame object (``run/[0/*]``'s ``[x/y]``) of a run's frame, when its trace has
    pages in this site: only objects that exist are linked, so nothing dangles."""
    if site is None:
        return None
    plan = site.plan

    def find(facts: FrameFacts) -> str | None:
        for compile_ in facts.compiles:
            frame = plan.frame_for(compile_)
            if frame is not None:
                return plan.frame_objects(frame)[0][0]
        return None

    return find


def input_paths(argument: str, raw: Mapping[str, str]) -> list[str]:
    return argument.split()  # the baseline, then the new run


FAMILY = Family(
    name=DIRECTIVE,
    description="two runs compared, a page per changed frame",
    options=Options(DIFF_OPTION_SPEC, parse_diff_options, DIFF_FORMATS, DIFF_OPTION_EFFECTS),
    handlers=(DiffHandler(),),
    input_paths=input_paths,
    settings=(DiffSettings,),
    warnings=(COMPARABILITY, *REGRESSIONS.values()),
)
