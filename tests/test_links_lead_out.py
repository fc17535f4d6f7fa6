"""Links never lead out (issue 51, point 1): no reader of a folder the user named reads
what is outside it.

Each test plants, beside a folder of real trace logs, a passwd-like file and a log of its
own, each holding a canary string, and puts in the folder real symbolic links to them, a
dangling link, a link to itself and a FIFO, named as torch names a rank's log.  Then it
runs what a user runs (``check``, ``redact``, ``bundle``, ``build``, ``summary``,
``diff``, a Sphinx build of the folder, of a ``TORCH_COMPILE_DEBUG`` folder, of a
captured trace from a cache entry), and searches every byte they write (zip members,
built pages, stdout, stderr, warnings) for the canary.  Where the command line refuses,
it is one named line and exit status 2; in a build, a located ``torchtrace.*`` warning.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_colors

from sphinx_torchtrace.trace.folders import LEADS_OUT, NOT_A_FILE
from sphinx_torchtrace.trace.inputs.capture import RECORD, TRACE
from sphinx_torchtrace.trace.sharing.share import RefusedEntries, tree_files

from .conftest import DATA, SIMPLE_LOG, SiteMaker, copy_testroot, generated_pages, warnings_of
from .test_share import run as share_run

REPO = Path(__file__).resolve().parents[1]
#: What must never come out: it is only in files outside the folder the user named.
CANARY = "canary_quokka_outside_the_folder"
DEBUG = DATA / "captured" / "debug_dir" / "inference" / "torch_compile_debug"
RUN = "run_2026_01_01_00_00_00_000000-pid_1"
GRAPH = f"{RUN}/torchinductor/model__0_inference_0.0"
HAS_FIFO = hasattr(os, "mkfifo")

#: The entries of a hostile folder, by rank: what each is.
HOSTILE = {
    1: "a link to a passwd-like file outside",
    2: "a link to a log beside the folder",
    3: "a dangling link",
    4: "a link to itself (a loop)",
    5: "a FIFO",
}


class Fifos:
    """FIFOs planted in inputs, each watched by a thread that offers it a writer: a reader
    that opens one gets a line and an end at once, so a test fails on what was read rather
    than hang, and :attr:`opened` says which were opened (none may be)."""

    def __init__(self) -> None:
        self.opened: list[Path] = []
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []

    def make(self, path: Path) -> None:
        os.mkfifo(path)
        thread = threading.Thread(target=self._watch, args=(path,), daemon=True)
        thread.start()
        self.threads.append(thread)

    def _watch(self, path: Path) -> None:
        while not self.stop.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while no reader
            except OSError:
                self.stop.wait(0.1)
                continue
            try:
                if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                    return  # replaced by a file: no longer ours to watch
                self.opened.append(path)
                os.write(fd, f"{{}}\n{CANARY} from a FIFO\n".encode())
            except OSError:
                pass
            finally:
                os.close(fd)


@pytest.fixture
def fifos() -> Iterator[Fifos]:
    watched = Fifos()
    yield watched
    watched.stop.set()
    for thread in watched.threads:
        thread.join(5)


def rank_log(rank: int) -> str:
    return f"dedicated_log_torch_trace_rank_{rank}.log"


def plant_outside(where: Path) -> tuple[Path, Path]:
    """A passwd-like file and a real log with a line of canary, both in ``where``."""
    where.mkdir(parents=True, exist_ok=True)
    passwd = where / "passwd"
    passwd.write_text(f"{CANARY}:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    beside = where / "beside.log"
    beside.write_text(SIMPLE_LOG.read_text("utf-8") + f"{CANARY} beside\n", encoding="utf-8")
    return passwd, beside


def link_hostile(
    folder: Path,
    outside: tuple[Path, Path],
    fifos: Fifos,
    name: Callable[[int], str] = rank_log,
) -> list[str]:
    """The hostile entries of :data:`HOSTILE` in ``folder``; their names."""
    passwd, beside = outside
    (folder / name(1)).symlink_to(passwd)
    (folder / name(2)).symlink_to(os.path.relpath(beside, folder))
    (folder / name(3)).symlink_to(folder.parent / "nowhere")
    (folder / name(4)).symlink_to(name(4))
    names = [name(n) for n in (1, 2, 3, 4)]
    if HAS_FIFO:
        fifos.make(folder / name(5))
        names.append(name(5))
    return names


@pytest.fixture
def hostile(tmp_path: Path, fifos: Fifos) -> tuple[Path, list[str]]:
    """``tmp/traces``: rank 0 a real log, ranks 1 to 5 the entries of :data:`HOSTILE`;
    the passwd-like file and the log with the canary in ``tmp/outside``."""
    outside = plant_outside(tmp_path / "outside")
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(SIMPLE_LOG, folder / rank_log(0))
    return folder, link_hostile(folder, outside, fifos)


def run(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it; a FIFO opened would block it: the timeout says so."""
    return share_run(*args, cwd=cwd, timeout=240)


def no_canary_under(folder: Path) -> None:
    """No file under ``folder`` (links not followed), nor any zip member in it, holds it."""
    for path in folder.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        data = path.read_bytes()
        assert CANARY.encode() not in data, path
        if path.suffix == ".zip":
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    assert CANARY.encode() not in z.read(member), f"{path}:{member}"


# -- check, redact, bundle: the whole command is refused ------------------------------------


@pytest.mark.parametrize("command", ["check", "redact", "bundle"])
def test_a_share_command_refuses_a_folder_with_an_entry_it_may_not_read(
    command: str, hostile: tuple[Path, list[str]], tmp_path: Path, fifos: Fifos
) -> None:
    folder, names = hostile
    out = tmp_path / "out"
    extra: dict[str, list[str | Path]] = {
        "check": [],
        "redact": ["-o", out],
        "bundle": ["-o", out / "r.zip", "-q"],
    }
    result = run(command, folder, *extra[command])
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"sphinx-torchtrace: error: {folder}: refused, nothing read: ")
    for name in names:  # each entry named, with why
        assert name in line, (name, line)
    assert f"{rank_log(1)}: {LEADS_OUT}" in line and f"{rank_log(2)}: {LEADS_OUT}" in line
    if HAS_FIFO:
        assert f"{rank_log(5)}: {NOT_A_FILE}" in line
    assert CANARY not in result.stdout + result.stderr and "Traceback" not in result.stderr
    assert not out.exists()  # nothing written: no redacted log, no zip
    assert fifos.opened == []


@pytest.mark.parametrize("target", ["passwd", "beside.log"])
def test_the_bundle_of_the_issue_is_refused(target: str, tmp_path: Path) -> None:
    """The report's case: one rank's log a link to a file outside (a passwd, a log beside
    the folder) was zipped as that rank's log; now nothing is written."""
    plant_outside(tmp_path / "outside")
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(SIMPLE_LOG, folder / rank_log(0))
    (folder / rank_log(1)).symlink_to(tmp_path / "outside" / target)
    out = tmp_path / "out" / "r.zip"
    result = run("bundle", folder, "-o", out, "-q")
    assert (result.returncode, result.stdout) == (2, ""), result.stdout + result.stderr
    assert result.stderr == (
        f"sphinx-torchtrace: error: {folder}: refused, nothing read: {folder / rank_log(1)}: "
        f"{LEADS_OUT} (copy a file into the folder to share it)\n"
    )
    assert not out.parent.exists()


def test_an_entry_no_command_reads_is_no_reason_to_refuse(tmp_path: Path) -> None:
    """Only entries named like a log are read: a link out named otherwise is left alone
    (not followed, not refused), and the bundle holds the folder's own log only."""
    passwd, _ = plant_outside(tmp_path / "outside")
    folder = tmp_path / "traces"
    folder.mkdir()
    shutil.copy(SIMPLE_LOG, folder / rank_log(0))
    (folder / "notes.txt").symlink_to(passwd)
    out = tmp_path / "out" / "r.zip"
    out.parent.mkdir()
    result = run("bundle", folder, "-o", out, "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    assert CANARY not in result.stdout + result.stderr
    with zipfile.ZipFile(out) as z:
        assert [n for n in z.namelist() if n.startswith("logs/")] == [f"logs/{rank_log(0)}"]
    no_canary_under(out.parent)


@pytest.mark.skipif(not HAS_FIFO, reason="no FIFOs here")
def test_a_fifo_named_as_the_log_is_refused_unopened(tmp_path: Path, fifos: Fifos) -> None:
    fifo = tmp_path / "trace.log"
    fifos.make(fifo)
    result = run("check", fifo)  # opened, it would wait for a writer for ever
    assert result.returncode == 2 and fifos.opened == []
    assert result.stderr.strip() == (
        f"sphinx-torchtrace: error: {fifo}: refused, nothing read: {fifo}: {NOT_A_FILE} "
        "(copy a file into the folder to share it)"
    )


def test_a_refused_name_is_escaped(tmp_path: Path) -> None:
    passwd, _ = plant_outside(tmp_path / "outside")
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "evil\x1b[2J\nrank.log").symlink_to(passwd)
    result = run("check", folder)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "\x1b" not in line and "evil\\x1b[2J\\x0arank.log" in line


def test_a_bundles_zip_holds_no_file_from_outside_its_folders(tmp_path: Path) -> None:
    """What the zip is made of (:func:`tree_files`): a link out of the report's folder,
    to a file or to a folder, stops the bundle; a link inside it is kept."""
    passwd, _ = plant_outside(tmp_path / "outside")
    report = tmp_path / "report"
    (report / "_static").mkdir(parents=True)
    (report / "index.html").write_text("<p>report</p>", encoding="utf-8")
    (report / "_static" / "same.html").symlink_to(Path("..") / "index.html")
    assert [name for name, _ in tree_files(report, "report")] == [
        "report/_static/same.html",
        "report/index.html",
    ]
    for name, target in (("page.html", passwd), ("linked", passwd.parent)):
        (report / name).symlink_to(target)
        with pytest.raises(RefusedEntries) as refused:
            tree_files(report, "report")
        assert refused.value.refused == [(report / name, LEADS_OUT)]
        (report / name).unlink()


# -- rank discovery: a build, summary and diff read the folder's own logs only --------------


def test_a_sphinx_build_of_the_folder_warns_at_each_entry_and_reads_none(
    make_site: SiteMaker, tmp_path: Path, fifos: Fifos
) -> None:
    outside = plant_outside(tmp_path / "outside")
    srcdir = copy_testroot("simple", tmp_path / "site")
    folder = srcdir / "traces"  # the docs' own folder, its links leading out of it
    folder.mkdir()
    shutil.copy(SIMPLE_LOG, folder / rank_log(0))
    names = link_hostile(folder, outside, fifos)
    app = make_site(
        "simple",
        srcdir=srcdir,
        pages={"index.rst": "Ranks\n=====\n\n.. torchtrace:: traces\n   :name: ranks\n"},
    )
    warnings = strip_colors(warnings_of(app))
    for name in names:
        assert re.search(
            rf"{re.escape(name)}:: WARNING: not read: [^\n]*\[torchtrace\.skipped\]", warnings
        ), (name, warnings)
    assert CANARY not in warnings
    assert "torchtrace/ranks/index" in generated_pages(app)
    no_canary_under(Path(app.outdir))
    no_canary_under(Path(app.srcdir))
    assert fifos.opened == []


def test_build_summary_and_diff_of_the_folder_read_none_of_it(
    hostile: tuple[Path, list[str]], tmp_path: Path, fifos: Fifos
) -> None:
    folder, names = hostile
    clean = tmp_path / "clean"
    clean.mkdir()
    shutil.copy(SIMPLE_LOG, clean / rank_log(0))
    site = tmp_path / "site"
    built = run("build", folder, "-o", site, "-q")
    summary = run("summary", "--json", folder)
    diff = run("diff", clean, folder)
    for result in (built, summary, diff):
        assert CANARY not in result.stdout + result.stderr, result.args
        assert "Traceback" not in result.stderr
    assert built.returncode == 0, built.stderr  # a build warns, at each entry
    for name in names:
        assert f"traces/{name}:: WARNING: not read: " in built.stderr, name
    # figures that leave entries out are no all-clear: each named, status 2
    assert summary.returncode == 2, summary.stderr
    assert '"ranks": 1' in summary.stdout  # rank 0 alone
    not_read = json.loads(summary.stdout)["not_read"]
    assert sorted(Path(e["path"]).name for e in not_read) == sorted(names)
    # each entry named; what was not read cannot pass a comparison: status 2
    assert diff.returncode == 2, diff.stdout + diff.stderr
    for name in names:
        assert f"Not read: new run: {folder / name}: not read: " in diff.stdout, name
    assert (site / "index.html").is_file()
    no_canary_under(site)
    assert fifos.opened == []


# -- debug folders ----------------------------------------------------------------------------


def test_a_debug_folder_warns_at_each_entry_and_reads_none(
    make_site: SiteMaker, tmp_path: Path, fifos: Fifos
) -> None:
    outside = plant_outside(tmp_path / "outside")
    dest = tmp_path / "data" / "torch_compile_debug"
    shutil.copytree(DEBUG, dest)
    graph = dest / GRAPH
    (graph / "output_code.py").unlink()
    (graph / "fx_graph_readable.py").unlink()
    names = link_hostile(
        graph,
        outside,
        fifos,
        name=lambda n: {1: "output_code.py", 2: "fx_graph_readable.py"}.get(n, f"sdsc_{n}.json"),
    )
    # a whole folder of the run that leads out: its files are not read either
    (dest / RUN / "torchdynamo").rename(tmp_path / "outside" / "torchdynamo")
    (tmp_path / "outside" / "torchdynamo" / "debug.log").write_text(CANARY, encoding="utf-8")
    (dest / RUN / "torchdynamo").symlink_to(tmp_path / "outside" / "torchdynamo")
    app = make_site(
        "simple",
        pages={"index.rst": "Debug\n=====\n\n.. torchtrace:: ../data/torch_compile_debug\n"},
    )
    warnings = strip_colors(warnings_of(app))
    for name in [*(f"{GRAPH}/{n}" for n in names), f"{RUN}/torchdynamo"]:
        assert re.search(
            rf"{re.escape(name)}:: WARNING: [^\n]*not read \[torchtrace\.skipped\]", warnings
        ), (name, warnings)
    assert f"{GRAPH}/output_code.py:: WARNING: 'output_code.py' is a link leading out" in warnings
    assert CANARY not in warnings
    no_canary_under(Path(app.outdir))
    assert fifos.opened == []


# -- the capture cache ------------------------------------------------------------------------


def captured(make_site: SiteMaker, cache: Path, mode: str = "auto") -> SphinxTestApp:
    return make_site(
        "capture",
        confoverrides={"torchtrace_capture": mode, "torchtrace_capture_cache": str(cache)},
    )


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file each run of the capture script appends a line to."""
    path = tmp_path / "runs.txt"
    monkeypatch.setenv("CAPTURE_RUNS", str(path))
    return path


def one_entry(cache: Path) -> Path:
    (entry,) = [e for e in cache.iterdir() if not e.name.startswith(".")]
    return entry


def tamper_trace_is_a_link(entry: Path, outside: Path, fifos: Fifos) -> None:
    """``trace/`` moved out of the entry, a link to it left; its log with a canary line."""
    moved = outside / "trace"
    shutil.move(entry / TRACE, moved)
    (log,) = moved.glob("*.log")
    log.write_text(log.read_text("utf-8") + f"{CANARY}\n", encoding="utf-8")
    (entry / TRACE).symlink_to(moved, target_is_directory=True)


def tamper_a_log_is_a_link(entry: Path, outside: Path, fifos: Fifos) -> None:
    passwd, _ = plant_outside(outside)
    (log,) = (entry / TRACE).glob("*.log")
    log.unlink()
    log.symlink_to(passwd)


def tamper_the_record_is_a_fifo(entry: Path, outside: Path, fifos: Fifos) -> None:
    (entry / RECORD).unlink()
    fifos.make(entry / RECORD)  # read, it would block the build for ever


def tamper_the_entry_is_a_link(entry: Path, outside: Path, fifos: Fifos) -> None:
    moved = outside / "entry"
    shutil.move(entry, moved)
    (moved / TRACE / "dedicated_log_torch_trace_rank_0_abcd1234.log").write_text(
        SIMPLE_LOG.read_text("utf-8") + f"{CANARY}\n", encoding="utf-8"
    )
    entry.symlink_to(moved, target_is_directory=True)


TAMPERINGS = {
    "trace/ is a link out": (tamper_trace_is_a_link, "trace' is a link that leads out"),
    "a log is a link out": (tamper_a_log_is_a_link, ".log' is a link that leads out"),
    "record.json is a FIFO": (tamper_the_record_is_a_fifo, "record.json' is not a regular"),
    "the entry is a link out": (tamper_the_entry_is_a_link, "' is a link that leads out"),
}


@pytest.mark.parametrize("tampering", list(TAMPERINGS))
def test_a_cache_entry_that_leads_out_is_refused_and_not_published(
    tampering: str, make_site: SiteMaker, tmp_path: Path, counted: Path, fifos: Fifos
) -> None:
    if "FIFO" in tampering and not HAS_FIFO:
        pytest.skip("no FIFOs here")
    tamper, said = TAMPERINGS[tampering]
    cache = tmp_path / "ci-cache"
    first = captured(make_site, cache)
    assert warnings_of(first) == "" and len(counted.read_text().splitlines()) == 1
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    tamper(one_entry(cache), outside, fifos)

    # a docs host that only reads the cache: one located warning, no report
    host = captured(make_site, cache, "never")
    (warning,) = strip_colors(warnings_of(host)).splitlines()
    assert "index.rst:4: WARNING: no cached capture of scripts/write_trace.py" in warning
    assert "1 cache entry refused, not read: '" in warning and said in warning
    assert warning.endswith("[torchtrace.capture]") and CANARY not in warning
    assert generated_pages(host) == []
    no_canary_under(Path(host.outdir))

    # a build that may capture: the entry is run again, and the build says why
    again = captured(make_site, cache)
    assert len(counted.read_text().splitlines()) == 2
    (warning,) = strip_colors(warnings_of(again)).splitlines()
    assert "index.rst:4: WARNING: the cached capture of scripts/write_trace.py was refused, " in (
        warning
    )
    assert said in warning and warning.endswith("[torchtrace.capture]")
    assert "torchtrace/live/index" in generated_pages(again)
    no_canary_under(Path(again.outdir))
    entry = one_entry(cache)  # replaced by a whole entry of its own
    assert not entry.is_symlink() and not (entry / TRACE).is_symlink()
    assert captured(make_site, cache, "never").warning.getvalue() == ""
    assert fifos.opened == []
