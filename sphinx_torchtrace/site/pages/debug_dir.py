"""The pages of a TORCH_COMPILE_DEBUG folder: what each of its files answers (seed 002).

An overview of the runs and graph folders; per graph folder the ATen graph, what the passes
changed, the repro as a download, the IR before and after fusion with a fusion summary, the
generated code split into kernels, the provenance mapping; a page per kernel and per sdsc
(linked both ways by index) and the debug logs as searchable text.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

from ...trace.inputs.debug_dir import GRAPH_FILES, DebugFile, SdscSpec
from ..blocks import (
    CELL_ITEMS,
    TABLE_COLUMNS,
    TABLE_ROWS,
    AnchorLink,
    Block,
    BulletList,
    Code,
    CodeBlock,
    Download,
    Inline,
    Inlines,
    Lines,
    ObjectLink,
    ObjectTarget,
    Page,
    PageLink,
    Paragraph,
    Section,
    Table,
    Toctree,
    WebOnly,
    capped_joined,
    capped_table,
    item,
    joined,
)
from ..plan import (
    DebugDirPlan,
    DebugGraphPlan,
    DebugKernelPlan,
    DebugLogPlan,
    PageSettings,
    SdscPlan,
)
from ..source import maybe_strip
from ..words import _
from .kernel import KERNEL_KIND_MEANINGS

SEPARATOR = " · "
#: Lines of either graph past which no diff is computed (difflib is quadratic at worst).
MAX_DIFF_LINES = 5000
#: Characters of one file shown inline; longer files are offered as downloads only.
MAX_SHOWN = 400_000


def build_debug_page(plan: DebugDirPlan, docname: str, settings: PageSettings) -> Page:
    """The page at ``docname`` of a debug folder's plan (KeyError if it has none)."""
    kind, what = plan.page_of(docname)
    if kind == "overview":
        return debug_overview_page(plan, settings)
    if kind == "debug-graph":
        assert isinstance(what, DebugGraphPlan)
        return debug_graph_page(plan, what, settings)
    if kind == "debug-kernel":
        assert isinstance(what, tuple)
        return debug_kernel_page(plan, what[0], what[1], settings)
    if kind == "sdsc":
        assert isinstance(what, tuple)
        return sdsc_page(plan, what[0], what[1])
    assert isinstance(what, DebugLogPlan)
    return debug_log_page(plan, what)


def debug_overview_page(plan: DebugDirPlan, settings: PageSettings) -> Page:
    """The folder's overview: its graph folders, its debug logs, the trace log's report,
    and the files it holds that torch does not write."""
    debug = plan.debug
    blocks: list[Block] = [
        Paragraph(
            [
                "A ",
                Code("TORCH_COMPILE_DEBUG"),
                f" folder: {len(debug.runs)} run(s), "
                f"{len(plan.graphs)} graph folder(s). Graph folders are named after their "
                "folders: ",
                Code("model__<n>"),
                " is an AOT graph id, not a compile id.",
            ]
        ),
    ]
    blocks += _graph_folders_section(plan)
    blocks += _debug_logs_section(plan)
    if plan.trace_label is not None:
        blocks.append(
            Paragraph(
                [
                    "The trace log torch wrote in the same run has its own report: ",
                    Code(plan.trace_label),
                    ".",
                ]
            )
        )
    blocks += _compile_time_section(plan)
    blocks += _unknown_files_section(plan)
    blocks.append(
        Toctree(
            [g.docname for g in plan.graphs] + [log.docname for log in plan.logs],
            caption="Graph folders",
        )
    )
    return Page(plan.index_docname, [plan.label], blocks)


def _compile_time_section(plan: DebugDirPlan) -> list[Block]:
    """Where the run's compile times are: a debug folder's files (graphs, code, debug logs)
    are not timed records, so the times are the trace log's of the same run, if any."""
    intro = (
        "A debug folder's files (graphs, code, debug logs) hold no compile-time records: "
        "this report reads compile times from trace logs only. "
    )
    if plan.trace_index is None:
        said: list[Inline] = [
            intro,
            "No trace log is beside this folder's runs; run the program with ",
            Code("TORCH_TRACE"),
            " set as well to have them.",
        ]
    elif plan.trace_compile_seconds is None:
        said = [
            intro,
            "The trace log torch wrote in the same run records none either: see ",
            PageLink(plan.trace_index, "its report"),
            ".",
        ]
    else:
        said = [
            intro,
            "The trace log torch wrote in the same run records "
            f"{plan.trace_compile_seconds:.2f} s: ",
            AnchorLink(plan.trace_index, "compile-time-by-source", "where it went"),
            ".",
        ]
    return [Section([_("Compile time")], [Paragraph(said)], anchor="compile-time")]


def _graph_folders_section(plan: DebugDirPlan) -> list[Block]:
    """A row per graph folder: its run, kind, kernels, sdsc files and frames."""
    rows: list[list[Inlines]] = []
    for g in plan.graphs:
        rows.append(
            [
                [PageLink(g.docname, g.graph.name)],
                [g.run.name],
                [g.graph.kind],
                [str(len([k for k in g.kernels if k.kernel.kind != "extern"]))],
                [str(len(g.sdsc))],
                capped_joined([[ObjectLink("frame", f)] for f in g.frames]) if g.frames else ["—"],
            ]
        )
    if not rows:
        return []
    return [
        Section(
            [_("Graph folders")],
            capped_table(
                ["graph folder", "run", "kind", "kernels", "sdsc", "frame of the trace log"],
                rows,
                where="the folder",
            ),
            anchor="graph-folders",
        )
    ]


def _debug_logs_section(plan: DebugDirPlan) -> list[Block]:
    """The folder's debug logs, each linked to its page."""
    if not plan.logs:
        return []
    return [
        Section(
            [_("Debug logs")],
            [
                BulletList(
                    [
                        item(PageLink(log.docname, log.title), f" ({log.file.size} bytes)")
                        for log in plan.logs
                    ]
                )
            ],
            anchor="debug-logs",
        )
    ]


def _unknown_files_section(plan: DebugDirPlan) -> list[Block]:
    """The files and folders torch does not write, listed unread."""
    debug = plan.debug
    unknown = list(debug.unknown) + [f"{r.name}/{u}" for r in debug.runs for u in r.unknown]
    unknown += [f"{g.graph.relpath}/{u}" for g in plan.graphs for u in g.graph.unknown]
    if not unknown:
        return []
    return [
        Section(
            [_("Files not read")],
            [
                Paragraph(["Files and folders TORCH_COMPILE_DEBUG does not write:"]),
                BulletList([item(Code(u)) for u in unknown[:200]]),
            ],
            anchor="unknown-files",
        )
    ]


def _file_section(
    g: DebugGraphPlan,
    name: str,
    title: str,
    language: str,
    settings: PageSettings,
    anchor: str,
) -> Section | None:
    f = g.graph.files.get(name)
    if f is None:
        return None
    blocks: list[Block] = [Paragraph([Code(name), ": ", GRAPH_FILES.get(name, ""), "."])]
    blocks.extend(_file_blocks(g, f, language, settings))
    return Section([title], blocks, anchor=anchor)


def _file_blocks(
    g: DebugGraphPlan, f: DebugFile, language: str, settings: PageSettings
) -> list[Block]:
    if f.text is None:
        return [Paragraph(["This file could not be read as text (see the build's warnings)."])]
    out: list[Block] = []
    raw = g.raw.get(f.name)
    if raw is not None:
        out.append(
            Paragraph(
                [
                    WebOnly([Download(raw, f"Download {f.name}")], [Code(f.name)]),
                    f" ({f.size} bytes)",
                ]
            )
        )
    if len(f.text) > MAX_SHOWN:
        out.append(
            Paragraph(
                [
                    WebOnly(
                        ["Too long to show here; download it."],
                        [
                            "Too long to show here: the graph's folder has it, as ",
                            Code(f.name),
                            ".",
                        ],
                    )
                ]
            )
        )
        return out
    out.append(CodeBlock(maybe_strip(f.text, settings.no_source), language, linenos=True))
    return out


def debug_graph_page(plan: DebugDirPlan, g: DebugGraphPlan, settings: PageSettings) -> Page:
    """A graph folder's page: its facts, then a section per file it holds, in the order the
    compile wrote them (ATen graph, passes, repro, fusion, code, provenance, sdsc)."""
    graph = g.graph
    blocks: list[Block] = [ObjectTarget("graph", g.name), _graph_facts(g)]
    blocks.append(Paragraph([PageLink(plan.index_docname, f"Back to {plan.label}")]))
    for section in (
        _file_section(
            g, "fx_graph_readable.py", "ATen graph", "torchtrace-fx", settings, "aten-graph"
        ),
        _passes_section(g, settings),
        _repro_section(g),
        _fusion_section(g, settings),
        _code_section(g, settings),
        _provenance_section(g),
        _sdsc_section(g),
    ):
        if section is not None:
            blocks.append(section)
    if graph.unknown:
        blocks.append(
            Paragraph(
                [
                    "Not read (not a file torch writes here): ",
                    *joined([[Code(u)] for u in graph.unknown]),
                ]
            )
        )
    blocks.append(
        Toctree([k.docname for k in g.kernels] + [s.docname for s in g.sdsc], hidden=True)
    )
    return Page(g.docname, [plan.label, SEPARATOR, graph.name], blocks, orphan=False)


def _graph_facts(g: DebugGraphPlan) -> Lines:
    """The graph folder at a glance: where it is, its run, its kind and frames, and the
    files it lacks."""
    graph = g.graph
    facts: list[list[Inline]] = [
        ["Folder: ", Code(graph.relpath)],
        ["Run: ", g.run.name],
        ["Graph: ", graph.kind, " (AOT graph id ", str(graph.aot_id), ")"],
    ]
    if g.frames:
        facts.append(
            ["Frame of the trace log: ", *joined([[ObjectLink("frame", f)] for f in g.frames])]
        )
    if graph.missing:
        facts.append(["Missing files: ", *joined([[Code(m)] for m in graph.missing])])
    return Lines(facts)


def _repro_section(g: DebugGraphPlan) -> Section | None:
    """The runnable repro, as a download."""
    runnable = g.raw.get("fx_graph_runnable.py")
    if runnable is None:
        return None
    return Section(
        [_("Runnable repro")],
        [
            Paragraph(
                [
                    WebOnly(
                        [Download(runnable, "Download fx_graph_runnable.py")],
                        [Code("fx_graph_runnable.py"), " (in the graph's folder)"],
                    ),
                    ": a self-contained script that builds the graph's inputs and reruns it.",
                ]
            )
        ],
        anchor="repro",
    )


def _sdsc_section(g: DebugGraphPlan) -> Section | None:
    """The graph's kernel specs (sdsc), each linked to its page and its kernel."""
    if not g.sdsc:
        return None
    return Section(
        [_("Kernel specs (sdsc)")],
        capped_table(
            ["sdsc", "op", "ATen op", "cores", "kernel of the same index"],
            [
                [
                    [PageLink(s.docname, f"sdsc_{s.spec.index}")],
                    [s.spec.op],
                    [s.spec.aten_op],
                    [str(s.spec.cores) if s.spec.cores is not None else "—"],
                    [PageLink(s.kernel.docname, s.kernel.kernel.name)] if s.kernel else ["—"],
                ]
                for s in g.sdsc
            ],
            where="the graph folder",
        ),
        anchor="sdsc",
    )


def _passes_section(g: DebugGraphPlan, settings: PageSettings) -> Section:
    before = g.graph.text("fx_graph_readable.py")
    after = g.graph.text("fx_graph_transformed.py")
    intro = Paragraph(
        [
            Code("fx_graph_transformed.py"),
            ": ",
            GRAPH_FILES["fx_graph_transformed.py"],
            ", diffed against the ATen graph.",
        ]
    )
    blocks: list[Block] = [intro]
    if before is None or after is None:
        blocks.append(Paragraph(["One of the two graphs is missing or unreadable: no diff."]))
    elif before == after:
        blocks.append(Paragraph(["The passes changed nothing: both graphs are the same."]))
    else:
        a, b = before.splitlines(), after.splitlines()
        if len(a) > MAX_DIFF_LINES or len(b) > MAX_DIFF_LINES:
            blocks.append(
                Paragraph([f"The graphs differ; too long (> {MAX_DIFF_LINES} lines) to diff here."])
            )
        else:
            diff = "\n".join(
                difflib.unified_diff(
                    a, b, "fx_graph_readable.py", "fx_graph_transformed.py", lineterm=""
                )
            )
            blocks.append(CodeBlock(maybe_strip(diff, settings.no_source), "diff"))
    return Section([_("What the passes changed")], blocks, anchor="passes")


def _fusion_section(g: DebugGraphPlan, settings: PageSettings) -> Section | None:
    fusion = g.graph.fusion
    if fusion is None:
        return None
    buffers_before = sum(len(n.buffers) for n in fusion.before)
    buffers_after = sum(len(n.buffers) for n in fusion.after)
    blocks: list[Block] = [
        Table(
            ["", _("before fusion"), _("after fusion")],
            [
                [["scheduler nodes"], [str(len(fusion.before))], [str(len(fusion.after))]],
                [["buffers"], [str(buffers_before)], [str(buffers_after)]],
            ],
        )
    ]
    fused = fusion.fused
    if fused:
        blocks.extend(
            capped_table(
                ["node after fusion", "holds"],
                [
                    [[Code(name)], capped_joined([[Code(p)] for p in parts])]
                    for name, parts in fused
                ],
                where="the IR files below",
            )
        )
    else:
        blocks.append(
            Paragraph(
                [
                    "The IR after fusion holds no fused node (",
                    Code("FusedSchedulerNode"),
                    "); a "
                    "kernel may still combine nodes when its code is generated (see its graph "
                    "nodes below).",
                ]
            )
        )
    pre, post = g.graph.text("ir_pre_fusion.txt"), g.graph.text("ir_post_fusion.txt")
    if pre is not None and pre == post:
        blocks.append(Paragraph(["The two IR files are identical."]))
    for name, title in (
        ("ir_pre_fusion.txt", "IR before fusion"),
        ("ir_post_fusion.txt", "IR after fusion"),
    ):
        f = g.graph.files.get(name)
        if f is not None:
            blocks.append(
                Section(
                    [title],
                    _file_blocks(g, f, "text", settings),
                    anchor=name.replace("_", "-").replace(".", "-"),
                )
            )
    return Section([_("Loop-level IR and fusion")], blocks, anchor="fusion")


def _code_section(g: DebugGraphPlan, settings: PageSettings) -> Section | None:
    f = g.graph.files.get("output_code.py")
    if f is None:
        return None
    rows = [
        [
            [PageLink(k.docname, k.kernel.name)],
            [k.kernel.kind],
            capped_joined([[Code(n)] for n in k.kernel.source_nodes])
            if k.kernel.source_nodes
            else ["—"],
            [PageLink(k.sdsc.docname, f"sdsc_{k.sdsc.spec.index}")] if k.sdsc else ["—"],
        ]
        for k in g.kernels
    ]
    blocks: list[Block] = [
        Paragraph([Code("output_code.py"), ": ", GRAPH_FILES["output_code.py"], "."])
    ]
    if rows:
        blocks.extend(
            capped_table(["kernel", "kind", "graph nodes", "sdsc"], rows, where="output_code.py")
        )
    blocks.extend(_file_blocks(g, f, "python", settings))
    return Section([_("Generated code")], blocks, anchor="output-code")


def _provenance_section(g: DebugGraphPlan) -> Section | None:
    mappings = g.graph.mappings
    if mappings is None or mappings.empty:
        return None
    by_name = {k.kernel.name: k for k in g.kernels}
    rows: list[list[Inlines]] = []
    for key, post in mappings.kernel_to_post.items():
        base = key.rsplit(":", 1)[0]
        pre = sorted({p for n in post for p in mappings.post_to_pre.get(n, [])})
        kernel = by_name.get(base)
        rows.append(
            [
                [PageLink(kernel.docname, key)] if kernel else [Code(key)],
                capped_joined([[Code(n)] for n in post]) or ["—"],
                capped_joined([[Code(n)] for n in pre]) or ["—"],
            ]
        )
    blocks: list[Block] = [
        Paragraph(
            [
                Code("inductor_provenance_tracking_node_mappings.json"),
                ": which post-grad nodes each kernel computes, and the pre-grad nodes they "
                "came from.",
            ]
        )
    ]
    blocks.extend(
        capped_table(
            ["kernel (call)", "post-grad nodes", "pre-grad nodes"], rows, where="the mapping file"
        )
    )
    return Section([_("Provenance")], blocks, anchor="provenance")


def debug_kernel_page(
    plan: DebugDirPlan, g: DebugGraphPlan, k: DebugKernelPlan, settings: PageSettings
) -> Page:
    kernel = k.kernel
    blocks: list[Block] = [
        ObjectTarget("kernel", k.name),
        Paragraph([KERNEL_KIND_MEANINGS.get(kernel.kind, "A kernel of the generated code.")]),
    ]
    facts: list[list[Inline]] = [
        ["Graph folder: ", PageLink(g.docname, g.graph.name)],
        ["Kind: ", kernel.kind],
    ]
    if kernel.source_nodes:
        facts.append(["Graph nodes: ", *joined([[Code(n)] for n in kernel.source_nodes])])
    if kernel.aten_ops:
        facts.append(["ATen ops: ", *joined([[Code(n)] for n in kernel.aten_ops])])
    if kernel.launch_lines:
        facts.append(["Launched at lines: ", ", ".join(map(str, kernel.launch_lines[:50]))])
    if k.sdsc is not None:
        facts.append(
            ["Spec handed to the back-end: ", PageLink(k.sdsc.docname, f"sdsc_{k.sdsc.spec.index}")]
        )
    blocks.append(Lines(facts))
    if kernel.source:
        blocks.append(
            Section(
                [_("Source")],
                [
                    CodeBlock(
                        maybe_strip(kernel.source, settings.no_source),
                        "cpp" if kernel.kind == "cpp" else "python",
                        linenos=True,
                        start=max(1, kernel.definition_line),
                    )
                ],
                anchor="source",
            )
        )
    return Page(
        k.docname,
        [plan.label, SEPARATOR, g.graph.name, SEPARATOR, kernel.name],
        blocks,
        orphan=True,
    )


def sdsc_page(plan: DebugDirPlan, g: DebugGraphPlan, s: SdscPlan) -> Page:
    """An sdsc file's page: its facts, then a section per part of the spec it has
    (tensors, compute, work division, allocations), then the file itself."""
    spec = s.spec
    blocks: list[Block] = [
        ObjectTarget("kernel", s.name),
        Paragraph(
            [
                "The specification torch-spyre handed to the DeepTools back-end for kernel "
                f"{spec.index} of this graph (in lowering order)."
            ]
        ),
        _sdsc_facts(g, s),
    ]
    if not spec.valid:
        blocks.append(
            Paragraph(["This file is not an sdsc this page can read; its text is below."])
        )
    for section in (
        _tensors_section(spec),
        _compute_section(spec),
        _work_section(spec),
        _allocations_section(spec),
    ):
        if section is not None:
            blocks.append(section)
    if spec.file.text is not None and len(spec.file.text) <= MAX_SHOWN:
        blocks.append(Section([_("The file")], [CodeBlock(spec.file.text, "json")], anchor="file"))
    return Page(
        s.docname,
        [plan.label, SEPARATOR, g.graph.name, SEPARATOR, f"sdsc_{spec.index}"],
        blocks,
        orphan=True,
    )


def _sdsc_facts(g: DebugGraphPlan, s: SdscPlan) -> Lines:
    """The spec at a glance: its graph folder and kernel, its op, IR chain, cores, sizes."""
    spec = s.spec
    facts: list[list[Inline]] = [["Graph folder: ", PageLink(g.docname, g.graph.name)]]
    if s.kernel is not None:
        facts.append(
            ["Kernel of the same index: ", PageLink(s.kernel.docname, s.kernel.kernel.name)]
        )
    if spec.op:
        facts.append(["Op: ", Code(spec.op)])
    if spec.aten_op:
        facts.append(["ATen op: ", Code(spec.aten_op)])
    if spec.ir_chain:
        chain = joined([[Code(x)] for x in spec.ir_chain[:CELL_ITEMS]], " → ")
        more = len(spec.ir_chain) - CELL_ITEMS
        facts.append(["IR chain: ", *chain, *([f" ... ({more} more)"] if more > 0 else [])])
    if spec.cores is not None:
        facts.append(["Cores used: ", str(spec.cores)])
    if spec.sizes:
        facts.append(["Sizes: ", _pairs(spec.sizes)])
    return Lines(facts)


def _tensors_section(spec: SdscSpec) -> Section | None:
    if not spec.layouts:
        return None
    return Section(
        [_("Tensors")],
        capped_table(
            ["name", "role", "data format", "memories"],
            [
                [[Code(t.name)], [t.role], [t.data_format], [_listed(t.memories)]]
                for t in spec.layouts
            ],
        ),
        anchor="tensors",
    )


def _compute_section(spec: SdscSpec) -> Section | None:
    if not spec.compute:
        return None
    return Section(
        [_("Compute")],
        capped_table(
            ["unit", "function", "inputs", "outputs"],
            [
                [[unit], [Code(func)], [_listed(ins)], [_listed(outs)]]
                for unit, func, ins, outs in spec.compute
            ],
        ),
        anchor="compute",
    )


def _work_section(spec: SdscSpec) -> Section | None:
    """How the work is sliced per dimension, and each core's slices."""
    if not (spec.slices_per_dim or spec.core_slices):
        return None
    work: list[Block] = [
        Paragraph(["Work slices per dimension: ", _pairs(spec.slices_per_dim) or "—"])
    ]
    if spec.core_slices:
        # the columns: the first dimensions only (a file may name a thousand)
        dims = list(spec.slices_per_dim) or sorted(
            {d for v in list(spec.core_slices.values())[:TABLE_ROWS] for d in v}
        )
        cores = list(spec.core_slices.items())[:TABLE_ROWS]
        header = ["core", *dims]
        shown = header[:TABLE_COLUMNS]
        work.extend(
            capped_table(
                header,
                [
                    [[core], *[[str(slices.get(d, ""))] for d in shown[1:]]]
                    for core, slices in cores
                ],
                total_rows=len(spec.core_slices),
            )
        )
    return Section([_("Work division")], work, anchor="work-division")


def _allocations_section(spec: SdscSpec) -> Section | None:
    if not spec.allocations:
        return None
    return Section(
        [_("Allocations")],
        capped_table(
            ["allocation", "memory", "layout"],
            [[[Code(name)], [memory], [_listed(dims)]] for name, memory, dims in spec.allocations],
        ),
        anchor="allocations",
    )


def _listed(values: Sequence[str]) -> str:
    """At most :data:`CELL_ITEMS` values, comma-separated, then how many more."""
    more = len(values) - CELL_ITEMS
    return ", ".join(values[:CELL_ITEMS]) + (f" ... ({more} more)" if more > 0 else "")


def _pairs(values: Mapping[str, object]) -> str:
    """``k=v`` for at most :data:`CELL_ITEMS` keys, then how many more."""
    return _listed([f"{k}={v}" for k, v in values.items()])


def debug_log_page(plan: DebugDirPlan, log: DebugLogPlan) -> Page:
    f = log.file
    blocks: list[Block] = [Lines([["File: ", Code(f.relpath)], ["Run: ", log.run.name]])]
    if f.text is None:
        blocks.append(Paragraph(["This file could not be read as text."]))
    elif not f.text.strip():
        blocks.append(Paragraph(["The log is empty: nothing was logged at this level."]))
    else:
        levels = _levels(f.text)
        if levels:
            blocks.append(
                Paragraph(
                    ["Lines by level: ", ", ".join(f"{n} {lvl}" for lvl, n in levels.items())]
                )
            )
        blocks.append(CodeBlock(f.text[:MAX_SHOWN], "text", linenos=True, searchable=True))
    return Page(log.docname, [plan.label, SEPARATOR, log.title], blocks)


_LEVELS = {"D": "DEBUG", "I": "INFO", "W": "WARNING", "E": "ERROR", "C": "CRITICAL", "V": "VERBOSE"}


def _levels(text: str) -> dict[str, int]:
    """Counts of glog levels (``I1122 ...``) or ``[DEBUG]`` words the lines carry."""
    counts: dict[str, int] = {}
    for line in text.splitlines()[:200_000]:
        level = None
        if len(line) > 5 and line[0] in _LEVELS and line[1:5].isdigit() and line[5] == " ":
            level = _LEVELS[line[0]]
        else:
            for word in ("DEBUG", "INFO", "WARNING", "ERROR"):
                if f"[{word}]" in line[:80]:
                    level = word
                    break
        if level is not None:
            counts[level] = counts.get(level, 0) + 1
    return counts
