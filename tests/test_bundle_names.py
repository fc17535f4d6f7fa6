"""A bundle writes only names it made: no input file's name reaches the zip.

An input's file name is the user's (``..._rank_0_alice.log``) or an attacker's (a Windows
``..\\`` climb, a line break that forges a README line, a terminal escape).  The zip's
member names, its README and the report built inside it name each log by its rank, or by
its place, and nothing else of the name: checked here on real zips, every byte of every
member.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from sphinx_torchtrace.trace.sharing.share import bundle_names, write_zip

from .conftest import SIMPLE_LOG
from .test_share import run

REPO = Path(__file__).resolve().parents[1]
#: Input names a bug report's attachment could have.
USERS = "dedicated_log_torch_trace_rank_0_alice.log"
CLIMB = "dedicated_log_torch_trace_rank_1_..\\..\\evil.log.gz"
FORGED = "..\\..\\evil\nLogs: forged\x1b[31m.log"
#: What must be in no member's name and no member's bytes.
HOSTILE = [b"alice", b"evil", b"forged", b"\x1b[31m", b"..\\"]


def bundle(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run("bundle", "-q", *args)


def _leaks(zip_path: Path) -> dict[str, list[bytes]]:
    """Each member whose name or bytes (a gzip log's decompressed too) hold a hostile part."""
    found: dict[str, list[bytes]] = {}
    with zipfile.ZipFile(zip_path) as z:
        for name in z.namelist():
            data = z.read(name)
            if data[:2] == b"\x1f\x8b":
                data += gzip.decompress(data)
            hits = [h for h in HOSTILE if h in name.encode() or h in data]
            if hits:
                found[name] = hits
    return found


def test_a_folder_of_hostile_names_is_bundled_under_names_made_here(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    shutil.copy(SIMPLE_LOG, inputs / USERS)
    (inputs / CLIMB).write_bytes(gzip.compress(SIMPLE_LOG.read_bytes(), mtime=0))
    shutil.copy(SIMPLE_LOG, inputs / FORGED)
    out = tmp_path / "report.zip"
    result = bundle(inputs, "-o", out, "--name", "alice")
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        readme = z.read("README.txt").decode()
        pages = [n for n in names if n.startswith("report/torchtrace/") and n.endswith(".html")]
        overview = z.read("report/torchtrace/logs/index.html").decode()
    logs = [n for n in names if n.startswith("logs/")]
    assert logs == [
        "logs/dedicated_log_torch_trace_rank_0.log",
        "logs/dedicated_log_torch_trace_rank_1.log.gz",
        "logs/trace-0.log",
    ]
    assert all(n.isprintable() and "\\" not in n for n in names)
    # one README line names the logs, and a forged line is no line of it
    assert readme.count("Logs:") == 1
    assert "Logs: trace-0.log, dedicated_log_torch_trace_rank_0.log, " in readme
    # the report was built from the copies: both ranks found, each named as in the zip
    assert pages and "logs/dedicated_log_torch_trace_rank_1.log.gz" in overview
    assert _leaks(out) == {}


def test_one_hostile_log_is_bundled_as_trace_0(tmp_path: Path) -> None:
    log = tmp_path / FORGED
    shutil.copy(SIMPLE_LOG, log)
    out = tmp_path / "one.zip"
    result = bundle(log, "-o", out)
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        readme = z.read("README.txt").decode()
    assert [n for n in names if n.startswith("logs/")] == ["logs/trace-0.log"]
    assert "report/torchtrace/trace-0/index.html" in names  # the page named as the copy
    assert "Logs: trace-0.log\n" in readme
    assert _leaks(out) == {}


def test_bundle_names_keep_only_a_rank_and_gzip(tmp_path: Path) -> None:
    """A rank is re-written from its integer (``007`` is 7), a repeated rank numbered, a
    rank too long to be one is no rank; gzip by the bytes, not by the name."""
    names = [
        "dedicated_log_torch_trace_rank_007_bob.log",
        "dedicated_log_torch_trace_rank_7_carol.log",
        "dedicated_log_torch_trace_rank_" + "9" * 40 + ".log",
        "dedicated_log_torch_trace_x\x1by.log",
        "plain.log.gz",
        "notes.txt",
    ]
    paths = []
    for name in names:
        paths.append(tmp_path / name)
        data = SIMPLE_LOG.read_bytes()[:100]
        paths[-1].write_bytes(gzip.compress(data) if name == "notes.txt" else data)
    assert bundle_names(paths) == [
        "dedicated_log_torch_trace_rank_7.log",
        "dedicated_log_torch_trace_rank_7_2.log",
        "dedicated_log_torch_trace_2.log",
        "dedicated_log_torch_trace_3.log",
        "trace-4.log",
        "trace-5.log.gz",
    ]


@pytest.mark.parametrize(
    "name",
    ["logs/..\\..\\evil.log", "../evil.log", "/etc/evil", "logs/a\nb.log", "logs/\x1b[31m.log"],
)
def test_write_zip_refuses_a_name_no_zip_should_hold(name: str, tmp_path: Path) -> None:
    out = tmp_path / "x.zip"
    with pytest.raises(ValueError, match="not a name for a bundle's file"):
        write_zip(out, [(name, SIMPLE_LOG)], "README\n")
    assert not out.exists() and not list(tmp_path.iterdir())
