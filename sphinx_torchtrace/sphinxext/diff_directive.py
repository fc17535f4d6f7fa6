"""``.. torchtrace-diff:: baseline new``: what changed between two runs, and regressions as
warnings, so that ``sphinx-build -W`` fails a docs build in CI when compilation got worse.

Like the ``torchtrace`` directive, the work is split: at ``builder-inited``
(:func:`generate_diffs`, called by :mod:`.generate`) the scan finds the directives, each
path is resolved and read as the ``torchtrace`` directive's is (a trace already in the site
is reused, and its frame pages linked), the comparison is planned and the stubs of its
frame detail pages written; when a page is read, the directive shows the comparison and
warns ``torchtrace.regression_<kind>`` at its own line.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.util.docutils import SphinxDirective

from ..render.paths import PathRewriter
from ..site.diff_plan import DiffPlan, plan_diff
from ..site.pages.diff import comparison_blocks, diff_frame_page
from ..trace import Trace, TraceReadError, load_trace
from ..trace.diff import FrameFacts, diff_traces, regressions
from ..trace.inputs import DEBUG_DIR, TORCH_LOGS, detect_kind
from .config import torchtrace_config
from .doctree import DoctreeBuilder, mark_output
from .generate import GeneratedTrace, _stub, registry, resolve_logs_safely
from .options import DIFF_OPTION_SPEC, AnyOption, DiffOptions, parse_diff_options
from .scan import TraceRequest, resolve_argument, scan_sources
from .warnings import warn

DIRECTIVE = "torchtrace-diff"
PAGE_KIND = "diff-frame"


@dataclass
class GeneratedDiff:
    """A comparison as this build knows it: its request, options, plan and logs."""

    request: TraceRequest
    options: DiffOptions
    plan: DiffPlan
    logs: list[Path]
    rewrite: PathRewriter
    notes: list[tuple[str, str]] = field(default_factory=list)  # (subtype, message) to warn


# Per source folder, module state (never pickled; forked -j readers inherit it).
_BY_KEY: dict[str, dict[tuple[str, str], GeneratedDiff]] = {}
_BY_PAGE: dict[str, dict[str, GeneratedDiff]] = {}
_PROBLEMS: dict[str, dict[tuple[str, str], tuple[str, str]]] = {}


def _store(table: dict[str, Any], app_or_env: Sphinx | BuildEnvironment) -> Any:
    return table.setdefault(os.fspath(app_or_env.srcdir), {})


def diff_registry(app_or_env: Sphinx | BuildEnvironment) -> dict[tuple[str, str], GeneratedDiff]:
    """Comparisons of this build by (docname of the directive, its paths)."""
    return _store(_BY_KEY, app_or_env)  # type: ignore[no-any-return]


def forget_diffs(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: the directives have run."""
    for table in (_BY_KEY, _BY_PAGE, _PROBLEMS):
        table.pop(os.fspath(app.srcdir), None)


def argument_key(argument: str) -> str:
    """The two paths of a directive, spaced as the registry keys them."""
    return " ".join(argument.split())


def generate_diffs(app: Sphinx, gen_dir: str, parser: str, suffix: str,
                   wanted: dict[Path, str | None], cache_dir: str) -> None:
    """Plan every ``torchtrace-diff`` of the project; add its pages' stubs to ``wanted``."""
    by_key, pages, failed = (_store(t, app) for t in (_BY_KEY, _BY_PAGE, _PROBLEMS))
    for table in (by_key, pages, failed):
        table.clear()
    roots: dict[str, TraceRequest] = {}
    srcdir = Path(app.srcdir)
    for request in scan_sources(app, gen_dir, DIRECTIVE):
        key = (request.docname, argument_key(request.argument))
        try:
            generated = _generate(app, request, cache_dir)
        except ValueError as err:
            failed[key] = err.args
            continue
        other = roots.get(generated.plan.root)
        if other is not None:
            failed[key] = (
                f"comparison label {generated.plan.label!r} is used twice (also in "
                f"{other.docname}); give one a :name:", "label",
            )
            continue
        clash = [d for d in generated.plan.docnames if srcdir / (d + suffix) in wanted]
        if clash:
            failed[key] = (f"comparison pages {clash[0]!r} clash with a trace's pages; "
                           "give the comparison another :name:", "label")
            continue
        roots[generated.plan.root] = request
        by_key[key] = generated
        for docname in generated.plan.docnames:
            pages[docname] = generated
            wanted[srcdir / (docname + suffix)] = _stub(parser, PAGE_KIND)


def _generate(app: Sphinx, request: TraceRequest, cache_dir: str) -> GeneratedDiff:
    """One comparison planned; ValueError(message, subtype) when it cannot be."""
    try:
        options = parse_diff_options(request.raw_options)
    except ValueError as err:
        raise ValueError(str(err), "option") from None
    paths = request.argument.split()
    if len(paths) != 2:
        raise ValueError(
            f"{DIRECTIVE} takes two paths, the baseline run's and the new run's, not "
            f"{len(paths)} ({request.argument!r})", "option",
        )
    source_dir = Path(app.env.doc2path(request.docname)).parent
    sides: list[tuple[Trace, GeneratedTrace | None, str]] = []
    logs: list[Path] = []
    for argument in paths:
        path = resolve_argument(argument, source_dir, app.srcdir)
        sides.append((*_read(app, argument, path, cache_dir), path))
        logs += resolve_logs_safely(path)
    (old, old_site, old_path), (new, new_site, new_path) = sides
    config = torchtrace_config(app.config)
    rewrite = PathRewriter(config.rewrite_rules())
    diff = diff_traces(old, new, rewrite=rewrite)
    label = options.name or (
        f"{TraceRequest('', '', old_path).label()}-vs-{TraceRequest('', '', new_path).label()}"
    )
    # a side shown with :no-source: by a torchtrace directive keeps its source out here too
    no_source = options.no_source or any(
        g.options.no_source for g in registry(app).values()
        if g.request.path in (old_path, new_path)
    )
    plan = plan_diff(
        label, diff, config.generated_dir,
        baseline_label=options.baseline_label, new_label=options.new_label,
        baseline_object=_frame_objects(old_site), new_object=_frame_objects(new_site),
        no_source=no_source,
    )
    plan.baseline_index = old_site.plan.index_docname if old_site else None
    plan.new_index = new_site.plan.index_docname if new_site else None
    return GeneratedDiff(request, options, plan, logs, rewrite)


def _read(
    app: Sphinx, argument: str, path: str, cache_dir: str
) -> tuple[Trace, GeneratedTrace | None]:
    """A run's trace: the site's own when a ``torchtrace`` directive shows it, else read."""
    if not os.path.exists(path):
        raise ValueError(
            f"no trace at {argument!r}: {path} does not exist (a path is relative to the "
            "page; a leading / means the source folder)", "read",
        )
    for generated in registry(app).values():
        if generated.request.path == path and not generated.options.ranks:
            if all(r.source == "trace" for r in generated.trace.ranks):  # not a text log's
                return generated.trace, generated
    if detect_kind(path) == DEBUG_DIR:
        raise ValueError(
            f"{argument!r} is a TORCH_COMPILE_DEBUG folder; compare its run's TORCH_TRACE "
            "logs instead", "read",
        )
    if detect_kind(path) == TORCH_LOGS:
        raise ValueError(
            f"{argument!r} is a TORCH_LOGS text log, which does not say which function each "
            "compile ran (frames are matched by file and function); compare the run's "
            "TORCH_TRACE logs instead", "read",
        )
    config = torchtrace_config(app.config)
    try:
        trace = load_trace(path, display_root=app.srcdir, cache_dir=cache_dir,
                           max_bytes=config.max_log_bytes)
    except (TraceReadError, OSError) as err:
        raise ValueError(f"{argument!r}: {err}", "read") from None
    if not any(sum(r.stats.values()) for r in trace.ranks):
        raise ValueError(f"{argument!r}: no TORCH_TRACE records found", "read")
    return trace, None


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


class TorchTraceDiffDirective(SphinxDirective):
    """``.. torchtrace-diff:: baseline-path new-path`` (each relative to the page)."""

    required_arguments = 1
    final_argument_whitespace = True  # two paths, split here: a wrong count is our warning
    option_spec: ClassVar[dict[str, Any]] = AnyOption(
        dict.fromkeys(DIFF_OPTION_SPEC, directives.unchanged)
    )

    def run(self) -> list[nodes.Node]:
        location = self.get_location()
        try:
            options = parse_diff_options(self.options)
        except ValueError as err:
            warn("option", str(err), location)
            return []
        key = (self.env.docname, argument_key(self.arguments[0]))
        generated = diff_registry(self.env).get(key)
        if generated is None:
            message, subtype = _store(_PROBLEMS, self.env).get(
                key, (f"no comparison was made for {self.arguments[0]!r}", "read")
            )
            warn(subtype, message, location)
            return []
        for log in generated.logs:
            self.env.note_dependency(os.fspath(log))
        for subtype, message in generated.notes:
            warn(subtype, message, location)
        plan = generated.plan
        settings = torchtrace_config(self.config).regressions
        found = regressions(plan.diff, settings)
        if not options.no_regressions:
            for r in found:
                where = f"rank {r.rank}: " if plan.multi_rank else ""
                warn(r.subtype, f"{plan.label}: {where}{r.message}", location)
        builder = DoctreeBuilder(self.env, self.state.document, generated.rewrite)
        out = builder.blocks(comparison_blocks(plan, found, warned=not options.no_regressions))
        container = nodes.container(classes=["torchtrace-diff"])
        container.extend(out)
        self.set_source_info(container)
        return mark_output([container])


def diff_page_nodes(directive: SphinxDirective, docname: str) -> list[nodes.Node] | None:
    """The nodes of a comparison's frame detail page, or None when the page is not one."""
    generated = _store(_BY_PAGE, directive.env).get(docname)
    if generated is None:
        return None
    for log in generated.logs:
        directive.env.note_dependency(os.fspath(log))
    page = diff_frame_page(generated.plan, generated.plan.page_of(docname))
    builder = DoctreeBuilder(directive.env, directive.state.document, generated.rewrite)
    section = builder.section(page.title, page.blocks, "page")
    directive.set_source_info(section)
    return [section]
