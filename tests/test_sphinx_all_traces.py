"""Every bundled trace through a real build: a warning here is a bug a user would hit with -W.

The only warnings allowed are the trace model's own diagnostics of defects in
the inputs themselves (tlparse's test inputs carry payloads whose md5 does not
match, which tlparse counts as ``fail_payload_md5`` too, and one truncated
log): the build must report exactly those, nothing else.  The ``text``
builder keeps the sweep cheap; the HTML writers run on the other test files.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx_torchtrace.trace import load_trace

from .conftest import DATA, SHARED, SiteMaker, generated_pages
from .tools.model_summary import OTHER_INPUTS

#: Folders that are one multi-rank (or paired) trace, documented as a directory.
TRACE_DIRS = {
    "shared/tlparse-inputs/graph_exec_order_tests",
    "shared/tlparse-inputs/inputs/collectives_parity",
    "shared/tlparse-inputs/inputs/multi_rank_logs",
    "shared/tlparse-inputs/inputs/multi_rank_messy_input",
    "shared/tlparse-inputs/inputs/multi_rank_runtime",
    "shared/tlparse-inputs/inputs/multi_rank_schedule",
    "captured/draft_export",
    "captured/multi_rank_gloo",
    "captured/ddp_graph_break",
}
#: Not a good trace: its JSON is damaged on purpose (covered in test_sphinx_incremental).
DAMAGED = {"shared/tlparse-inputs/inputs/simple_corrupted_json.log"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
WARNING = re.compile(r"^(?P<where>.+?): WARNING: .* \[torchtrace\.(?P<kind>[\w-]+)\]$")


def good_traces() -> list[str]:
    """Every log or trace folder under tests/data/shared (and captured), relative to tests/data."""
    found: list[str] = []
    for base in (DATA / "shared", DATA / "captured"):
        for path in sorted(base.rglob("*")):
            rel = path.relative_to(DATA).as_posix()
            if rel in TRACE_DIRS:
                found.append(rel)
            elif (
                path.is_file()
                and path.suffix in (".log", ".txt")
                and path.stat().st_size > 0
                and rel not in DAMAGED
                and not any(rel.startswith(d + "/") for d in TRACE_DIRS)
                and (
                    OTHER_INPUTS.isdisjoint(path.relative_to(DATA).parts)
                    or path.name.startswith("dedicated_log_torch_trace")
                )
            ):
                found.append(rel)
    return found


def test_the_sweep_covers_the_bundled_traces() -> None:
    traces = good_traces()
    assert "shared/simple/dedicated_log_torch_trace_5aek85xk.log" in traces
    assert "shared/tlparse-inputs/inputs/multi_rank_logs" in traces
    assert len(traces) >= 30
    assert all((DATA / t).exists() for t in traces)
    assert (SHARED / "README.md").is_file()  # data folder layout as the sweep expects


def test_every_good_trace_builds_without_a_warning(make_site: SiteMaker) -> None:
    traces = good_traces()
    pages = {"index.rst": "All traces\n==========\n\n.. toctree::\n\n"}
    expected: dict[str, set[str]] = {}  # "file:line" -> kinds, from the model
    for i, rel in enumerate(traces):
        name = f"t{i:02d}"
        pages["index.rst"] += f"   {name}\n"
        # a name of its own: logs of one name in two folders (cold.log) would share a label
        pages[f"{name}.rst"] = (
            f"{name}\n{'=' * len(name)}\n\n.. torchtrace:: @DATA@/{rel}\n   :name: {name}\n"
        )
        trace = load_trace(DATA / rel)
        for d in trace.diagnostics:
            where = f"{Path(d.path).name}:{d.line}" if d.line else Path(d.path).name
            expected.setdefault(where, set()).add(d.subtype)
        found = [(r.path, s.line) for r in trace.ranks for s in r.secrets.found]
        if found:  # captured/env_secrets: one warning per trace, at the first (test_secrets)
            expected.setdefault(f"{Path(found[0][0]).name}:{found[0][1]}", set()).add("secret")
    app = make_site("simple", "text", pages=pages)

    unexpected = []
    reported: dict[str, set[str]] = {}
    for line in ANSI.sub("", app.warning.getvalue()).splitlines():
        match = WARNING.match(line)
        # "log:12" for a line, "log:" for a whole file (Sphinx then writes "log:: WARNING")
        where = Path(match.group("where").removesuffix(":")).name if match else ""
        if match is None or match.group("kind") not in expected.get(where, set()):
            unexpected.append(line)
        else:
            reported.setdefault(where, set()).add(match.group("kind"))
    assert unexpected == []
    assert reported == expected
    # and every trace got its pages
    roots = {p.split("/")[1] for p in generated_pages(app)}
    assert len(roots) == len(traces)
    for i in range(len(traces)):
        assert (Path(app.outdir) / f"t{i:02d}.txt").is_file()
