"""Which pages a trace becomes, and what each is called: the site plan.

Kept apart from rendering so names and docnames can be tested without a
build, and so the directive and the domain agree with the generated pages.
Every name comes from :mod:`.naming` (see there which names are stable under
which changes to a log); raw downloads mirror their page's docname under
``<root>/_raw/``, so they are as stable and as bounded as the pages.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from ..trace import Artifact, Compile, Kernel, RankTrace, Trace
from ..trace.builder import CODE_EVENTS, GRAPH_EVENTS
from .artifacts import download_suffix
from .naming import (
    fit,
    frame_name,
    frame_segment,
    item_name,
    item_segment,
    label_segment,
    occurrences,
    rank_names,
    rank_segment,
)

#: Events that get a page of their own: graphs, guards, generated code.
PAGE_KINDS = GRAPH_EVENTS | CODE_EVENTS | {"dynamo_guards", "dynamo_cpp_guards_str"}
PAGE_ARTIFACTS = frozenset(
    {
        "before_pre_grad_graph",
        "after_pre_grad_graph",
        "before_post_grad_graph",
        "after_post_grad_graph",
        "before_joint_graph",
        "after_joint_graph",
        "inductor_pre_grad_graph",
        "inductor_post_grad_graph",
        "fx_graph_runnable",
        "compiled_autograd_graph_pre_reordering",
        "inductor_aot_wrapper_code",
        "inductor_aot_kernel_code",
    }
)


def has_page(artifact: Artifact) -> bool:
    """Graphs, guards and generated code get pages; other artifacts show on their frame page."""
    if artifact.payload is None:
        return False
    if artifact.kind in PAGE_KINDS or artifact.kind == "graph_dump":
        return True
    return artifact.kind == "artifact" and (artifact.name in PAGE_ARTIFACTS or artifact.is_graph)


@dataclass(frozen=True)
class PageSettings:
    """What the directive and configuration ask of a trace's pages."""

    no_source: bool = False  # leave the user's source code out (``:no-source:``)
    sections: tuple[str, ...] = ()  # overview sections to show; empty: all
    list_frames: bool = True  # frame pages in the overview's toctree (the sidebar)
    detail_toctree: bool = False  # graph and kernel pages in toctrees (LaTeX, singlehtml)


@dataclass
class RankPlan:
    """Where one log's pages go: ``name`` is the rank part of object names ("" for one log)."""

    rank: RankTrace
    name: str  # "rank1", "rank1-2", "rank-none"; "" in a trace of one log
    folder: str  # docname folder of its frame pages
    events_path: str  # its chromium events as a download, relative to the source folder


@dataclass
class GraphPlan:
    artifact: Artifact
    name: str  # domain object name
    docname: str
    raw_path: str  # its text as a download, relative to the source folder


@dataclass
class KernelPlan:
    kernel: Kernel
    artifact: Artifact  # the output code it was generated in
    name: str
    docname: str
    code_docname: str | None  # the graph page of that output code


@dataclass
class FramePlan:
    rank: RankTrace
    compile: Compile
    name: str
    docname: str
    graphs: list[GraphPlan] = field(default_factory=list)
    kernels: list[KernelPlan] = field(default_factory=list)

    def graph_for(self, artifact: Artifact) -> GraphPlan | None:
        for g in self.graphs:
            if g.artifact is artifact:
                return g
        return None


@dataclass
class TracePlan:
    label: str
    trace: Trace
    root: str  # docname folder of this trace, e.g. "torchtrace/train"
    frames: list[FramePlan] = field(default_factory=list)
    ranks: list[RankPlan] = field(default_factory=list)
    _pages: dict[str, tuple[FramePlan | None, GraphPlan | KernelPlan | None]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def index_docname(self) -> str:
        return f"{self.root}/index"

    def frame_for(self, compile_: Compile) -> FramePlan | None:
        for f in self.frames:
            if f.compile is compile_:
                return f
        return None

    def rank_plan(self, rank: RankTrace) -> RankPlan | None:
        for r in self.ranks:
            if r.rank is rank:
                return r
        return None

    def page_of(self, docname: str) -> tuple[FramePlan | None, GraphPlan | KernelPlan | None]:
        """What a docname of this trace shows: (None, None) for the overview, a frame, or a
        frame and one of its graphs or kernels.  KeyError for a docname not of this plan."""
        if self._pages is None:
            pages: dict[str, tuple[FramePlan | None, GraphPlan | KernelPlan | None]] = {
                self.index_docname: (None, None)
            }
            for f in self.frames:
                pages[f.docname] = (f, None)
                pages.update((g.docname, (f, g)) for g in f.graphs)
                pages.update((k.docname, (f, k)) for k in f.kernels)
            self._pages = pages
        return self._pages[docname]

    @property
    def docnames(self) -> list[str]:
        names = [self.index_docname]
        for f in self.frames:
            names.append(f.docname)
            names.extend(g.docname for g in f.graphs)
            names.extend(k.docname for k in f.kernels)
        return names


def plan_trace(label: str, trace: Trace, generated_dir: str) -> TracePlan:
    """Name every page and object of a trace (names: see :mod:`.naming`)."""
    root = posixpath.join(generated_dir, label_segment(label))
    plan = TracePlan(label=label, trace=trace, root=root)
    taken = {plan.index_docname}
    for rank, rank_name in zip(trace.ranks, rank_names(trace), strict=True):
        segment = rank_segment(rank_name)
        folder = posixpath.join(root, segment) if segment else root
        # the rank in the file's own name: a download keeps only its base name
        events_name = fit(f"chromium-events-{segment}" if segment else "chromium-events") + ".json"
        events = posixpath.join(root, "_raw", events_name)
        plan.ranks.append(RankPlan(rank, rank_name, folder, events))
        for compile_ in rank.compiles:
            name = frame_name(label, rank_name, compile_)
            docname = _claim(taken, posixpath.join(folder, frame_segment(compile_)))
            frame = FramePlan(rank, compile_, name, docname)
            _plan_graphs(plan, frame, taken)
            _plan_kernels(frame, taken)
            plan.frames.append(frame)
    return plan


def _plan_graphs(plan: TracePlan, frame: FramePlan, taken: set[str]) -> None:
    """Graph pages, numbered among the frame's same-named artifacts (paged or not)."""
    artifacts = frame.compile.artifacts
    for artifact, n in zip(artifacts, occurrences(a.name for a in artifacts), strict=True):
        if not has_page(artifact):
            continue
        segment = item_segment("graph", artifact.name, n)
        docname = _claim(taken, posixpath.join(frame.docname, segment))
        raw = posixpath.join(plan.root, "_raw", posixpath.relpath(docname, plan.root))
        frame.graphs.append(
            GraphPlan(
                artifact,
                f"{frame.name}/{item_name(artifact.name, n)}",
                docname,
                raw + download_suffix(artifact),
            )
        )


def _plan_kernels(frame: FramePlan, taken: set[str]) -> None:
    """Kernel pages, numbered among the frame's same-named kernels (fwd and bwd reuse names)."""
    pairs = [(a, k) for a in frame.compile.artifacts for k in a.kernels]
    numbers = occurrences(k.name for _, k in pairs)
    for (artifact, kernel), n in zip(pairs, numbers, strict=True):
        segment = item_segment("kernel", kernel.name, n)
        code = frame.graph_for(artifact)
        frame.kernels.append(
            KernelPlan(
                kernel,
                artifact,
                f"{frame.name}/{item_name(kernel.name, n)}",
                _claim(taken, posixpath.join(frame.docname, segment)),
                code.docname if code else None,
            )
        )


def _claim(taken: set[str], docname: str) -> str:
    """``docname``, or, should two digests ever collide, a variant no other page has."""
    found, n = docname, 1
    while found in taken:
        n += 1
        found = f"{docname}--c{n}"
    taken.add(found)
    return found
