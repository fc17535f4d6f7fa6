"""Every option of every directive on every kind of input keeps its promise.

The docs' table of options (``.. torchtrace-options::``) is made from
``options.OPTION_EFFECTS`` and ``DIFF_OPTION_EFFECTS``; here every cell of both is
built in one real Sphinx project (a page per cell) and checked: the option does
what its cell says, or, where the cell says it has no effect, the page gets a
``torchtrace.option`` warning saying so and everything still renders.
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.sphinxext.families.diff import (
    DIFF_FORMATS,
    DIFF_OPTION_EFFECTS,
    DIFF_REFUSED,
)
from sphinx_torchtrace.sphinxext.families.trace_options import (
    DEBUG_FOLDER,
    OPTION_EFFECTS,
    OPTION_FORMATS,
    TEXT_LOG,
    TRACE_FOLDER,
    TRACE_LOG,
)
from sphinx_torchtrace.sphinxext.options import NO_EFFECT

from .conftest import DATA, SIMPLE_LOG, inventory

CAPTURED = DATA / "captured"
WITH_TRACE = CAPTURED / "torch_logs" / "with_trace"
PAIR = CAPTURED / "pairs" / "recompile"
#: A graph comment that quotes the user's line: what ``:no-source:`` must leave out.
CODE_LINE = re.compile(r", code: \S")

# The input each kind is tried on (relative to the page, ``cells/``), and options that
# need particular inputs: a text log of two ranks, a pair of runs of one program.
INPUTS = {
    TRACE_LOG: "../inputs/simple.log",
    TRACE_FOLDER: "../inputs/gloo",
    DEBUG_FOLDER: "../inputs/debug",
    TEXT_LOG: "../inputs/dynamo.log",
}
RANKS_INPUT = {TEXT_LOG: "../inputs/ranks.log"}
WITH = {  # (argument, :with:) of one run
    TRACE_LOG: ("../inputs/wt/trace.log", "../inputs/wt/text.log"),
    TRACE_FOLDER: ("../inputs/wt_folder", "../inputs/wt/text.log"),
    DEBUG_FOLDER: ("../inputs/debug", "../inputs/simple.log"),
    TEXT_LOG: ("../inputs/wt/text.log", "../inputs/wt/trace.log"),
}
OPTION_VALUE = {"ranks": "1", "sections": "header", "name": None, "with": None, "format": None}
FORMAT = {
    TRACE_LOG: "trace",
    TRACE_FOLDER: "trace",
    DEBUG_FOLDER: "debug-dir",
    TEXT_LOG: "torch-logs",
}
DIFF_SIDES = {
    TRACE_LOG: ("../inputs/pair/baseline/run.log", "../inputs/pair/new/run.log"),
    TRACE_FOLDER: ("../inputs/pair/baseline", "../inputs/pair/new"),
}


def _slug(*parts: str) -> str:
    return "-".join(re.sub(r"[^a-z0-9]+", "-", p.lower()).strip("-") for p in parts)


def _cells() -> dict[str, str]:
    """Page name -> its directive (one per cell), plus the controls the checks compare with."""
    pages: dict[str, str] = {}
    for option, by_kind in OPTION_EFFECTS.items():
        for kind in by_kind:
            name = _slug("t", option, kind)
            argument = RANKS_INPUT.get(kind, INPUTS[kind]) if option == "ranks" else INPUTS[kind]
            lines = [f".. torchtrace:: {argument}", f"   :name: {name}"]
            if option == "with" or (option == "no-source" and kind == DEBUG_FOLDER):
                argument, other = WITH[kind]
                lines = [f".. torchtrace:: {argument}", f"   :name: {name}", f"   :with: {other}"]
            if option == "format":
                lines.append(f"   :format: {FORMAT[kind]}")
            elif option not in ("name", "with"):
                value = OPTION_VALUE.get(option)
                lines.append(f"   :{option}:" + (f" {value}" if value else ""))
            pages[name] = "\n".join(lines)
    # controls: the debug folder with the same :with: as its no-source cell, no option
    argument, other = WITH[DEBUG_FOLDER]
    pages["control-debug"] = (
        f".. torchtrace:: {argument}\n   :name: control-debug\n   :with: {other}"
    )
    for option in DIFF_OPTION_EFFECTS:
        for kind in DIFF_FORMATS:
            name = _slug("d", option, kind)
            base, new = DIFF_SIDES[kind]
            lines = [f".. torchtrace-diff:: {base} {new}"]
            lines.append(f"   :name: {name}" if option != "name" else f"   :name: {name}")
            if option in ("baseline-label", "new-label"):
                lines.append(f"   :{option}: Side{option[:3].title()}")
            elif option in ("no-regressions", "no-source"):
                lines.append(f"   :{option}:")
            pages[name] = "\n".join(lines)
    for kind in DIFF_REFUSED:
        name = _slug("d", "refused", kind)
        pages[name] = f".. torchtrace-diff:: {INPUTS[kind]} {INPUTS[kind]}\n   :name: {name}"
    # inherited: the baseline shown with :no-source:, the comparison without the option
    pages["inherit"] = (
        ".. torchtrace:: ../inputs/pair2/baseline\n   :name: inherit-base\n   :no-source:\n\n"
        ".. torchtrace-diff:: ../inputs/pair2/baseline ../inputs/pair2/new\n"
        "   :name: d-inherit"
    )
    return pages


def _project(root: Path) -> Path:
    src = root / "src"
    inputs = src / "inputs"
    inputs.mkdir(parents=True)
    shutil.copy(SIMPLE_LOG, inputs / "simple.log")
    shutil.copytree(CAPTURED / "multi_rank_gloo", inputs / "gloo")
    shutil.copytree(CAPTURED / "debug_dir" / "inference" / "torch_compile_debug", inputs / "debug")
    shutil.copy(CAPTURED / "torch_logs" / "plus_dynamo.log", inputs / "dynamo.log")
    shutil.copy(CAPTURED / "torch_logs" / "ranks.log", inputs / "ranks.log")
    (inputs / "wt").mkdir()
    trace = next(WITH_TRACE.glob("dedicated_log_*.log"))
    shutil.copy(trace, inputs / "wt" / "trace.log")
    shutil.copy(WITH_TRACE / "torch_logs.log", inputs / "wt" / "text.log")
    (inputs / "wt_folder").mkdir()
    shutil.copy(trace, inputs / "wt_folder" / "trace.log")
    for pair in ("pair", "pair2"):  # pair2: a side shown with :no-source: (inherited)
        for side in ("baseline", "new"):
            (inputs / pair / side).mkdir(parents=True)
            shutil.copy(next((PAIR / side).glob("*.log")), inputs / pair / side / "run.log")
    (src / "conf.py").write_text(
        'extensions = ["sphinx_torchtrace"]\n'
        "torchtrace_max_frames = 16\n"  # every cell's first frames: enough for every check
        'suppress_warnings = ["torchtrace.regression_recompile", "torchtrace.unmatched", '
        '"torchtrace.limit"]\n',
        encoding="utf-8",
    )
    (src / "cells").mkdir()
    pages = _cells()
    for name, body in pages.items():
        (src / "cells" / f"{name}.rst").write_text(f"{name}\n{'=' * len(name)}\n\n{body}\n")
    (src / "index.rst").write_text(
        "Cells\n=====\n\n.. toctree::\n   :glob:\n\n   cells/*\n", encoding="utf-8"
    )
    return src


class Site:
    def __init__(self, app: SphinxTestApp) -> None:
        self.app = app
        self.out = Path(app.outdir)
        self.warnings = app.warning.getvalue()
        self.objects = inventory(app)

    def warnings_of(self, page: str) -> str:
        return "\n".join(w for w in self.warnings.splitlines() if f"cells/{page}.rst" in w)

    def html_of(self, label: str, folder_name: str = "") -> str:
        folder = self.out / "torchtrace" / (folder_name or label)
        assert folder.is_dir(), f"no pages for {label}"
        return "\n".join(_text(p) for p in folder.rglob("*.html"))

    def frames_of(self, label: str) -> list[str]:
        return [n for n in self.objects.get("frame", {}) if n.startswith(label + "/")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    src = _project(tmp_path_factory.mktemp("cells"))
    app = SphinxTestApp(
        "html",
        srcdir=src,
        freshenv=True,
        confoverrides={"show_warning_types": True},
        status=StringIO(),
        warning=StringIO(),
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return Site(app)


def _text(path: Path) -> str:
    """A page's text as a reader sees it: highlighting spans split ``, code:`` otherwise."""
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def _no_effect(site: Site, option: str, kind: str, name: str) -> None:
    said = site.warnings_of(name)
    assert f":{option}: has no effect on {kind}" in said, said
    assert "torchtrace.option" in said
    assert (site.out / "torchtrace" / name / "index.html").exists()


def _check_name(site: Site, kind: str, name: str) -> None:
    assert (site.out / "torchtrace" / name / "index.html").exists()
    if kind == DEBUG_FOLDER:  # the run's trace in the folder gets <name>-trace
        assert (site.out / "torchtrace" / f"{name}-trace" / "index.html").exists()
    else:
        assert site.frames_of(name)


def _check_latest(site: Site, kind: str, name: str) -> None:
    frames = site.frames_of(name)
    assert frames and not any("/rank" in f for f in frames), frames  # one log: no ranks


def _check_ranks(site: Site, kind: str, name: str) -> None:
    frames = site.frames_of(name)
    assert frames and not any("/rank" in f for f in frames), frames  # one rank left
    if kind == TRACE_FOLDER:  # its log is rank 1's
        overview = (site.out / "torchtrace" / name / "index.html").read_text(encoding="utf-8")
        assert "rank_1_" in overview and "rank_0_" not in overview
    else:  # rank 1 alone recompiled (the capture's README)
        assert f"{name}/[0/1]" in frames
    assert "torchtrace.option" not in site.warnings_of(name)


def _check_sections(site: Site, kind: str, name: str) -> None:
    overview = (site.out / "torchtrace" / name / "index.html").read_text(encoding="utf-8")
    left_out = ('id="where-compilations-start"', 'id="status-legend"')
    assert not any(s in overview for s in left_out)
    full = (site.out / "torchtrace" / _slug("t", "name", kind) / "index.html").read_text(
        encoding="utf-8"
    )
    assert all(s in full for s in left_out)  # the control shows what :sections: left out


def _check_no_source(site: Site, kind: str, name: str) -> None:
    labels = [name, f"{name}-with-1"] if kind == DEBUG_FOLDER else [name]
    controls = ["control-debug-with-1"] if kind == DEBUG_FOLDER else [_slug("t", "name", kind)]
    for control in controls:
        assert CODE_LINE.search(site.html_of(control)), f"{control} quotes no source"
    for label in labels:
        assert not CODE_LINE.search(site.html_of(label)), label


def _check_format(site: Site, kind: str, name: str) -> None:
    assert not site.warnings_of(name), site.warnings_of(name)
    control = site.out / "torchtrace" / _slug("t", "name", kind)
    mine = site.out / "torchtrace" / name
    assert len(list(mine.rglob("*.html"))) == len(list(control.rglob("*.html")))


def _check_with(site: Site, kind: str, name: str) -> None:
    if kind == DEBUG_FOLDER:
        assert (site.out / "torchtrace" / f"{name}-with-1" / "index.html").exists()
        return
    # the text log's lines on the compile pages of the trace (the base, either way round)
    text = site.html_of(name)
    assert "Recompiling function" in text or "[__recompiles]" in text or "Graph break" in text
    assert any(
        "aot_forward_graph" in o or "inductor_post_grad_graph" in o
        for o in site.objects.get("graph", {})
        if o.startswith(name + "/")
    )


CHECKS: dict[str, Callable[[Site, str, str], None]] = {
    "name": _check_name,
    "latest": _check_latest,
    "ranks": _check_ranks,
    "sections": _check_sections,
    "no-source": _check_no_source,
    "format": _check_format,
    "with": _check_with,
}


@pytest.mark.parametrize(
    ("option", "kind"),
    [(o, k) for o, by_kind in OPTION_EFFECTS.items() for k in by_kind],
)
def test_torchtrace_option_on_kind(site: Site, option: str, kind: str) -> None:
    assert set(OPTION_EFFECTS[option]) == set(OPTION_FORMATS)
    name = _slug("t", option, kind)
    if OPTION_EFFECTS[option][kind] == NO_EFFECT:
        _no_effect(site, option, kind, name)
    else:
        CHECKS[option](site, kind, name)
        assert "has no effect" not in site.warnings_of(name)


@pytest.mark.parametrize(
    ("option", "kind"), [(o, k) for o in DIFF_OPTION_EFFECTS for k in DIFF_FORMATS]
)
def test_diff_option_on_kind(site: Site, option: str, kind: str) -> None:
    name = _slug("d", option, kind)
    html = site.html_of(name, f"diff-{name}")  # its frame pages, in the comparison's folder
    page = _text(site.out / "cells" / f"{name}.html")
    said = site.warnings_of(name)
    if option == "name":
        assert "recompile" in page.lower()
    elif option in ("baseline-label", "new-label"):
        assert f"Side{option[:3].title()}" in page
    elif option == "no-regressions":
        assert "torchtrace.regression" not in said
        assert "recompile" in page.lower()  # the page still lists them
    elif option == "no-source":
        control_name = _slug("d", "name", kind)
        control = site.html_of(control_name, f"diff-{control_name}")
        assert CODE_LINE.search(control + _text(site.out / "cells" / f"{control_name}.html"))
        assert not CODE_LINE.search(html + page)
    assert "WARNING" not in said or "regression" in said, said


@pytest.mark.parametrize("kind", list(DIFF_REFUSED))
def test_diff_refuses_kind_with_a_warning(site: Site, kind: str) -> None:
    said = site.warnings_of(_slug("d", "refused", kind))
    assert "torchtrace.read" in said and "instead" in said, said


def test_diff_inherits_no_source(site: Site) -> None:
    page = _text(site.out / "cells" / "inherit.html")
    assert not CODE_LINE.search(site.html_of("d-inherit", "diff-d-inherit") + page)
    control_name = _slug("d", "name", TRACE_FOLDER)
    control = site.html_of(control_name, f"diff-{control_name}")
    assert CODE_LINE.search(control)
