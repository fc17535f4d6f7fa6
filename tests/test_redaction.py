"""Redaction one can rely on: ``:no-source:`` leaves out the user's code, rewrites hide paths.

Built from the real captured logs and the scripts that made them (tests/capture):
with ``:no-source:``, no line of a script appears in any page or download.  The
default path rewrites cover inductor's per-user cache folder, Python's own prefix
and a checkout outside home directories; what still survives in the published
files is named by one ``torchtrace.path`` warning.
"""

from __future__ import annotations

import html
import importlib.util
import json
import pprint
import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.render.paths import (
    DEFAULT_PATH_REWRITES,
    PathRewriter,
    project_roots,
    trace_rules,
)
from sphinx_torchtrace.site.naming import label_segment
from sphinx_torchtrace.site.source import strip_source
from sphinx_torchtrace.sphinxext.publish_check import SCAN_PIECE, scan_file, surviving_paths
from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.inputs.loader import TRACE_LOG

from .conftest import DATA, SHARED, SIMPLE_LOG, SiteMaker, warnings_of
from .test_hostile_values import ADVERSARIAL, LINEAR_BOUND_S

CAPTURE = Path(__file__).parent / "capture"

#: Each real trace (a log or a trace directory) and the script that wrote it.
TRACES = {
    "simple": (SHARED / "simple", "simple.py"),
    "graph_breaks": (SHARED / "graph_breaks", "graph_breaks.py"),
    "recompiles": (SHARED / "recompiles", "recompiles.py"),
    "training": (SHARED / "training", "training.py"),
    "compile_error": (SHARED / "compile_error", "compile_error.py"),
    "provenance": (SHARED / "provenance", "provenance.py"),
    "cache_cold": (SHARED / "cache" / "run1", "cache.py"),
    "cache_warm": (SHARED / "cache" / "run2", "cache.py"),
    "aoti": (DATA / "captured" / "aoti", "aoti.py"),
    "compiled_autograd": (DATA / "captured" / "compiled_autograd", "compiled_autograd.py"),
    "draft_export": (DATA / "captured" / "draft_export", "draft_export.py"),
    "multi_rank_gloo": (DATA / "captured" / "multi_rank_gloo", "multi_rank_gloo.py"),
    "single_op": (DATA / "captured" / "single_op_provenance", "single_op_provenance.py"),
    "ddp_graph_break": (DATA / "captured" / "ddp_graph_break", "ddp_graph_break.py"),
    "optimizer_break": (DATA / "captured" / "optimizer_graph_break", "optimizer_graph_break.py"),
    "with_text_log": (DATA / "captured" / "torch_logs" / "with_trace", "torch_logs.py"),
    **{
        f"{pair}_{side}": (DATA / "captured" / "pairs" / pair / side, f"pairs/{pair}/{side}.py")
        for pair in ("graph_break_fixed", "compile_error", "recompile", "cache_warm")
        for side in ("baseline", "new")
    },
}

#: Shorter lines of code are too common to mean a leak ("return x").
MIN_LINE = 12

#: Lines torch writes itself into the code it generates (``fx_graph_runnable``, output code),
#: whoever the user is: imports, module boilerplate, the non-default settings a runnable
#: repro records (``torch._dynamo.config.recompile_limit = 3``: a setting, not source), and
#: bare calls of torch's API that its messages and ours name (``torch._dynamo.graph_break()``).
_TORCH_WRITES = re.compile(
    r"(?:import \S+|from \S+ import .+|super\(\).__init__\(\)|with torch.no_grad\(\):"
    r"|if __name__ == \"__main__\":|torch\.[\w.]*config\.\w+ = .+|torch\._dynamo\.\w+\(\))"
)


def script_lines(script: str) -> set[str]:
    """The lines of a capture script that show its code if published (not comments)."""
    lines = set()
    for line in (CAPTURE / script).read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if len(text) >= MIN_LINE and not text.startswith("#") and not _TORCH_WRITES.fullmatch(text):
            lines.add(text)
    return lines


def _directives(name: str, folder: Path) -> list[tuple[str, str]]:
    """(label, argument) of a trace folder: itself when it holds ranks, else each log."""
    logs = sorted(p.name for p in folder.iterdir() if TRACE_LOG.match(p.name))
    if any("_rank_" in log for log in logs) or len(logs) == 1:
        return [(name, f"logs/{name}")]
    return [(f"{name}-{i}", f"logs/{name}/{log}") for i, log in enumerate(logs, 1)]


def _site(srcdir: Path, names: list[str]) -> dict[str, str]:
    """A site showing each trace with ``:no-source:``; the label of each shown log, by name."""
    srcdir.mkdir(parents=True)
    (srcdir / "conf.py").write_text(
        'project = "redaction"\nextensions = ["sphinx_torchtrace"]\n', encoding="utf-8"
    )
    toc = "\n".join(f"   {n}" for n in names)
    (srcdir / "index.rst").write_text(f"Traces\n======\n\n.. toctree::\n\n{toc}\n", "utf-8")
    labels = {}
    for name in names:
        copied = srcdir / "logs" / name
        shutil.copytree(TRACES[name][0], copied)
        text = f"{name}\n{'=' * len(name)}\n"
        for label, argument in _directives(name, copied):
            text += f"\n.. torchtrace:: {argument}\n   :name: {label}\n   :no-source:\n"
            labels[label] = name
        (srcdir / f"{name}.rst").write_text(text, encoding="utf-8")
    return labels


_TAG = re.compile(r"<[^<>]*>")


def _published(outdir: Path, srcdir: Path, label: str) -> dict[Path, str]:
    """Every output file of one trace: its pages' HTML (as the text shown) and downloads."""
    files = {}
    folder = label_segment(label)
    for root in (outdir / "torchtrace" / folder, srcdir / "torchtrace" / folder):
        for path in root.rglob("*"):
            if path.is_file() and path.suffix not in (".rst", ".md"):
                text = path.read_text(encoding="utf-8", errors="replace")
                if path.suffix == ".html":
                    text = html.unescape(_TAG.sub("", text))
                files[path] = text
    return files


def _leaks(outdir: Path, srcdir: Path, scripts: dict[str, str]) -> dict[str, list[str]]:
    """The lines of each label's capture script found in what its site publishes."""
    leaks: dict[str, list[str]] = {}
    for label, script in scripts.items():
        lines = script_lines(script)
        files = _published(outdir, srcdir, label)
        assert len(files) >= 2, label  # the overview and a frame page at least
        for path, text in files.items():
            found = [line for line in sorted(lines) if line in text]
            if found:
                leaks[f"{label}: {path.name}"] = found
    return leaks


@pytest.mark.parametrize(
    "group",
    [
        ["simple", "graph_breaks", "recompiles", "training", "compile_error"],
        ["provenance", "cache_cold", "cache_warm", "aoti"],
        ["compiled_autograd", "draft_export", "multi_rank_gloo", "single_op"],
        [
            "ddp_graph_break",
            "optimizer_break",
            "with_text_log",
            "graph_break_fixed_baseline",
            "graph_break_fixed_new",
            "compile_error_baseline",
            "compile_error_new",
            "recompile_baseline",
            "recompile_new",
            "cache_warm_baseline",
            "cache_warm_new",
        ],
    ],
)
def test_no_source_publishes_no_line_of_the_capture_script(
    make_app: Callable[..., SphinxTestApp], tmp_path: Path, group: list[str]
) -> None:
    srcdir = tmp_path / "site"
    labels = _site(srcdir, group)
    app = make_app("html", srcdir=srcdir, freshenv=True)
    app.build()
    scripts = {label: TRACES[name][1] for label, name in labels.items()}
    assert not _leaks(Path(app.outdir), srcdir, scripts)


TRACEBACK = (
    'File "a.py", line 3, in f\n    y = g("x", 1)\n  File "b.py", line 4, in g\n    return h(x)'
)


@pytest.mark.parametrize("shape", ["lines", "json", "json-in-json", "repr"])
def test_no_source_strips_tracebacks_in_every_shape(shape: str) -> None:
    """Source lines go; file names, line numbers, functions and the JSON around them stay."""
    if shape == "lines":
        text = TRACEBACK
    elif shape == "json":
        text = json.dumps({"stack_trace": TRACEBACK, "after": 1})
    elif shape == "json-in-json":
        inner = json.dumps({"k:1": [TRACEBACK], "k:2": [TRACEBACK]})
        text = json.dumps({"inductor_provenance": [inner]}, indent=1)
    else:
        text = pprint.pformat({"traces": [TRACEBACK + "\n"]}, width=30)
    stripped = strip_source(text)
    assert 'g("x", 1)' not in stripped and "return h(x)" not in stripped
    assert 'g(\\"x\\", 1)' not in stripped and 'g(\\\\\\"x' not in stripped
    assert "line 3, in f" in stripped and "line 4, in g" in stripped
    if shape == "json":
        assert json.loads(stripped)["after"] == 1
    if shape == "json-in-json":
        inner_kept = json.loads(json.loads(stripped)["inductor_provenance"][0])
        assert sorted(inner_kept) == ["k:1", "k:2"]
        assert "return" not in inner_kept["k:2"][0]


# -- default path rewrites ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "logged,published",
    [
        ("/tmp/torchinductor_alice/ab/cabc.py", "/tmp/torchinductor_user/ab/cabc.py"),
        ("cache_dir=/tmp/torchinductor_alice", "cache_dir=/tmp/torchinductor_user"),
        ("/var/folders/fd/kcv8m1kn0lqgx/T/torchinductor_bob/x.py", "<tmp>/torchinductor_user/x.py"),
        (
            'File "/usr/lib/python3.11/contextlib.py", line 81',
            'File "<python>/contextlib.py", line 81',
        ),
        ("/opt/conda/lib/python3.12/runpy.py:88", "<python>/runpy.py:88"),
        ("/home/alice/.pyenv/versions/3.11.9/lib/python3.11/os.py", "<python>/os.py"),
        ("/opt/conda/lib/python3.12/site-packages/torch/nn.py", "<site-packages>/torch/nn.py"),
        ("/home/alice/project/model.py", "~/project/model.py"),
    ],
)
def test_default_rewrites(logged: str, published: str) -> None:
    assert PathRewriter()(logged) == published


def test_rewriting_only_the_words_that_hold_a_path_rewrites_as_every_line_would() -> None:
    """A rule with a literal every match holds is applied to the words holding it only (a
    line of JSON can be tens of kilobytes long): the text is what the rules, applied to
    every line in order, give, among spaces of every kind, quotes and brackets, on texts
    made of paths' pieces and on every line of a real log."""
    rewriter = PathRewriter(secrets=lambda text: text)
    rules = [(re.compile(p), r) for p, r in DEFAULT_PATH_REWRITES.items()]

    def line_by_line(text: str) -> str:
        for pattern, replacement in rules:
            text = "\n".join(pattern.sub(replacement, line) for line in text.split("\n"))
        return text

    pieces = [
        *("/home/alice/", "/usr/lib/python3.11/", "/opt/v/lib/python3.12/site-packages/t/"),
        *("dist-packages/a/site-packages/", "-packages/", "/python", "/torchinductor_bob/x"),
        *("/torchinductor_user", "/var/folders/ab/cd/T/x", "/tmp/ipykernel_12/4.py", "a", "/"),
        *(" ", "\n", "\t", "'", '"', "<", ">", "\xa0", "\u2003", "\u2028", "\x1c"),
    ]
    rng = random.Random(40)
    texts = ["".join(rng.choices(pieces, k=rng.randint(1, 16))) for _ in range(5000)]
    texts += SIMPLE_LOG.read_text(encoding="utf-8").splitlines()
    assert [rewriter(t) for t in texts] == [line_by_line(t) for t in texts]
    assert sum(rewriter(t) != t for t in texts) > 2000  # it rewrote


def _relocated(tmp_path: Path, project: str) -> Path:
    """The simple log as if its script had run in ``project`` (payload md5s recomputed)."""
    spec = importlib.util.spec_from_file_location("sanitize", CAPTURE / "sanitize.py")
    assert spec is not None and spec.loader is not None
    sanitize = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sanitize)
    folder = tmp_path / "relocated"
    folder.mkdir()
    log = folder / SIMPLE_LOG.name
    rules = [(re.compile(re.escape("/home/user/project")), project)]
    sanitize.sanitize(str(SIMPLE_LOG), str(log), rules)
    return log


def test_a_checkout_outside_home_becomes_project(make_site: SiteMaker, tmp_path: Path) -> None:
    log = _relocated(tmp_path, "/srv/ci/checkout/proj")
    trace = load_trace(log)
    assert project_roots(trace) == ["/srv/ci/checkout/proj"]
    rewrite = PathRewriter(trace_rules(trace, {}))
    assert rewrite("/srv/ci/checkout/proj/simple.py:12") == "<project>/simple.py:12"
    assert rewrite("/home/user/.venv/lib/python3.11/site-packages/torch/x.py") == (
        "<site-packages>/torch/x.py"
    )
    assert project_roots(load_trace(SIMPLE_LOG)) == []  # under /home: "~/" already hides it
    page = f":orphan:\n\nCI\n==\n\n.. torchtrace:: ../relocated/{log.name}\n   :name: ci\n"
    app = make_site("simple", pages={"ci.rst": page})
    assert "torchtrace.path" not in warnings_of(app), warnings_of(app)
    pages = (Path(app.outdir) / "torchtrace" / "ci").rglob("*.html")
    html_text = "".join(p.read_text(encoding="utf-8") for p in pages)
    assert "/srv/ci" not in html_text
    assert "&lt;project&gt;/simple.py" in html_text


# -- the publish check -------------------------------------------------------------------------


def test_paths_that_survive_are_named_once_with_the_setting(make_site: SiteMaker) -> None:
    app = make_site("simple", confoverrides={"torchtrace_default_path_rewrites": False})
    warnings = warnings_of(app)
    assert warnings.count("[torchtrace.path]") == 1, warnings
    (line,) = [w for w in warnings.splitlines() if "[torchtrace.path]" in w]
    assert "/home/user/" in line and "torchtrace_path_rewrites" in line
    assert line.count(", '") <= 2
    app = make_site("simple")
    assert "torchtrace.path" not in warnings_of(app)


def test_pages_written_in_parallel_are_checked_too(make_site: SiteMaker) -> None:
    """With ``-j``, pages are written by other processes; their files are read instead."""
    app = make_site("simple", parallel=2, confoverrides={"torchtrace_default_path_rewrites": False})
    warnings = warnings_of(app)
    assert warnings.count("[torchtrace.path]") == 1, warnings
    assert "/home/user/" in warnings


def test_surviving_paths() -> None:
    text = (
        '<span>/scratch/alice/run/x.py</span> "/tmp/torchinductor_user/ab/c.py" '
        "C:\\Users\\alice\\proj\\m.py ~/project/x.py <site-packages>/torch/a.py /tmp/x "
        "https://example.com/home/a/b /home/a /tmp/tmpk2j4_x9a/a/b.py "
        "/tmp/torchelastic_krot7efo/none/error.json /tmp/torchinductor_alice/x/y.py"
    )
    assert surviving_paths(text) == [
        "/scratch/alice/run/x.py",
        "C:\\Users\\alice\\proj\\m.py",
        "/home/a",  # a bare home folder: its last part is a user's name
        "/tmp/torchinductor_alice/x/y.py",
    ]


def test_a_big_download_is_scanned_piece_by_piece_and_nothing_is_missed(tmp_path: Path) -> None:
    """A path across the edge of a piece, one in a line longer than a piece, one in the last
    line without a newline: each found once, in order."""
    log = tmp_path / "events.json"
    filler = b'{"name": "x", "ts": 1}\n'
    head = filler * (SCAN_PIECE // len(filler))  # the first path straddles the piece's end
    long_line = b'"' + b"a" * (SCAN_PIECE + 10) + b' /gpfs/alice/run/x.py"\n'
    log.write_bytes(
        head + b'"/scratch/bob/a/b.py"\n' + long_line + filler * 3 + b'"/home/carol/c/d.py"'
    )
    assert scan_file(log, {})[0] == [
        "/scratch/bob/a/b.py",
        "/gpfs/alice/run/x.py",
        "/home/carol/c/d.py",
    ]
    assert scan_file(tmp_path / "missing.json", {})[0] == []
    (tmp_path / "empty.json").write_bytes(b"")
    assert scan_file(tmp_path / "empty.json", {})[0] == []


#: Machine paths the publish check must find: folder names with a space, an apostrophe or
#: non-ASCII letters, and the roots of cluster and shared storage.
MACHINE_PATHS = [
    "/srv/o'neil/proj/data.csv",
    "/scratch/a b/c/d.py",
    "/home/jürgen/proj/x.py",
    "/home2/alice/x.py",
    "/gpfs/alice/run/x.py",
    "/lustre/u/a/b.py",
    "/nfs/team/x/y.py",
    "/workspace/alice/x.py",
    "/shared/u/proj/x.py",
    "/data1/bob/model/ckpt.pt",
    "/projects/vision/alice/train.py",
]


@pytest.mark.parametrize("path", MACHINE_PATHS)
def test_the_publish_check_finds_machine_paths(path: str) -> None:
    for text in (path, f'File "{path}", line 3', f"<td><p>{path}</p></td>", f"at {path}: ok"):
        assert surviving_paths(text) == [path], text


def test_the_publish_check_leaves_prose_and_library_paths() -> None:
    text = (
        "/usr/lib/python3.11/json/x.py, /opt (a folder), /data alone, /home alone, "
        "'quoted /srv/a/b.py'"
    )
    assert surviving_paths(text) == ["/srv/a/b.py"]


@pytest.mark.parametrize(
    "text,path",
    [
        ("cwd /home/alice, then", "/home/alice"),
        ('"cwd": "/Users/alice"', "/Users/alice"),
        ("in /private/home/alice/proj/m.py", "/private/home/alice/proj/m.py"),
        ("on /media/alice/disk/m.py", "/media/alice/disk/m.py"),
        ("at /export/home/alice", "/export/home/alice"),
        ("C:\\Users\\alice", "C:\\Users\\alice"),
    ],
)
def test_every_home_root_is_a_machine_path(text: str, path: str) -> None:
    """A home folder names its user, alone (a working directory) or under any root of
    Linux, macOS and Windows clusters: found by the one path finder of check, redact and
    the publish check."""
    assert surviving_paths(text) == [path]


# -- linear time -------------------------------------------------------------------------------

#: Texts aimed at this module's patterns, besides the shared adversarial ones.
ADVERSARIAL_HERE = [
    *ADVERSARIAL,
    '"/lib/python3.1" * (MB // 14)',
    '"/a/lib/python3." * (MB // 15)',
    '"x/" * (MB // 2)',
    '"/torchinductor_" * (MB // 15)',
    '"/tmp/torchinductor_" + "a" * MB',
    '"/scratch/a" * (MB // 10)',
    '"/scratch/" + "a" * MB',
    '"C:\\\\a" * (MB // 3)',
    '"<" * MB',
    '"File , in \\\\n    " * (MB // 16)',
    '"File , in " + "\\\\" * MB + "\\"" * MB',
    "\"line 1, in f\\\\n'\\n'    x\\n\" * (MB // 20)",
    '"# File \\\\\\"a, code: b" * (MB // 20)',
    '"# File " + "\\\\" * MB',
    '"# File \\\\\\", code: " + "\\\\" * MB + "\\\\n"',
    '"  # File " * (MB // 9)',
    '"\\\\" * MB + "\\\\n"',
    '"\\" # File \\", code: x\\\\n" * (MB // 24)',
]


@pytest.mark.parametrize(
    "setup,call",
    [
        ("from sphinx_torchtrace.render.paths import PathRewriter; f = PathRewriter()", "f(text)"),
        ("from sphinx_torchtrace.site.source import strip_source as f", "f(text)"),
        ("from sphinx_torchtrace.sphinxext.publish_check import surviving_paths as f", "f(text)"),
        (
            "from sphinx_torchtrace.trace.inputs.loader import _earliest_time as f",
            "f(text.encode()); f(('\"ts\": ' + text).encode())",
        ),
    ],
    ids=["rewrites", "no-source", "publish-check", "recorded-time"],
)
def test_patterns_are_linear(setup: str, call: str) -> None:
    texts = ", ".join(ADVERSARIAL_HERE)
    code = f"MB = 1 << 20\n{setup}\nfor text in [{texts}]:\n    {call}\n"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=LINEAR_BOUND_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"over {LINEAR_BOUND_S} s on 1 MB texts: super-linear ({call})")
    assert done.returncode == 0, done.stderr[-3000:]


#: The other inputs (issue 11): text logs, a trace with its text log, debug folders; each
#: as (argument below tests/data/captured, extra options, capture script).
OTHER_INPUTS = {
    "text-options": ("torch_logs/options.log", "", "torch_logs.py"),
    "text-dynamo": ("torch_logs/plus_dynamo.log", "", "torch_logs.py"),
    "text-inductor": ("torch_logs/plus_inductor.log", "", "torch_logs.py"),
    "text-ranks": ("torch_logs/ranks.log", "", "torch_logs_ranks.py"),
    "text-with": ("torch_logs/with_trace/torch_logs.log", "torch_logs/with_trace", "torch_logs.py"),
    "debug-training": ("debug_dir/training/torch_compile_debug", "", "debug_dir_training.py"),
    "debug-inference": ("debug_dir/inference/torch_compile_debug", "", "debug_dir_inference.py"),
}


def test_no_source_holds_for_text_logs_and_debug_folders(make_site: SiteMaker) -> None:
    """``:no-source:`` on TORCH_LOGS text logs (tracebacks and ``+dynamo``'s traced source
    lines, every line behind a log prefix) and on debug folders."""
    text = "Other inputs\n============\n"
    for label, (argument, with_, _) in OTHER_INPUTS.items():
        text += f"\n.. torchtrace:: @DATA@/captured/{argument}\n   :name: {label}\n   :no-source:\n"
        if with_:
            text += f"   :with: @DATA@/captured/{with_}\n"
    app = make_site(
        "simple",
        pages={"index.rst": "Inputs\n======\n\n.. toctree::\n\n   inputs\n", "inputs.rst": text},
    )
    scripts = {label: script for label, (_, _, script) in OTHER_INPUTS.items()}
    assert not _leaks(Path(app.outdir), Path(app.srcdir), scripts)


def test_the_directives_own_page_is_checked_too(make_site: SiteMaker, tmp_path: Path) -> None:
    """What ``torchtrace-diff`` puts on the user's page (new recompile reasons) is published
    too: a path there is found, while the user's own text around it is left alone."""
    pair = DATA / "captured" / "pairs" / "recompile"
    src = tmp_path / "src"
    for side in ("baseline", "new"):
        (src / side).mkdir(parents=True)
        text = next((pair / side).glob("*.log")).read_text(encoding="utf-8")
        (src / side / "run.log").write_text(
            text.replace(
                "size mismatch at index 0", "size mismatch in /scratch/o'neil/a b/model.py"
            ),
            encoding="utf-8",
        )
    (src / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\n', encoding="utf-8")
    (src / "index.rst").write_text(
        "Report\n======\n\nOur data lives in /scratch/team/data/ (our own words).\n\n"
        ".. torchtrace-diff:: baseline new\n   :no-regressions:\n",
        encoding="utf-8",
    )
    app = make_site("", srcdir=src)
    (line,) = [w for w in warnings_of(app).splitlines() if "[torchtrace.path]" in w]
    assert "/scratch/o'neil/a b/model.py" in line and "/scratch/team" not in line
    out = Path(app.outdir)
    holding = [
        p
        for p in [
            *out.glob("torchtrace/**/*.html"),
            out / "index.html",
            *out.glob("_downloads/**/*"),
        ]
        if p.is_file()
        and "a b/model.py"
        in re.sub(r"<[^>]+>", "", p.read_text(encoding="utf-8", errors="replace"))
    ]
    assert out / "index.html" in holding  # the comparison on the user's page
    assert f"{len(holding)} published file(s)" in line, (line, holding)
