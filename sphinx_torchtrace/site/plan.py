"""Which pages a trace becomes, and what each is called: the site plan.

Kept apart from rendering so names and docnames can be tested without a
build, and so the directive and the domain agree with the generated pages.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from .artifacts import download_suffix
from .naming import artifact_slug, frame_name, frame_slug, numbered, rank_prefix, slugify
from ..trace import Artifact, Compile, Kernel, RankTrace, Trace
from ..trace.builder import CODE_EVENTS, GRAPH_EVENTS

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
    return artifact.kind == "artifact" and (
        artifact.name in PAGE_ARTIFACTS or artifact.is_graph
    )


@dataclass(frozen=True)
class PageSettings:
    """What the directive and configuration ask of a trace's pages."""

    no_source: bool = False  # leave the user's source code out (``:no-source:``)
    sections: tuple[str, ...] = ()  # overview sections to show; empty: all
    list_frames: bool = True  # frame pages in the overview's toctree (the sidebar)
    detail_toctree: bool = False  # graph and kernel pages in toctrees (LaTeX, singlehtml)


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
    """Name every page and object of a trace."""
    root = posixpath.join(generated_dir, slugify(label))
    plan = TracePlan(label=label, trace=trace, root=root)
    for rank in trace.ranks:
        folder = posixpath.join(root, rank_prefix(trace, rank).rstrip("/"))
        for compile_ in rank.compiles:
            fname = frame_name(label, trace, rank, compile_)
            slug = frame_slug(compile_)
            frame = FramePlan(rank, compile_, fname, posixpath.join(folder, slug))
            paged = [a for a in compile_.artifacts if has_page(a)]
            for artifact, gname in zip(paged, numbered([a.name for a in paged]), strict=True):
                docname = posixpath.join(folder, slug, "graph-" + artifact_slug(artifact))
                raw = posixpath.basename(docname) + download_suffix(artifact)
                frame.graphs.append(
                    GraphPlan(
                        artifact, f"{fname}/{gname}", docname, posixpath.join(root, "_raw", raw)
                    )
                )
            pairs = [(a, k) for a in compile_.artifacts for k in a.kernels]
            for (artifact, kernel), kname in zip(
                pairs, numbered([k.name for _, k in pairs]), strict=True
            ):
                code = frame.graph_for(artifact)
                index = len(frame.kernels)
                frame.kernels.append(
                    KernelPlan(
                        kernel,
                        artifact,
                        f"{fname}/{kname}",
                        posixpath.join(folder, slug, f"kernel-{index}-{slugify(kernel.name)}"),
                        code.docname if code else None,
                    )
                )
            plan.frames.append(frame)
    return plan
