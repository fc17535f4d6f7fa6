"""Which pages a trace becomes, and what each is called: the site plan.

Kept apart from rendering so names and docnames can be tested without a
build, and so the directive and the domain agree with the generated pages.
Every name comes from :mod:`.naming` (see there which names are stable under
which changes to a log); raw downloads mirror their page's docname under
``<root>/_raw/``, so they are as stable and as bounded as the pages.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..trace import Artifact, Compile, Kernel, Metrics, RankTrace, Trace
from ..trace.analyses import compare
from ..trace.analyses.break_registry import BreakRegistry
from ..trace.analyses.failures import failure_groups
from ..trace.analyses.graph_breaks import BreakMessage
from ..trace.analyses.naming import compiled_function, rank_number
from ..trace.analyses.provenance import provenance_sources
from ..trace.analyses.stack_trie import trie_lines
from ..trace.analyses.status import attempts_status
from ..trace.analyses.vllm import has_vllm
from ..trace.inputs.builder import CODE_EVENTS, GRAPH_EVENTS
from ..trace.inputs.debug_dir import DebugDir, DebugFile, DebugRun, GraphFolder, SdscSpec
from ..trace.reader import MAX_RECORD_BYTES
from .artifacts import GUARD_ARTIFACTS, INLINE_LIMIT, download_suffix, record_is_long
from .naming import (
    break_object_name,
    fit,
    frame_name,
    frame_segment,
    item_name,
    item_segment,
    label_name,
    label_segment,
    name_text,
    occurrences,
    rank_names,
    rank_segment,
    slugify,
)
from .rank_sharing import (
    Sharing,
    ValueDifference,
    compile_differences,
    metric_differences,
    share_frames,
)

#: Events that get a page of their own: graphs, guards, generated code.
PAGED_EVENTS = GRAPH_EVENTS | CODE_EVENTS | {"dynamo_guards", "dynamo_cpp_guards_str"}
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
    if artifact.event in PAGED_EVENTS or artifact.event == "graph_dump":
        return True
    return artifact.event == "artifact" and (artifact.name in PAGE_ARTIFACTS or artifact.is_graph)


def is_small_record(artifact: Artifact) -> bool:
    """An artifact that is no graph and small enough to show on its frame page."""
    return (
        artifact.payload is not None and not has_page(artifact) and (artifact.size <= INLINE_LIMIT)
    )


def _text_key(artifact: Artifact) -> tuple[str, bytes]:
    data = artifact.text().encode("utf-8", "replace")
    return artifact.name, hashlib.blake2b(data, digest_size=16).digest()


def is_download(artifact: Artifact) -> bool:
    """Too large for its frame page, small enough to write out (not past the record cap):
    offered as a download, as tlparse links it."""
    return artifact.payload is not None and INLINE_LIMIT < artifact.size <= MAX_RECORD_BYTES


@dataclass(frozen=True)
class PageSettings:
    """What the directive and configuration ask of a trace's pages."""

    no_source: bool = False  # leave the user's source code out (``:no-source:``)
    sections: tuple[str, ...] = ()  # overview sections to show; empty: all
    #: Frame pages the overview's toctree (the sidebar) lists at most; None: all of them.
    sidebar_limit: int | None = None
    detail_toctree: bool = False  # graph and kernel pages in toctrees (LaTeX, singlehtml)
    #: PyTorch's graph-break registry (the installed torch's), for today's wording and hints.
    break_registry: BreakRegistry | None = None
    #: The day these pages were made (``2026-11-26``, UTC), for the overview's "Report" row.
    made_on: str = ""

    def shows(self, section: str) -> bool:
        """Whether the overview has this section (one of
        :data:`.overview_sections.SECTION_KEYS`)."""
        return not self.sections or "all" in self.sections or section in self.sections


#: Between the parts of a page title: trace, rank, compile id, what the page shows.
TITLE_SEPARATOR = " · "
#: Characters of a function's name a title keeps (sidebars, search results, breadcrumbs).
TITLE_FUNCTION_LIMIT = 80
#: What the page of ``[-/-]`` shows, in its title.
UNKNOWN_TITLE = "records without a compile id"

#: Frames (compiles) one trace gets pages for, unless ``torchtrace_max_frames`` says otherwise.
DEFAULT_MAX_FRAMES = 1000

#: A graph, guard set or generated code of at most this many bytes is folded on its frame
#: page (``torchtrace_fold_bytes``) rather than given a page of its own: each page carries
#: the theme's sidebar, header and icons (about 18 KB with furo), more than most graphs
#: weigh, and a reader of a compile finds its graphs in one place.  Larger ones, and those
#: past the frame page's budget, get their own page.
DEFAULT_FOLD_BYTES = 48_000
#: Scripts to run, not to read (``fx_graph_runnable`` repeats a graph shown beside it, with
#: imports and random inputs around it): a download on the frame page, as tlparse offers it.
RUN_NOT_READ = frozenset({"fx_graph_runnable"})
#: Bytes of graphs one frame page folds at most, ``fold_bytes`` times this (its first
#: screens are the answer; the graphs come after, folded).
FRAME_FOLDS = 4


#: Tabs a multi-rank overview section shows at most (one per class of alike ranks).
RANK_TABS = 16


@dataclass
class RankPlan:
    """Where one log's pages go: ``name`` is the rank part of object names ("" for one log)."""

    rank: RankTrace
    name: str  # "rank1", "rank1-2", "rank-none"; "" in a trace of one log
    folder: str  # docname folder of its frame pages
    events_path: str  # its chromium events as a download, relative to the source folder
    #: The first rank of its class: an earlier rank that logged the same compiles and
    #: graphs (hundreds of alike ranks are one line, their frames shown on shared pages).
    same_as: RankPlan | None = None
    #: What it logged differently in the frames it shares (metrics, mostly times), by
    #: metric name, and the values.
    differences: list[str] = field(default_factory=list)
    changed_values: list[ValueDifference] = field(default_factory=list)
    #: For the first rank of a class: what comparing its ranks with each other and with
    #: the first rank left out (:mod:`..trace.volatile`), one example a rule, by rule name.
    set_aside: dict[str, str] = field(default_factory=dict)


class _Placed:
    """Where a graph or kernel is shown, from its ``same_as``, ``numbers_of`` and ``anchor``."""

    same_as: object
    numbers_of: object
    anchor: str

    @property
    def shown(self) -> bool:
        """Shown by itself (on a page of its own or folded on its frame page), not as another."""
        return self.same_as is None and self.numbers_of is None

    @property
    def has_page(self) -> bool:
        return self.shown and not self.anchor

    @property
    def inline(self) -> bool:
        """Folded whole on its frame page."""
        return self.shown and bool(self.anchor)


@dataclass
class GraphPlan(_Placed):
    artifact: Artifact
    name: str  # domain object name
    docname: str  # the page showing it: its own, or that of ``same_as``
    raw_path: str  # its text as a download, relative to the source folder; "" for none
    #: The graph it is identical to (an earlier graph of its frame, or the graph of a rank
    #: it repeats): no page of its own, its object lives on that graph's page.
    same_as: GraphPlan | None = None
    unchanged_by: str = ""  # the pass that left it as ``same_as`` was, when one is known
    #: Where ``same_as`` is when it is another rank's (``rank0 [2/0]``); "" in this frame.
    same_label: str = ""
    #: A graph of an earlier compile of the frame, with a page, that this one equals but
    #: for its numbers (a recompile for new shapes): no page of its own; its frame page
    #: shows the first changes, and its object lives there.
    numbers_of: GraphPlan | None = None
    numbers_of_label: str = ""  # the compile id of ``numbers_of``, ``[0/0]``
    numbers_same: bool = False  # not even a number differs from ``numbers_of``
    #: Where its frame page shows it, when it is small enough to need no page of its own
    #: (``docname`` is then the frame page's); "" for a graph with a page.
    anchor: str = ""


@dataclass
class RawPlan:
    """An artifact too large to show on its frame page, offered as a download instead."""

    artifact: Artifact
    raw_path: str  # relative to the source folder, under ``<root>/_raw/``


@dataclass
class KernelPlan(_Placed):
    kernel: Kernel
    artifact: Artifact  # the output code it was generated in
    name: str
    docname: str
    code: GraphPlan | None  # that output code, as its frame plans it
    same_as: KernelPlan | None = None  # the kernel of a rank this one repeats: no page
    #: The kernel of an earlier compile of the frame, with a page, whose source equals this
    #: one's but for its numbers (a recompile for new shapes): no page of its own; its row
    #: on the frame page links that page, and its object lives on the frame page.
    numbers_of: KernelPlan | None = None
    numbers_of_label: str = ""  # the compile id of ``numbers_of``
    #: Where its frame page shows it, beside its output code shown there ("" : a page).
    anchor: str = ""


@dataclass
class FramePlan:
    rank: RankTrace
    compile: Compile
    name: str
    docname: str
    graphs: list[GraphPlan] = field(default_factory=list)
    kernels: list[KernelPlan] = field(default_factory=list)
    downloads: list[RawPlan] = field(default_factory=list)  # too large to show, no page
    #: Metrics records too long to show whole, as downloads (path relative to the sources),
    #: by ``id()`` of the record.
    records: dict[int, str] = field(default_factory=dict)
    #: The frame of an earlier rank that this one repeats: no pages of its own, its
    #: ``docname`` (and its graphs' and kernels') are that frame's.
    same_as: FramePlan | None = None
    #: The first rank's frame of the same compile id, which this one (with pages of its
    #: own) differs from; its graphs that are alike are shown there.
    counterpart: FramePlan | None = None
    counterpart_label: str = ""  # ``rank0 [2/0]``
    #: What differs from ``counterpart``: ``(item, detail)``, the item a graph's short
    #: name where it is one (``dynamo_output_graph``), else what (``status``).
    differences: list[tuple[str, str]] = field(default_factory=list)

    def download_for(self, artifact: Artifact) -> RawPlan | None:
        for d in self.downloads:
            if d.artifact is artifact:
                return d
        return None

    def record_download(self, record: Metrics) -> str | None:
        return self.records.get(id(record))

    def graph_for(self, artifact: Artifact) -> GraphPlan | None:
        for g in self.graphs:
            if g.artifact is artifact:
                return g
        return None


@dataclass
class PastLimit:
    """A compile past the frame cap (``torchtrace_max_frames``): listed, without a page."""

    rank: RankPlan
    compile: Compile


@dataclass
class TracePlan:
    label: str
    trace: Trace
    root: str  # docname folder of this trace, e.g. "torchtrace/train"
    frames: list[FramePlan] = field(default_factory=list)
    ranks: list[RankPlan] = field(default_factory=list)
    max_frames: int = DEFAULT_MAX_FRAMES
    fold_bytes: int = DEFAULT_FOLD_BYTES  # graphs up to this size are folded on frame pages
    past_limit: list[PastLimit] = field(default_factory=list)  # in plan order, no pages
    #: Every rank's chromium events in one file (pid = rank), for several ranks with events.
    events_all_path: str | None = None
    #: The runtime profiles' downloads (``run --runtime``): the profile's name -> path.
    runtime_downloads: dict[str, str] = field(default_factory=dict)
    #: The page of vLLM's piecewise compiles, when a log holds vLLM's records ("" : none).
    vllm_docname: str = ""
    _pages: dict[str, tuple[FramePlan | None, GraphPlan | KernelPlan | None]] | None = field(
        default=None, repr=False, compare=False
    )
    _by_compile: dict[int, FramePlan] | None = field(default=None, repr=False, compare=False)
    _by_id: dict[tuple[int, object, object], list[FramePlan]] | None = field(
        default=None, repr=False, compare=False
    )
    _position: dict[int, int] | None = field(default=None, repr=False, compare=False)
    _groups: dict[tuple[object, ...], list[FramePlan]] | None = field(
        default=None, repr=False, compare=False
    )
    _sidebar: tuple[int | None, set[int]] | None = field(default=None, repr=False, compare=False)
    _shared: dict[str, list[tuple[str, str, str]]] | None = field(
        default=None, repr=False, compare=False
    )
    _aliases: dict[int, list[str]] | None = field(default=None, repr=False, compare=False)
    _copies: dict[tuple[str, bytes], tuple[FramePlan, Artifact]] | None = field(
        default=None, repr=False, compare=False
    )
    _provenances: dict[int, FramePlan] | None = field(default=None, repr=False, compare=False)
    _breaks: frozenset[str] | None = field(default=None, repr=False, compare=False)
    _of_rank: dict[int, list[FramePlan]] | None = field(default=None, repr=False, compare=False)
    _repeats: dict[int, list[FramePlan]] | None = field(default=None, repr=False, compare=False)
    _rank_plans: dict[int, RankPlan] | None = field(default=None, repr=False, compare=False)
    _trie_listed: set[int] | None = field(default=None, repr=False, compare=False)

    @property
    def index_docname(self) -> str:
        return f"{self.root}/index"

    @property
    def paged_frames(self) -> list[FramePlan]:
        """The frames with pages of their own: not those of a rank that repeats another."""
        return [f for f in self.frames if f.same_as is None]

    def sidebar_frames(self, limit: int | None) -> list[FramePlan]:
        """The frame pages the sidebar lists: all, or past ``limit`` the first page of each
        function (``[x/*]``), so a big trace still shows where its functions are; the others
        are reached from these pages (previous/next) and the overview."""
        listed = self.listed_frames
        if limit is None or len(listed) <= limit:
            return listed
        firsts: dict[tuple[int, object, object, int], FramePlan] = {}
        for f in listed:
            cid = f.compile.id
            firsts.setdefault(
                (id(f.rank), cid.compiled_autograd_id, cid.frame_id, f.compile.occurrence), f
            )
        return list(firsts.values())[:limit]

    def in_sidebar(self, frame: FramePlan, limit: int | None) -> bool:
        if self._sidebar is None or self._sidebar[0] != limit:
            self._sidebar = (limit, {id(f) for f in self.sidebar_frames(limit)})
        return id(frame) in self._sidebar[1]

    @property
    def listed_frames(self) -> list[FramePlan]:
        """The frame pages of the sidebar and of previous/next, by compile id: the records
        outside any compilation (``[-/-]``) are not a compilation, so not among them."""
        return [f for f in self.paged_frames if not f.compile.id.is_unknown]

    def shared_objects(self, docname: str) -> list[tuple[str, str, str]]:
        """``(objtype, name, status)`` of the objects shown on another object's page: a graph
        identical to an earlier one, the frames, graphs and kernels of a rank that repeats
        another.  That page declares them, so ``objects.inv`` keeps every object."""
        if self._shared is None:
            shared: dict[str, list[tuple[str, str, str]]] = {}
            for f in self.frames:
                if f.same_as is not None:
                    for name, status in self.frame_objects(f):
                        shared.setdefault(f.docname, []).append(("frame", name, status))
                # a copy of a folded graph or kernel is declared in its fold (aliases_of)
                for g in f.graphs:
                    if g.same_as is not None and not g.anchor:
                        shared.setdefault(g.docname, []).append(("graph", g.name, ""))
                for k in f.kernels:
                    if k.same_as is not None and not k.anchor:
                        shared.setdefault(k.docname, []).append(("kernel", k.name, ""))
            self._shared = shared
        return list(self._shared.get(docname, ()))

    def aliases_of(self, item: GraphPlan | KernelPlan) -> list[str]:
        """The object names of the graphs or kernels shown as ``item`` (an identical graph
        of its frame, the same graph of a rank that repeats this one): a fold declares
        them, so their links land on it."""
        if self._aliases is None:
            aliases: dict[int, list[str]] = {}
            for f in self.frames:
                items: list[GraphPlan | KernelPlan] = [*f.graphs, *f.kernels]
                for x in items:
                    root: GraphPlan | KernelPlan | None = x.same_as
                    while root is not None and root.same_as is not None:  # a copy of a copy
                        root = root.same_as
                    if root is not None:
                        aliases.setdefault(id(root), []).append(x.name)
            self._aliases = aliases
        return list(self._aliases.get(id(item), ()))

    def first_copy(self, artifact: Artifact) -> tuple[FramePlan, Artifact] | None:
        """The frame page, earlier in plan order, that shows an artifact of the same name
        and text as this small one (a config dump every compile logs again): the later
        pages link it, so a copy costs a line, not its text again.  None for the first."""
        if not is_small_record(artifact):
            return None
        if self._copies is None:
            copies: dict[tuple[str, bytes], tuple[FramePlan, Artifact]] = {}
            for f in self.paged_frames:
                for a in f.compile.artifacts:
                    if is_small_record(a):
                        copies.setdefault(_text_key(a), (f, a))
            self._copies = copies
        found = self._copies.get(_text_key(artifact))
        return found if found is not None and found[1] is not artifact else None

    def provenance_copy(self, frame: FramePlan) -> FramePlan | None:
        """The frame page, earlier in plan order, whose provenance views are made of the
        same texts as this frame's (a recompile that compiled the same graphs again): its
        view is this one's, so this page links it rather than repeating it."""
        if self._provenances is None:
            first: dict[tuple[tuple[tuple[str, bytes] | None, ...], ...], FramePlan] = {}
            copies: dict[int, FramePlan] = {}
            for f in self.paged_frames:
                sources = provenance_sources(f.compile)
                if not sources:
                    continue
                key = tuple(
                    tuple(None if a is None else _text_key(a) for a in view) for view in sources
                )
                found = first.setdefault(key, f)
                if found is not f:
                    copies[id(f)] = found
            self._provenances = copies
        return self._provenances.get(id(frame))

    def frames_of(self, rank_plan: RankPlan) -> list[FramePlan]:
        """A rank's frames (with pages or shown on an earlier rank's), in plan order."""
        if self._of_rank is None:
            of_rank: dict[int, list[FramePlan]] = {}
            for f in self.frames:
                of_rank.setdefault(id(f.rank), []).append(f)
            self._of_rank = of_rank
        return list(self._of_rank.get(id(rank_plan.rank), ()))

    def own_frames(self, rank_plan: RankPlan) -> list[FramePlan]:
        """A rank's frames with pages of their own (not an earlier rank's)."""
        return [f for f in self.frames_of(rank_plan) if f.same_as is None]

    def repeats_of(self, frame: FramePlan) -> list[FramePlan]:
        """The frames of later ranks that this frame's pages show (they logged the same)."""
        if self._repeats is None:
            repeats: dict[int, list[FramePlan]] = {}
            for f in self.frames:
                if f.same_as is not None:
                    repeats.setdefault(id(f.same_as), []).append(f)
            self._repeats = repeats
        return list(self._repeats.get(id(frame), ()))

    def frame_for(self, compile_: Compile) -> FramePlan | None:
        """The frame page of a compile, or None (past the frame cap); by identity, O(1)."""
        if self._by_compile is None:
            self._by_compile = {id(f.compile): f for f in self.frames}
        found = self._by_compile.get(id(compile_))
        return found if found is not None and found.compile is compile_ else None

    def trie_anchor(self, frame: FramePlan) -> str | None:
        """The anchor of the overview's stack-trie entry where this frame's compile started;
        None where the overview has no such entry (a later attempt, a stack of torch's own
        frames only, a rank whose trie no tab shows, a page another rank's stands for):
        the overview and the frame page both ask here, so no link leads nowhere."""
        if self._trie_listed is None:
            self._trie_listed = {
                id(c)
                for rank in self.trie_ranks()
                for line in trie_lines(rank.stack_trie)
                for c in line.compiles
            }
        if frame.same_as is not None or id(frame.compile) not in self._trie_listed:
            return None
        return "start-" + slugify(frame.docname.removeprefix(self.root + "/"))

    def trie_ranks(self) -> list[RankTrace]:
        """The ranks whose stack trie the overview shows: the one log's; of several, the
        first rank of each of the first :data:`RANK_TABS` classes of alike ranks."""
        ranks = self.trace.ranks
        if not self.trace.is_multi_rank:
            return list(ranks)
        firsts = [r for r in ranks if (p := self.rank_plan(r)) is None or p.same_as is None]
        return firsts[:RANK_TABS]

    def break_object(self, message: BreakMessage) -> str | None:
        """The ``gb`` object of the overview's distinct graph breaks that this message is,
        or None when the overview lists it as a compile error (or not at all)."""
        if self._breaks is None:
            self._breaks = frozenset(
                break_object_name(self.label, g.message.first_part.key)
                for rank in self.trace.ranks
                for g in failure_groups(rank.compiles)
                if g.category == "graph_break"
            )
        name = break_object_name(self.label, message.first_part.key)
        return name if name in self._breaks else None

    def attempts_of(self, frame: FramePlan) -> list[FramePlan]:
        """Every frame of the same rank, compile id and occurrence (its attempts), in plan
        order: one index for the plan, so that each frame page does not scan every frame."""
        if self._by_id is None:
            index: dict[tuple[int, object, object], list[FramePlan]] = {}
            for f in self.frames:
                key = (id(f.rank), f.compile.id.frame, f.compile.occurrence)
                index.setdefault(key, []).append(f)
            self._by_id = index
        c = frame.compile
        return list(self._by_id.get((id(frame.rank), c.id.frame, c.occurrence), ()))

    def frame_objects(self, frame: FramePlan) -> list[tuple[str, str]]:
        """The ``frame`` objects a frame page declares, each with the status its badge shows.

        ``[x/y]`` (no attempt) names the frame over all its attempts, as tlparse's stack
        trie colors it, and lives on its first page (attempt 0, else the lowest attempt);
        ``[x/y_z]`` names attempt ``z`` alone, with its own status.
        """
        c = frame.compile
        first = min(self.attempts_of(frame) or [frame], key=lambda f: f.compile.id.attempt)
        if first is not frame:
            return [(frame.name, c.status)]
        rank_plan = self.rank_plan(frame.rank)
        rank_name = rank_plan.name if rank_plan is not None else ""
        whole_name = frame_name(self.label, rank_name, replace(c, id=c.id.frame))
        whole = (whole_name, attempts_status(frame.rank, c))
        return [whole] if whole[0] == frame.name else [whole, (frame.name, c.status)]

    def badge_status(self, frame: FramePlan) -> str:
        """The status a link to ``frame.name`` shows: the frame's over all attempts when the
        name is ``[x/y]`` (attempt 0), the attempt's own otherwise."""
        c = frame.compile
        return attempts_status(frame.rank, c) if c.id.attempt == 0 else c.status

    def neighbours(self, frame: FramePlan) -> tuple[FramePlan | None, FramePlan | None]:
        """The compiles before and after this one among its own function's versions on its
        own rank, in compile order: never another function's, nor another rank's (a page an
        alike rank shares is reached through the frame it stands for, whose ``docname`` is
        the shared page)."""
        if self._groups is None or self._position is None:  # once: twice a page is quadratic
            groups: dict[tuple[object, ...], list[FramePlan]] = {}
            for f in self.frames:
                if not f.compile.id.is_unknown:
                    groups.setdefault(_function_key(f), []).append(f)
            self._groups = groups
            self._position = {id(f): i for group in groups.values() for i, f in enumerate(group)}
        group = (
            self._groups.get(_function_key(frame), []) if not frame.compile.id.is_unknown else []
        )
        i = self._position.get(id(frame))
        if i is None or i >= len(group) or group[i] is not frame:
            return None, None
        before = group[i - 1] if i > 0 else None
        after = group[i + 1] if i + 1 < len(group) else None
        return before, after

    def title_parts(self, frame: FramePlan) -> list[str]:
        """Where a page is: the trace's label, the rank when there are several, the compile id
        (``["big", "[0/0]"]``, ``["dist", "rank1", "[0/0]"]``), for titles and sidebars."""
        parts = [self.label]
        if self.trace.is_multi_rank:
            rank_plan = self.rank_plan(frame.rank)
            parts.append(rank_plan.name if rank_plan is not None and rank_plan.name else "rank ?")
        parts.append(frame.compile.label)
        return parts

    def frame_title(self, frame: FramePlan, function: str | None) -> str:
        """``big · [0/0] forward``, ``dist · rank1 · [0/0] inner``,
        ``big · [-/-] records without a compile id``."""
        what = UNKNOWN_TITLE if frame.compile.id.is_unknown else function
        if what and len(what) > TITLE_FUNCTION_LIMIT:  # a logged name is any length
            what = what[: TITLE_FUNCTION_LIMIT - 1] + "…"
        return TITLE_SEPARATOR.join(self.title_parts(frame)) + (f" {what}" if what else "")

    def detail_title(self, frame: FramePlan, what: str) -> str:
        """A graph or kernel page: ``big · [0/0] · dynamo_output_graph``."""
        return TITLE_SEPARATOR.join([*self.title_parts(frame), what])

    def own_events(self, rank_plan: RankPlan) -> bool:
        """Whether a rank's chromium events are a download of their own: not for a rank
        that logged as an earlier one did (its events are in the all-ranks timeline), so a
        thousand alike ranks do not write a thousand more timelines."""
        return bool(rank_plan.rank.chromium_events) and (
            rank_plan.same_as is None or self.events_all_path is None
        )

    def rank_plan(self, rank: RankTrace) -> RankPlan | None:
        if self._rank_plans is None or len(self._rank_plans) != len(self.ranks):
            self._rank_plans = {id(r.rank): r for r in self.ranks}
        found = self._rank_plans.get(id(rank))
        return found if found is not None and found.rank is rank else None

    def page_of(self, docname: str) -> tuple[FramePlan | None, GraphPlan | KernelPlan | None]:
        """What a docname of this trace shows: (None, None) for the overview, a frame, or a
        frame and one of its graphs or kernels.  KeyError for a docname not of this plan."""
        if self._pages is None:
            pages: dict[str, tuple[FramePlan | None, GraphPlan | KernelPlan | None]] = {
                self.index_docname: (None, None)
            }
            if self.vllm_docname:  # a page of the trace as a whole, as the overview
                pages[self.vllm_docname] = (None, None)
            for f in self.paged_frames:
                pages[f.docname] = (f, None)
                pages.update((g.docname, (f, g)) for g in f.graphs if g.has_page)
                pages.update((k.docname, (f, k)) for k in f.kernels if k.has_page)
            self._pages = pages
        return self._pages[docname]

    @property
    def docnames(self) -> list[str]:
        names = [self.index_docname, *([self.vllm_docname] if self.vllm_docname else [])]
        for f in self.paged_frames:
            names.append(f.docname)
            names.extend(g.docname for g in f.graphs if g.has_page)
            names.extend(k.docname for k in f.kernels if k.has_page)
        return names


def plan_trace(
    label: str,
    trace: Trace,
    generated_dir: str,
    max_frames: int = DEFAULT_MAX_FRAMES,
    fold_bytes: int = DEFAULT_FOLD_BYTES,
) -> TracePlan:
    """Name every page and object of a trace (names: see :mod:`.naming`).

    At most ``max_frames`` compiles get pages: the first ones in compile order,
    taking each rank's n-th compile before any rank's (n+1)-th, so every rank keeps
    its first compiles.  The others are ``plan.past_limit``: no pages, no objects.
    """
    root = posixpath.join(generated_dir, label_segment(label))
    plan = TracePlan(
        label=label,
        trace=trace,
        root=root,
        max_frames=max(0, max_frames),
        fold_bytes=max(0, fold_bytes),
    )
    sharing = share_frames(trace) if trace.is_multi_rank else None
    paged = _within_limit(trace, plan.max_frames, sharing.repeats if sharing else {})
    planner = _Planner(plan, sharing, paged, taken={plan.index_docname})
    if trace.is_multi_rank and any(r.chromium_events for r in trace.ranks):
        plan.events_all_path = posixpath.join(root, "_raw", "chromium-events-all-ranks.json")
    _plan_runtime_downloads(plan)
    for index, (rank, rank_name) in enumerate(zip(trace.ranks, rank_names(trace), strict=True)):
        rank_plan = planner.rank_plan(index, rank, rank_name)
        shared = planner.plan_frames(rank_plan)
        planner.plan_differences(rank_plan, shared)
    if any(has_vllm(rank) for rank in trace.ranks):
        plan.vllm_docname = _claim(planner.taken, posixpath.join(root, "vllm"))
    return plan


def _plan_runtime_downloads(plan: TracePlan) -> None:
    """Where each runtime profile is offered as a download, named by our own figures, never
    by the file's name (any characters on a disk)."""
    for index, profile in enumerate(plan.trace.runtime):
        name = f"profile-{profile.pid if profile.pid is not None else index}-{profile.mode}"
        if any(posixpath.basename(p) == f"{name}.json" for p in plan.runtime_downloads.values()):
            name += f"-{index}"
        plan.runtime_downloads[profile.path] = posixpath.join(
            plan.root, "_raw", "runtime", name + ".json"
        )


@dataclass
class _Planner:
    """What planning carries from one rank to the next: which compiles repeat an earlier
    rank's and which get pages, the docnames taken, the frames planned so far and the
    ranks' names."""

    plan: TracePlan
    sharing: Sharing | None
    paged: set[int]  # ``id()`` of the compiles within the limit
    taken: set[str]
    planned: dict[int, FramePlan] = field(default_factory=dict)  # by id() of the compile
    names: dict[int, str] = field(default_factory=dict)  # rank names by id() of the rank

    def rank_plan(self, index: int, rank: RankTrace, rank_name: str) -> RankPlan:
        """The rank's folder and timing-events download, and the class it belongs to."""
        root = self.plan.root
        segment = rank_segment(rank_name)
        folder = posixpath.join(root, segment) if segment else root
        # the rank in the file's own name: a download keeps only its base name
        events_name = fit(f"chromium-events-{segment}" if segment else "chromium-events") + ".json"
        events = posixpath.join(root, "_raw", events_name)
        rank_plan = RankPlan(rank, rank_name, folder, events)
        self.names[id(rank)] = rank_name or "rank ?"
        sharing = self.sharing
        first = sharing.class_of.get(index) if sharing is not None else None
        if first is not None:
            rank_plan.same_as = self.plan.ranks[first]
        elif sharing is not None:
            rank_plan.set_aside = sharing.set_aside.get(index, {})
        self.plan.ranks.append(rank_plan)
        return rank_plan

    def plan_frames(self, rank_plan: RankPlan) -> list[tuple[Compile, Compile]]:
        """The rank's frames in compile order, past the limit listed apart; returns the
        compiles that repeat an earlier rank's, each beside the one shown."""
        shared: list[tuple[Compile, Compile]] = []  # (the compile shown, this rank's)
        for compile_ in compile_order(rank_plan.rank.compiles):
            if id(compile_) not in self.paged:
                self.plan.past_limit.append(PastLimit(rank_plan, compile_))
                continue
            frame = self._frame(rank_plan, compile_)
            if frame.same_as is not None:
                shared.append((frame.same_as.compile, compile_))
            self.plan.frames.append(frame)
            self.planned[id(compile_)] = frame
        return shared

    def _frame(self, rank_plan: RankPlan, compile_: Compile) -> FramePlan:
        """One compile's frame: a repeat of an earlier rank's (its pages), or a page of its
        own with its graphs, records and kernels, and what it differs in from the first
        rank's same compile."""
        rank, sharing, planned = rank_plan.rank, self.sharing, self.planned
        name = frame_name(self.plan.label, rank_plan.name, compile_)
        repeated = sharing.repeats.get(id(compile_)) if sharing is not None else None
        target = planned.get(id(repeated)) if repeated is not None else None
        if target is not None:
            frame = FramePlan(rank, compile_, name, target.docname, same_as=target)
            _mirror(frame, target)
            return frame
        docname = _claim(self.taken, posixpath.join(rank_plan.folder, frame_segment(compile_)))
        frame = FramePlan(rank, compile_, name, docname)
        other = sharing.counterparts.get(id(compile_)) if sharing is not None else None
        if other is not None and id(other) in planned:
            frame.counterpart = planned[id(other)]
            frame.counterpart_label = f"{self.names[id(frame.counterpart.rank)]} {other.label}"
            frame.differences = compile_differences(
                other, compile_, (frame.counterpart.rank.rank, rank.rank)
            )
        _plan_graphs(self.plan, frame, self.taken, planned)
        _plan_records(self.plan, frame)
        _plan_kernels(frame, self.taken, planned)
        return frame

    def plan_differences(self, rank_plan: RankPlan, shared: list[tuple[Compile, Compile]]) -> None:
        """What the rank logged differently, metric by metric: from the compiles whose pages
        show its own, and, for a rank of a class, from its class's first rank."""
        rank, planned, names = rank_plan.rank, self.planned, self.names
        shown = shared  # each compile beside the one whose page shows it
        if rank_plan.same_as is not None:  # its class's first rank: compiles in one order
            original = rank_plan.same_as.rank
            shared = list(zip(original.compiles, rank.compiles, strict=False))
            # the values a reader finds "on its page": an earlier rank's, maybe
            shown = [(_shown_compile(planned, a), c) for a, c in shared]
            if len(original.chromium_events) != len(rank.chromium_events):
                rank_plan.differences.append(
                    f"{len(rank.chromium_events)} timing events "
                    f"(rank {rank_number(self.plan.trace, original)}: "
                    f"{len(original.chromium_events)})"
                )

        def page_label(c: Compile) -> str:
            return f"{names[id(planned[id(c)].rank)]} {c.label}" if id(c) in planned else c.label

        def rank_of(c: Compile) -> int | None:
            return planned[id(c)].rank.rank if id(c) in planned else None

        differences, rank_plan.changed_values = metric_differences(shown, page_label, rank_of)
        if any(a is not b for (a, _), (b, _) in zip(shared, shown, strict=True)):
            # what it differs in from its class's
            differences, _ = metric_differences(shared, rank_of=rank_of)
        rank_plan.differences[:0] = differences


def _function_key(frame: FramePlan) -> tuple[object, ...]:
    """One function's compiles on one rank: its rank, compiled-autograd and frame ids, and
    the function the records name (:func:`.naming.compiled_function`: a reset reuses frame
    ids for other functions)."""
    c = frame.compile
    name, place = compiled_function(frame.rank, c)
    return (id(frame.rank), c.id.compiled_autograd_id, c.id.frame_id, name, place)


def _shown_compile(planned: dict[int, FramePlan], compile_: Compile) -> Compile:
    """The compile whose page shows ``compile_``: itself, or the earlier rank's it repeats."""
    frame = planned.get(id(compile_))
    return frame.same_as.compile if frame is not None and frame.same_as is not None else compile_


def compile_order(compiles: Sequence[Compile]) -> list[Compile]:
    """Compiles by compile id, as a reader counts them: ``[0/0]``, ``[0/0_1]``, ``[0/1]``,
    ``[1/0]`` ...; compiled-autograd graphs after the frames they ran in, a repeat after
    ``torch._dynamo.reset()`` after every first occurrence, ``[-/-]`` last.

    A reset starts the counters of every frame again: a compile goes with the run (the
    reset) it was logged in, so after one, ``[1/0]`` of the next function and ``[0/3]``
    (the first of its id) follow ``[0/0] #2`` and ``[0/2] #2``, not the run before."""
    run = 1
    generation: dict[int, int] = {}
    for c in sorted(compiles, key=lambda c: c.first_line):  # log order
        if not c.id.is_unknown:
            run = max(run, c.occurrence)  # a repeated id: a reset happened before it
        generation[id(c)] = max(c.occurrence, run)

    def key(c: Compile) -> tuple[int, int, int, int, int, int]:
        cid = c.id
        if cid.is_unknown:
            return (1, 0, 0, 0, 0, 0)
        return (
            0,
            generation[id(c)],
            -1 if cid.compiled_autograd_id is None else cid.compiled_autograd_id,
            -1 if cid.frame_id is None else cid.frame_id,
            -1 if cid.frame_compile_id is None else cid.frame_compile_id,
            cid.attempt,
        )

    return sorted(compiles, key=key)


#: Inductor graphs logged before and after a pass, and the pass, for "unchanged by <pass>".
PASS_BEFORE = {
    "after_pre_grad_graph": "Inductor's pre-grad passes",
    "after_joint_graph": "Inductor's joint-graph passes",
    "inductor_post_grad_graph": "Inductor's post-grad passes",
    "after_post_grad_graph": "Inductor's post-grad passes",
}


def _mirror(frame: FramePlan, target: FramePlan) -> None:
    """The graphs and kernels of a frame shown on ``target``'s pages (its rank repeats
    target's: the same artifacts in the same order), named as its own objects."""
    artifacts = frame.compile.artifacts
    by_artifact = {t.artifact.ordinal: t for t in target.graphs}
    ordinal = {id(a): i for i, a in enumerate(artifacts)}
    target_at = {i: a.ordinal for i, a in enumerate(target.compile.artifacts)}
    for artifact, n in zip(artifacts, occurrences(a.name for a in artifacts), strict=True):
        other = by_artifact.get(target_at.get(ordinal[id(artifact)], -1))
        if other is None:
            continue
        frame.graphs.append(
            GraphPlan(
                artifact,
                f"{frame.name}/{item_name(artifact.name, n)}",
                other.docname,
                other.raw_path,
                same_as=other,
                unchanged_by=other.unchanged_by,
                anchor=other.anchor,
            )
        )
    pairs = [(a, k) for a in artifacts for k in a.kernels]
    numbers = occurrences(k.name for _, k in pairs)
    for (artifact, kernel), n, other_kernel in zip(pairs, numbers, target.kernels, strict=False):
        frame.kernels.append(
            KernelPlan(
                kernel,
                artifact,
                f"{frame.name}/{item_name(kernel.name, n)}",
                other_kernel.docname,
                other_kernel.code,
                same_as=other_kernel,
                anchor=other_kernel.anchor,
            )
        )
    for raw in target.downloads:
        frame.downloads.append(RawPlan(_artifact_like(frame, target, raw.artifact), raw.raw_path))


def _artifact_like(frame: FramePlan, target: FramePlan, artifact: Artifact) -> Artifact:
    """The artifact of ``frame`` at the position of ``artifact`` in ``target``."""
    for mine, theirs in zip(frame.compile.artifacts, target.compile.artifacts, strict=False):
        if theirs is artifact:
            return mine
    return artifact


def _within_limit(
    trace: Trace, max_frames: int, repeats: Mapping[int, Compile] | None = None
) -> set[int]:
    """``id()`` of the compiles that get pages: the first ``max_frames`` in compile order.

    Records outside any compilation (one page per log at most) do not count, nor do
    compiles shown on an earlier rank's pages (``repeats``): those are shown where that
    rank's compile is, or past the limit with it.
    """
    repeats = repeats or {}
    outside = {id(c) for r in trace.ranks for c in r.compiles if c.id.is_unknown}
    per_rank = [
        [c for c in r.compiles if not c.id.is_unknown and id(c) not in repeats] for r in trace.ranks
    ]
    if sum(map(len, per_rank)) <= max_frames:
        paged = outside | {id(c) for compiles in per_rank for c in compiles}
    else:
        order = sorted(
            ((i, r, c) for r, compiles in enumerate(per_rank) for i, c in enumerate(compiles)),
            key=lambda t: (t[0], t[1]),
        )
        paged = outside | {id(c) for _, _, c in order[:max_frames]}
    return paged | {key for key, target in repeats.items() if id(target) in paged}


def _plan_graphs(
    plan: TracePlan, frame: FramePlan, taken: set[str], planned: dict[int, FramePlan]
) -> None:
    """Graph pages, numbered among the frame's same-named artifacts (paged or not)."""
    artifacts = frame.compile.artifacts
    previous = _previous_frame(frame, planned)
    budget = plan.fold_bytes * FRAME_FOLDS
    for artifact, n in zip(artifacts, occurrences(a.name for a in artifacts), strict=True):
        if not has_page(artifact):
            if is_download(artifact):
                segment = item_segment("artifact", artifact.name, n)
                path = posixpath.join(
                    plan.root, "_raw", posixpath.relpath(frame.docname, plan.root), segment
                )
                frame.downloads.append(RawPlan(artifact, path + download_suffix(artifact)))
            continue
        name = f"{frame.name}/{item_name(artifact.name, n)}"
        earlier = _identical_graph(frame, artifact)
        if earlier is not None:
            frame.graphs.append(
                GraphPlan(
                    artifact,
                    name,
                    earlier.docname,
                    earlier.raw_path,
                    same_as=earlier,
                    unchanged_by=PASS_BEFORE.get(artifact.name, ""),
                    anchor=earlier.anchor,
                )
            )
            continue
        short = item_name(artifact.name, n)
        across = _counterpart_graph(frame, short)
        if across is not None and _same_text(across.artifact, artifact):
            frame.graphs.append(
                GraphPlan(
                    artifact,
                    name,
                    across.docname,
                    across.raw_path,
                    same_as=across,
                    anchor=across.anchor,
                    same_label=frame.counterpart_label,
                )
            )
            continue
        segment = item_segment("graph", artifact.name, n)
        base = _numbers_only_base(frame.counterpart, artifact, short, frame.counterpart_label)
        if base is None:
            base = _numbers_only_base(previous, artifact, short)
        if base is not None:
            folder = posixpath.join(plan.root, "_raw", posixpath.relpath(frame.docname, plan.root))
            raw = posixpath.join(folder, segment) + download_suffix(artifact)
            label, earlier, same = base
            frame.graphs.append(
                GraphPlan(
                    artifact,
                    name,
                    frame.docname,
                    raw,
                    numbers_of=earlier,
                    numbers_of_label=label,
                    numbers_same=same,
                )
            )
            continue
        place = _claim(taken, posixpath.join(frame.docname, segment))
        raw = posixpath.join(plan.root, "_raw", posixpath.relpath(place, plan.root))
        raw += download_suffix(artifact)
        if artifact.name in RUN_NOT_READ and plan.fold_bytes:  # a fold links the download
            frame.graphs.append(
                GraphPlan(artifact, name, frame.docname, raw, anchor=posixpath.basename(place))
            )
        elif plan.fold_bytes and artifact.size <= min(plan.fold_bytes, budget):
            budget -= artifact.size  # on the frame page: a page of its own is mostly theme
            anchor = posixpath.basename(place)
            # shown whole, numbered: no raw copy to write and publish beside it
            frame.graphs.append(GraphPlan(artifact, name, frame.docname, "", anchor=anchor))
        else:
            frame.graphs.append(GraphPlan(artifact, name, place, raw))


def _plan_records(plan: TracePlan, frame: FramePlan) -> None:
    """Downloads for the metrics records too long to show whole, numbered per kind."""
    folder = posixpath.join(plan.root, "_raw", posixpath.relpath(frame.docname, plan.root))
    records = frame.compile.metrics
    for record, n in zip(records, occurrences(m.event for m in records), strict=True):
        if record_is_long(record.data):
            path = posixpath.join(folder, item_segment("record", record.event, n) + ".json")
            frame.records[id(record)] = path


#: Graphs shorter than this get a page even when they differ from the previous compile's only
#: in numbers: a few lines read better whole.
NUMBERS_ONLY_MIN_LINES = 40


def _previous_frame(frame: FramePlan, planned: dict[int, FramePlan]) -> FramePlan | None:
    """The planned frame of the compile before this one of the same frame, if paged."""
    previous = compare.previous_compile(frame.rank, frame.compile)
    return planned.get(id(previous)) if previous is not None else None


def _numbers_only_base(
    previous_frame: FramePlan | None, artifact: Artifact, short_name: str, label: str = ""
) -> tuple[str, GraphPlan, bool] | None:
    """The page graph of the previous compile's frame (same name and occurrence), and that
    compile's id, which this graph (or guard dump) equals but for numbers (sizes, strides,
    constants: a recompile for new shapes), and whether they are the very same text.
    Linear in the two texts; only texts of close sizes and as many lines are compared.
    ``previous_frame`` may be another rank's frame of the same compile id, named ``label``."""
    if not (artifact.is_graph or artifact.name in GUARD_ARTIFACTS) or previous_frame is None:
        return None
    for g in previous_frame.graphs:
        if g.name[len(previous_frame.name) + 1 :] != short_name:
            continue
        label, base = label or previous_frame.compile.label, g
        if g.numbers_of is not None:  # the page its numbers-only chain started from
            label, base = g.numbers_of_label, g.numbers_of
        while base.same_as is not None:
            base = base.same_as
        if base.artifact.size != artifact.size and not _sizes_may_differ(base, artifact):
            return None
        new, old = artifact.text(), base.artifact.text()
        lines = new.count("\n")
        if lines != old.count("\n") or lines < NUMBERS_ONLY_MIN_LINES:
            return None
        if old == new or compare.differ_only_in_numbers(old, new):
            return label, base, old == new
        return None
    return None


def _counterpart_graph(frame: FramePlan, short_name: str) -> GraphPlan | None:
    """The graph of the same name and occurrence on the frame's counterpart (the same
    compile id on an earlier rank), as shown there; None where it is not shown by itself."""
    other = frame.counterpart
    if other is None:
        return None
    for g in other.graphs:
        if g.name[len(other.name) + 1 :] == short_name:
            root = g
            while root.same_as is not None:
                root = root.same_as
            return root if root.shown else None
    return None


def _same_text(a: Artifact, b: Artifact) -> bool:
    """The same text (read only when the sizes agree) and the same kind of download."""
    return a.size == b.size and download_suffix(a) == download_suffix(b) and a.text() == b.text()


def _sizes_may_differ(base: GraphPlan, artifact: Artifact) -> bool:
    """Whether two graphs' byte sizes are close enough to differ only in numbers (a new
    size changes a few digits per line): a cheap test before their texts are read."""
    return abs(base.artifact.size - artifact.size) * 4 <= max(base.artifact.size, 1)


def _identical_graph(frame: FramePlan, artifact: Artifact) -> GraphPlan | None:
    """An earlier graph of the frame with the same text (a pass that changed nothing), which
    then shows both; only graphs are compared, and only texts of the same size are read."""
    if not artifact.is_graph:
        return None
    for earlier in frame.graphs:
        other = earlier.artifact
        if (
            earlier.shown
            and other.is_graph
            and other.size == artifact.size
            and download_suffix(other) == download_suffix(artifact)
            and other.text() == artifact.text()
        ):
            return earlier
    return None


def _plan_kernels(frame: FramePlan, taken: set[str], planned: dict[int, FramePlan]) -> None:
    """Kernel pages, numbered among the frame's same-named kernels (fwd and bwd reuse names);
    none for a kernel whose source is the previous compile's but for its numbers, and none
    for a kernel of code that its frame page shows (the kernel is shown there too)."""
    pairs = [(a, k) for a in frame.compile.artifacts for k in a.kernels]
    numbers = occurrences(k.name for _, k in pairs)
    earlier = _previous_kernels(_previous_frame(frame, planned))
    across = _previous_kernels(frame.counterpart, frame.counterpart_label)
    for (artifact, kernel), n in zip(pairs, numbers, strict=True):
        segment = item_segment("kernel", kernel.name, n)
        short = item_name(kernel.name, n)
        plan = KernelPlan(
            kernel, artifact, f"{frame.name}/{short}", frame.docname, frame.graph_for(artifact)
        )
        for base in (across.get(short), earlier.get(short)):
            if base is None:
                continue
            label, base_kernel = base
            if base_kernel.numbers_of is not None:  # the page its chain started from
                label, base_kernel = base_kernel.numbers_of_label, base_kernel.numbers_of
            old, new = base_kernel.kernel.source, kernel.source
            if old and new and compare.differ_only_in_numbers(old, new):
                plan.numbers_of, plan.numbers_of_label = base_kernel, label
                break
        if plan.numbers_of is not None:
            frame.kernels.append(plan)
            continue
        place = _claim(taken, posixpath.join(frame.docname, segment))
        if plan.code is not None and plan.code.inline:  # beside its code, on the frame page
            plan.anchor = posixpath.basename(place)
        else:
            plan.docname = place
        frame.kernels.append(plan)


def _previous_kernels(
    previous_frame: FramePlan | None, label: str = ""
) -> dict[str, tuple[str, KernelPlan]]:
    """The kernels of the previous compile's frame (or of another rank's frame of the same
    compile id, named ``label``) by short name, with that compile's id."""
    if previous_frame is None:
        return {}
    label = label or previous_frame.compile.label
    return {
        k.name[len(previous_frame.name) + 1 :]: (label, k)
        for k in previous_frame.kernels
        if k.same_as is None
    }


def _claim(taken: set[str], docname: str) -> str:
    """``docname``, or, should two digests ever collide, a variant no other page has."""
    found, n = docname, 1
    while found in taken:
        n += 1
        found = f"{docname}--c{n}"
    taken.add(found)
    return found


# -- TORCH_COMPILE_DEBUG folders -------------------------------------------------------------
# Pages are named after the folders (``<label>/model__0_inference_0.0``): the ``model__<n>``
# numbers are AOT graph ids and the debug logs carry no compile ids.


@dataclass
class SdscPlan:
    spec: SdscSpec
    name: str
    docname: str
    kernel: DebugKernelPlan | None = None  # the kernel of the same index (lowering order)


@dataclass
class DebugKernelPlan:
    kernel: Kernel
    name: str
    docname: str
    sdsc: SdscPlan | None = None


@dataclass
class DebugGraphPlan:
    graph: GraphFolder
    run: DebugRun
    name: str
    docname: str
    raw: dict[str, str] = field(default_factory=dict)  # file name -> download path
    kernels: list[DebugKernelPlan] = field(default_factory=list)
    sdsc: list[SdscPlan] = field(default_factory=list)
    frames: list[str] = field(default_factory=list)  # frame objects of a trace of the same run


@dataclass
class DebugLogPlan:
    file: DebugFile
    run: DebugRun
    title: str
    docname: str


@dataclass
class DebugDirPlan:
    """The pages of a debug folder: an overview, a page per graph folder, kernel, sdsc, log."""

    label: str
    debug: DebugDir
    root: str
    graphs: list[DebugGraphPlan] = field(default_factory=list)
    logs: list[DebugLogPlan] = field(default_factory=list)
    trace_label: str | None = None  # the trace log of the same run, when its pages exist
    trace_index: str | None = None  # the overview docname of that trace
    #: That trace's compile time (the root of its tree); None when it records none.
    trace_compile_seconds: float | None = None

    @property
    def index_docname(self) -> str:
        return f"{self.root}/index"

    def page_of(self, docname: str) -> tuple[str, object]:
        """(kind, what) of a docname: ``overview``, ``debug-graph``, ``debug-kernel``,
        ``sdsc`` or ``debug-log``; KeyError for a docname not of this plan."""
        if docname == self.index_docname:
            return "overview", self
        for g in self.graphs:
            if g.docname == docname:
                return "debug-graph", g
            for k in g.kernels:
                if k.docname == docname:
                    return "debug-kernel", (g, k)
            for s in g.sdsc:
                if s.docname == docname:
                    return "sdsc", (g, s)
        for log in self.logs:
            if log.docname == docname:
                return "debug-log", log
        raise KeyError(docname)

    @property
    def docnames(self) -> list[str]:
        names = [self.index_docname]
        for g in self.graphs:
            names.append(g.docname)
            names.extend(k.docname for k in g.kernels)
            names.extend(s.docname for s in g.sdsc)
        names.extend(log.docname for log in self.logs)
        return names


def plan_debug_dir(label: str, debug: DebugDir, generated_dir: str) -> DebugDirPlan:
    """Name every page and object of a debug folder, after its folders and files."""
    root = posixpath.join(generated_dir, label_segment(label))
    plan = DebugDirPlan(label, debug, root)
    taken = {plan.index_docname}
    several = len(debug.runs) > 1
    clean = label_name(label)
    for run in debug.runs:
        folder = posixpath.join(root, fit("run-" + slugify(run.name))) if several else root
        prefix = f"{clean}/{name_text(run.name)}" if several else clean
        for log, title in _debug_logs(run):
            segment = fit("log-" + slugify(log.name.removesuffix(".log")))
            plan.logs.append(
                DebugLogPlan(log, run, title, _claim(taken, posixpath.join(folder, segment)))
            )
        for graph in run.graphs:
            docname = _claim(taken, posixpath.join(folder, fit("graph-" + slugify(graph.name))))
            g = DebugGraphPlan(graph, run, f"{prefix}/{name_text(graph.name)}", docname)
            raw_folder = posixpath.join(root, "_raw", posixpath.relpath(docname, root))
            for fname, f in graph.files.items():
                if f.text is not None:
                    g.raw[fname] = posixpath.join(raw_folder, fname)
            pairs = list(
                zip(graph.kernels, occurrences(k.name for k in graph.kernels), strict=True)
            )
            for kernel, n in pairs:
                g.kernels.append(
                    DebugKernelPlan(
                        kernel,
                        f"{g.name}/{item_name(kernel.name, n)}",
                        _claim(
                            taken, posixpath.join(docname, item_segment("kernel", kernel.name, n))
                        ),
                    )
                )
            generated = [k for k in g.kernels if k.kernel.kind != "extern"]
            for spec in graph.sdsc:
                s = SdscPlan(
                    spec,
                    f"{g.name}/sdsc_{spec.index}",
                    _claim(taken, posixpath.join(docname, f"sdsc-{spec.index}")),
                )
                if spec.index < len(generated):
                    s.kernel = generated[spec.index]
                    generated[spec.index].sdsc = s
                g.sdsc.append(s)
            plan.graphs.append(g)
    return plan


def _debug_logs(run: DebugRun) -> list[tuple[DebugFile, str]]:
    out = [(run.dynamo_log, "TorchDynamo debug log")] if run.dynamo_log is not None else []
    out.extend((f, f"AOT debug log {f.name}") for f in run.aot_logs)
    return out
