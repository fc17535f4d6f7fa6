"""The ``sphinx-torchtrace`` command, run as a user would (``python -m sphinx_torchtrace``).

Exit codes are the contract a CI job relies on: 0 no regression, 1 a listed regression,
2 unreadable input; errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from .conftest import DATA, SIMPLE_LOG
from .tools.hostile_log import COMPILE_ERROR_LOG

PAIRS = DATA / "captured" / "pairs"


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def _pair(name: str) -> tuple[Path, Path]:
    return PAIRS / name / "baseline", PAIRS / name / "new"


@pytest.mark.parametrize(
    ("pair", "forward", "backward"),
    [
        ("graph_break_fixed", 0, 1),  # fixing a break is fine; bringing it back fails
        ("recompile", 1, 0),
        ("compile_error", 1, 0),
        ("cache_warm", 0, 0),  # a cache change is never a regression
    ],
)
def test_diff_exit_codes(pair: str, forward: int, backward: int) -> None:
    old, new = _pair(pair)
    assert run("diff", old, new).returncode == forward
    assert run("diff", new, old).returncode == backward


def test_diff_prints_the_change_and_the_regression() -> None:
    result = run("diff", *_pair("compile_error"))
    assert result.returncode == 1
    said = "new compile error: GB0170 at program.py:clip (Data-dependent branching)"
    assert said in result.stdout
    assert "status: ok -> error" in result.stdout
    assert "[error]" in result.stdout
    assert "Traceback" not in result.stderr


def test_fail_on_chooses_kinds_and_thresholds() -> None:
    old, new = _pair("graph_break_fixed")
    assert run("diff", new, old, "--fail-on", "error,recompile").returncode == 0
    assert run("diff", new, old, "--fail-on", "graph_break").returncode == 1
    cold, warm = _pair("cache_warm")
    assert run("diff", warm, cold).returncode == 0
    assert run("diff", warm, cold, "--fail-on", "compile_time:1.25").returncode == 1
    assert run("diff", cold, warm, "--fail-on", "compile_time:1.25").returncode == 0


def test_diff_json_shape() -> None:
    result = run("diff", *_pair("recompile"), "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert set(data) >= {"unchanged", "ranks", "regressions", "fail_on"}
    assert data["unchanged"] is False
    assert [(r["kind"], r["subtype"], r["frame"]) for r in data["regressions"]] == [
        ("recompile", "regression_recompile", "program.py:scale")
    ]
    (rank,) = data["ranks"]
    scale = next(f for f in rank["frames"] if f["function"] == "scale")
    assert scale["compiles"] == {"baseline": 1, "new": 3}
    assert data["fail_on"]["compile_time"] is None


def test_unchanged_pair_says_so() -> None:
    result = run("diff", SIMPLE_LOG, SIMPLE_LOG)
    assert result.returncode == 0
    header, body = result.stdout.splitlines()[:2], result.stdout.splitlines()[2:]
    assert header[0].startswith(f"baseline: {SIMPLE_LOG} (torch 2.13.0+cpu (commit cf30153c4c13)")
    assert header[1].startswith("new run:  ")
    assert body == ["No change in compilation (compile time aside)."]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("diff", "/nonexistent/a.log", SIMPLE_LOG), "no such file or directory"),
        (("diff", SIMPLE_LOG, __file__), "no TORCH_TRACE records found"),
        (("diff", SIMPLE_LOG, SIMPLE_LOG, "--fail-on", "speed"), "unknown regression kind"),
        (("summary", "/nonexistent"), "no such file or directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: tuple[str | Path, ...], message: str) -> None:
    result = run(*args)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("sphinx-torchtrace: error:") and message in lines[-1]
    assert "Traceback" not in result.stderr


def test_summary_numbers() -> None:
    result = run("summary", PAIRS / "recompile" / "new", "--json")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert {
        k: data[k] for k in ("frames", "compile_ids", "graph_breaks", "recompiles", "errors")
    } == {
        "frames": 2,
        "compile_ids": 4,
        "graph_breaks": 0,
        "recompiles": 2,
        "errors": 0,
    }
    assert data["compile_seconds"] > 0
    text = run("summary", PAIRS / "graph_break_fixed" / "baseline").stdout
    assert "graph breaks:   1\n" in text
    assert "frames:         3" in text
    errors = json.loads(run("summary", PAIRS / "compile_error" / "new", "--json").stdout)
    assert errors["errors"] == 1


def test_summary_counts_a_function_recompiled_on_every_rank_once(tmp_path: Path) -> None:
    (log,) = (DATA / "shared" / "recompiles").glob("*.log")
    for r in range(4):  # a job whose 4 ranks ran the same program
        shutil.copy(log, tmp_path / f"dedicated_log_torch_trace_rank_{r}_x.log")
    data = json.loads(run("summary", tmp_path, "--json").stdout)
    # was (48, 12); the 4 compiles refused past the recompile limit are no recompiles
    assert (data["recompiles"], data["recompiled_functions"]) == (44, 3)
    assert data["limit_hits"] == 4
    assert data["frames_per_rank"] == [3, 3] and data["slowest_rank"]["rank"] == 0
    text = run("summary", tmp_path).stdout
    assert "recompiles:     44 (in 3 functions); 4 refused past the recompile limit" in text
    assert "frames:         12 (3 on each of the 4 ranks)" in text
    assert re.search(r"compile time: +[0-9.]+ s \([0-9.]+ s on rank 0, the slowest\)", text)


def test_build_a_standalone_site(tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = run("build", SIMPLE_LOG, "-o", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # the page printed is the trace's overview itself, as tlparse opens on its report
    overview = Path(result.stdout.strip().splitlines()[-1])
    assert overview == out / "torchtrace" / "run-5aek85xk" / "index.html", overview
    assert 'id="at-a-glance"' in overview.read_text(encoding="utf-8")
    assert (out / "index.html").is_file()
    assert (out / "run-5aek85xk.html").is_file()  # a page per trace, named after its log
    assert list((out / "torchtrace").rglob("*.html")), "the trace's pages were built"
    assert "Traceback" not in result.stderr


def test_build_names_the_logs_as_the_user_did(tmp_path: Path) -> None:
    """The pages name each log by the path the user gave (the project's link to it,
    ``traces/t0/...``, is a path nobody has), whatever its characters."""
    folder = tmp_path / "my logs\\1"  # a blank and a backslash: no regex, no escape
    folder.mkdir()
    shutil.copy(SIMPLE_LOG, folder / "dedicated_log_torch_trace_a.log")
    out = tmp_path / "out"
    result = run("build", folder.name, "-o", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pages = " ".join(p.read_text(encoding="utf-8") for p in (out / "torchtrace").rglob("*.html"))
    words = re.sub(r"<[^>]+>", "", pages)
    assert "my logs\\1/dedicated_log_torch_trace_a.log" in words
    assert "traces/t0" not in words
    again = run("build", folder, "-o", tmp_path / "abs", cwd=tmp_path)  # an absolute path
    assert again.returncode == 0, again.stderr
    pages = " ".join(
        p.read_text(encoding="utf-8") for p in (tmp_path / "abs" / "torchtrace").rglob("*.html")
    )
    words = re.sub(r"<[^>]+>", "", pages)
    assert "my logs\\1/dedicated_log_torch_trace_a.log" in words and str(tmp_path) not in words


def test_build_says_what_it_reads_and_where_warnings_are(tmp_path: Path) -> None:
    """On stderr: which log each path stood for (a folder of two logs: the one used, and
    why), a line per stage, and warnings at the user's file and line, not the project's
    links; stdout: the index alone. The output folder holds the site, no doctree cache; a
    second build of the same logs reads no page again."""
    folder = tmp_path / "two"
    folder.mkdir()
    older = folder / "dedicated_log_torch_trace_a.log"
    older.write_text(SIMPLE_LOG.read_text("utf-8"), encoding="utf-8")
    text = SIMPLE_LOG.read_text("utf-8").splitlines(keepends=True)
    broken = tmp_path / "broken.log"
    broken.write_text(
        "".join(text[:40]) + "V1121 11:50:48.850000 1 x.py:1] {not json\n" + "".join(text[40:]),
        encoding="utf-8",
    )
    shutil.copy(SIMPLE_LOG, folder / "dedicated_log_torch_trace_b.log")
    out = tmp_path / "out"
    result = run("build", "two", "broken.log", "-o", out, cwd=tmp_path, env={"NO_COLOR": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [str(out / "index.html")]
    err = result.stderr
    assert "folder two: using dedicated_log_torch_trace_" in err and "(newest of 2 logs" in err
    assert "log broken.log (" in err
    assert re.search(r"^broken\.log:41: WARNING: .*\[torchtrace\.json\]$", err, re.M), err
    assert "traces/t" not in err and "torchtrace-src" not in err and "projects" not in err
    assert re.search(r"^built in [\d.]+ s$", err, re.M)
    assert "\x1b[" not in err
    assert not (out / ".doctrees").exists()
    again = run("build", "two", "broken.log", "-o", out, "-q", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "built in" not in again.stderr and "log broken.log" not in again.stderr  # quiet
    assert "broken.log:41: WARNING" in again.stderr  # warnings are not progress


def test_serve_previews_a_report_on_localhost(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("build", SIMPLE_LOG, "-o", out, "-q").returncode == 0
    server = subprocess.Popen(
        [sys.executable, "-m", "sphinx_torchtrace", "serve", str(out), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        _serves_the_report(server.stdout.readline())
    finally:
        server.terminate()
        server.wait(timeout=30)
    missing = run("serve", tmp_path / "nothing")
    assert missing.returncode == 2 and "no index.html" in missing.stderr


def test_version() -> None:
    from sphinx_torchtrace.version import __version__

    result = run("--version")
    assert result.returncode == 0 and result.stdout.strip() == f"sphinx-torchtrace {__version__}"


def test_run_captures_a_program_and_passes_its_exit_status_on(tmp_path: Path) -> None:
    """``run -- python prog.py ARGS``: the program runs with TORCH_TRACE set to a new folder,
    its output streamed; then the report is built and its path printed; the exit status is
    the program's, even a failing one (the partial trace still has its report)."""
    log = DATA / "shared/tlparse-inputs/inputs/multi_rank_logs/dedicated_log_torch_trace_rank_0.log"
    program = tmp_path / "prog.py"
    program.write_text(
        "import os, shutil, sys\n"
        f"shutil.copy({str(log)!r}, os.path.join(os.environ['TORCH_TRACE'],"
        " 'dedicated_log_torch_trace_rank_0_x.log'))\n"
        "assert os.environ['TORCHINDUCTOR_FORCE_DISABLE_CACHES'] == '1'\n"
        "print('hello from the program', sys.argv[1:])\n"
        "sys.exit(int(sys.argv[1]))\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    result = run("run", "-o", out, "--", sys.executable, program, "5", "--flag", cwd=tmp_path)
    assert result.returncode == 5, result.stderr
    printed = result.stdout.splitlines()
    assert printed[0] == "hello from the program ['5', '--flag']" and len(printed) == 2
    overview = Path(printed[1])  # the report's overview, no index page between
    assert overview.parent.parent == out / "torchtrace" and overview.name == "index.html"
    assert overview.is_file() and list((out / "torchtrace").rglob("*.html"))
    assert re.search(r"^sphinx-torchtrace: TORCH_TRACE=.*/runs/", result.stderr, re.M)
    assert "the program exited with status 5" in result.stderr
    assert "Traceback" not in result.stderr

    ok = run("run", "-q", "-o", out, "--", sys.executable, program, "0", cwd=tmp_path)
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr

    silent = tmp_path / "silent.py"
    silent.write_text("print('no torch here')\n", encoding="utf-8")
    none = run("run", "-o", out, "--", sys.executable, silent, cwd=tmp_path)
    assert none.returncode == 2 and "wrote no trace log" in none.stderr
    missing = run("run", "--", "no-such-program-xyz")
    assert missing.returncode == 2 and "cannot run no-such-program-xyz" in missing.stderr
    nothing = run("run")
    assert nothing.returncode == 2 and "give the program to run after --" in nothing.stderr


def test_run_serve_previews_the_report(tmp_path: Path) -> None:
    """``run --serve``: the report is served on 127.0.0.1, as ``serve`` does."""
    log = DATA / "shared/tlparse-inputs/inputs/multi_rank_logs/dedicated_log_torch_trace_rank_0.log"
    program = tmp_path / "prog.py"
    program.write_text(
        "import os, shutil\n"
        f"shutil.copy({str(log)!r}, os.path.join(os.environ['TORCH_TRACE'],"
        " 'dedicated_log_torch_trace_rank_0_x.log'))\n",
        encoding="utf-8",
    )
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sphinx_torchtrace",
            "run",
            "-q",
            "-o",
            str(tmp_path / "out"),
            "--serve",
            "--port",
            "0",
            "--",
            sys.executable,
            str(program),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        overview = Path(server.stdout.readline().strip())
        assert overview.is_file() and overview.parent.parent == tmp_path / "out" / "torchtrace"
        line = server.stdout.readline()
        _serves_the_report(line)
        page = overview.relative_to(tmp_path / "out").as_posix()
        assert re.search(rf"http://127\.0\.0\.1:\d+/{re.escape(page)} ", line), line
    finally:
        server.terminate()
        server.wait(timeout=30)


def _as_in_a_terminal() -> None:
    """A command's SIGINT as a terminal's foreground job has it: a background job (``&``,
    ``nohup``, a CI runner) ignores SIGINT, and a process that starts ignoring it never
    installs Python's Ctrl+C handler, so the test that sends it would wait in vain."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _stop_group(process: subprocess.Popen[str]) -> None:
    """Whatever happened in the test, no process of the command's group is left running."""
    import signal

    with contextlib.suppress(ProcessLookupError):  # the group: the command and its children
        os.killpg(process.pid, signal.SIGKILL)
    if process.poll() is None or process.returncode is None:
        process.communicate(timeout=60)


@pytest.mark.skipif(os.name != "posix", reason="Ctrl+C is a signal to the process group")
def test_run_ctrl_c_stops_the_program_and_still_reports(tmp_path: Path) -> None:
    """Ctrl+C reaches the program as in a shell; its partial trace still gets a report and
    the exit status says it was interrupted (130)."""
    import signal

    log = DATA / "shared/tlparse-inputs/inputs/multi_rank_logs/dedicated_log_torch_trace_rank_0.log"
    program = tmp_path / "prog.py"
    program.write_text(
        "import os, shutil, time\n"
        f"shutil.copy({str(log)!r}, os.path.join(os.environ['TORCH_TRACE'],"
        " 'dedicated_log_torch_trace_rank_0_x.log'))\n"
        "print('training', flush=True)\n"
        "time.sleep(300)\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    command = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sphinx_torchtrace",
            "run",
            "-q",
            "-o",
            str(out),
            "--",
            sys.executable,
            str(program),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_as_in_a_terminal,
    )
    try:
        assert command.stdout is not None
        assert command.stdout.readline() == "training\n"
        os.killpg(command.pid, signal.SIGINT)  # what a terminal's Ctrl+C does
        rest, err = command.communicate(timeout=300)
    finally:
        _stop_group(command)
    assert command.returncode == 130, err
    overview = Path(rest.splitlines()[-1])
    assert overview.parent.parent == out / "torchtrace" and overview.is_file()
    assert "the program exited with status 130" in err


def _serves_the_report(line: str) -> None:
    """The line a preview prints names a URL on 127.0.0.1 that answers with the report."""
    url = re.search(r"http://127\.0\.0\.1:\d+/", line)
    assert url, line
    with urllib.request.urlopen(url.group() + "index.html", timeout=30) as response:
        assert b"Compile report" in response.read()


@pytest.mark.skipif(os.name != "posix", reason="Ctrl+C is a signal to the process group")
def test_ctrl_c_on_serve_exits_quietly_with_130(tmp_path: Path) -> None:
    """Stopping a preview is what the user asked for: no error line, the shell's 130."""
    import signal

    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<p>Compile report</p>", encoding="utf-8")
    server = subprocess.Popen(
        [sys.executable, "-m", "sphinx_torchtrace", "serve", str(tmp_path / "site"), "-p", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_as_in_a_terminal,
    )
    try:
        assert server.stdout is not None
        assert "http://127.0.0.1:" in server.stdout.readline()
        os.killpg(server.pid, signal.SIGINT)
        _, err = server.communicate(timeout=60)
    finally:
        _stop_group(server)
    assert server.returncode == 130
    assert "error" not in err, err


def test_another_log_built_into_the_same_folder_leaves_no_stale_page(tmp_path: Path) -> None:
    """Sphinx never deletes an output: the pages of the log built before into ``-o`` are
    removed (they would link to pages that are gone), a file of the user's is kept."""
    out = tmp_path / "out"
    first = DATA / "captured" / "pairs" / "recompile" / "new"
    second = DATA / "captured" / "pairs" / "compile_error" / "baseline"
    assert run("build", first, "-q", "-o", out).returncode == 0
    before = {p.relative_to(out) for p in out.rglob("*.html")}
    (out / "mine.html").write_text("<p>mine</p>", encoding="utf-8")
    assert run("build", second, "-q", "-o", out).returncode == 0
    after = {p.relative_to(out) for p in out.rglob("*.html")}
    assert (out / "mine.html").is_file()
    gone = before - after
    assert gone, "the first log's pages are gone"
    for page in out.rglob("*.html"):
        for href in re.findall(r'href="([^"#:?]+\.html)', page.read_text(encoding="utf-8")):
            assert (page.parent / href).resolve().is_file(), (page, href)


@pytest.mark.skipif(os.name != "posix", reason="a pseudo-terminal")
@pytest.mark.parametrize(
    ("flags", "env", "opens"),
    [
        ([], {}, True),  # at a terminal: the overview opens, as tlparse's report does
        (["--no-browser"], {}, False),
        ([], {"CI": "true"}, False),  # a CI job has no one to look
    ],
)
def test_build_opens_the_overview_at_a_terminal(
    tmp_path: Path, flags: list[str], env: dict[str, str], opens: bool
) -> None:
    """``$BROWSER`` (which Python's webbrowser obeys) records what would be opened."""
    import pty

    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n', encoding="utf-8")
    browser.chmod(0o755)
    environ = {k: v for k, v in os.environ.items() if k != "CI"}
    environ.update(BROWSER=str(browser), NO_COLOR="1", **env)
    leader, follower = pty.openpty()
    try:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "sphinx_torchtrace",
                "build",
                str(SIMPLE_LOG),
                "-q",
                "-o",
                str(tmp_path / "out"),
                *flags,
            ],
            stdout=follower,
            stderr=subprocess.PIPE,
            text=True,
            env=environ,
            timeout=300,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert result.returncode == 0, result.stderr
    overview = tmp_path / "out" / "torchtrace" / "run-5aek85xk" / "index.html"
    if opens:
        assert opened.read_text(encoding="utf-8") == overview.as_uri()
    else:
        assert not opened.exists()


def test_run_says_it_started_that_it_runs_and_how_it_ended(tmp_path: Path) -> None:
    """A program silent for 6 s: ``run`` says what it runs, that it still runs at 5 s (a
    build that looks hung is the complaint), and how long it took; ``-q`` says none of it."""
    log = DATA / "shared/tlparse-inputs/inputs/multi_rank_logs/dedicated_log_torch_trace_rank_0.log"
    program = tmp_path / "slow.py"
    program.write_text(
        "import os, shutil, time\n"
        f"shutil.copy({str(log)!r}, os.path.join(os.environ['TORCH_TRACE'],"
        " 'dedicated_log_torch_trace_rank_0_x.log'))\n"
        "time.sleep(6)\n",
        encoding="utf-8",
    )
    result = run(
        "run", "--no-browser", "-o", tmp_path / "out", "--", sys.executable, program, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    started = lines.index(next(line for line in lines if " running " in line))
    assert lines[started].endswith("slow.py"), lines[started]
    assert "sphinx-torchtrace: the program is still running (5 s)" in lines[started + 1 :]
    assert re.search(
        r"^sphinx-torchtrace: the program exited with status 0 after [6-9]\.\d s$",
        result.stderr,
        re.M,
    ), result.stderr
    quiet = run(
        "run",
        "-q",
        "--no-browser",
        "-o",
        tmp_path / "out",
        "--",
        sys.executable,
        program,
        cwd=tmp_path,
    )
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def _relocated(log: Path, old: str, new: str) -> str:
    """The log with every ``old`` path written as ``new`` (payload md5s recomputed)."""
    from .tools.hostile_log import format_record, read_records

    records = read_records(log)
    for record in records:
        record.envelope = json.loads(json.dumps(record.envelope).replace(old, new))
        if record.payload is not None:
            record.payload = record.payload.replace(old, new)
    return "".join(map(format_record, records))


def test_build_rewrites_paths_the_user_names_and_its_advice_names_the_option(
    tmp_path: Path,
) -> None:
    """A path no default rule knows (``/scratch/alice``, in an error's message) is one
    ``torchtrace.path`` warning whose advice is the command line's ``--rewrite`` (there is
    no conf.py to put a rule in); with ``--rewrite /scratch/alice=<data>`` the pages say
    ``<data>`` and nothing warns."""
    log = tmp_path / "moved.log"
    log.write_text(
        _relocated(
            COMPILE_ERROR_LOG,
            "intentional failure in custom backend",
            "cannot open /scratch/alice/train.bin in custom backend",
        ),
        encoding="utf-8",
    )
    plain = run(
        "build",
        log,
        "-q",
        "--no-browser",
        "-o",
        tmp_path / "a",
        cwd=tmp_path,
        env={"NO_COLOR": "1"},
    )
    assert plain.returncode == 0, plain.stderr
    (warning,) = [line for line in plain.stderr.splitlines() if "[torchtrace.path]" in line]
    assert "/scratch/alice/" in warning and "--rewrite PATH=NAME" in warning, warning
    assert "torchtrace_path_rewrites" not in warning and "conf" not in warning
    named = run(
        "build",
        log,
        "-q",
        "--no-browser",
        "-o",
        tmp_path / "b",
        "--rewrite",
        "/scratch/alice=<data>",
        cwd=tmp_path,
        env={"NO_COLOR": "1"},
    )
    assert named.returncode == 0 and "[torchtrace.path]" not in named.stderr, named.stderr
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "b").rglob("*.html"))
    assert "/scratch/alice" not in pages and "&lt;data&gt;/train.bin" in pages
    bad = run("build", log, "--rewrite", "no-equals-sign", cwd=tmp_path)
    assert bad.returncode == 2 and "give PATH=NAME" in bad.stderr


def test_run_shows_the_folder_it_made_by_its_name(tmp_path: Path) -> None:
    """An error the program's trace holds names a file in the run's own TORCH_TRACE folder
    (torch's repro scripts set it, too): the pages name the run, never the folder (in a
    CI cache outside any home folder, no default rule would hide it)."""
    program = tmp_path / "prog.py"
    program.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent.parent)!r})\n"
        "from tests.test_cli import _relocated, COMPILE_ERROR_LOG\n"
        "folder = os.environ['TORCH_TRACE']\n"
        "text = _relocated(COMPILE_ERROR_LOG, 'intentional failure in custom backend',\n"
        "                  f'cannot open {folder}/train.bin in custom backend')\n"
        "with open(os.path.join(folder, 'dedicated_log_torch_trace_x.log'), 'w') as f:\n"
        "    f.write(text)\n",
        encoding="utf-8",
    )
    cache = tmp_path / "ci-cache"
    result = run(
        "run",
        "-q",
        "--no-browser",
        "-o",
        tmp_path / "out",
        "--",
        sys.executable,
        program,
        cwd=tmp_path,
        env={"XDG_CACHE_HOME": str(cache), "NO_COLOR": "1"},
    )
    assert result.returncode == 0 and "[torchtrace.path]" not in result.stderr, result.stderr
    pages = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out").rglob("*.html"))
    (run_folder,) = (cache / "sphinx-torchtrace" / "runs").iterdir()
    assert str(cache) not in pages and f"cannot open {run_folder.name}/train.bin" in pages


def _on_a_terminal(*args: str | Path, env: dict[str, str]) -> tuple[int, str, str]:
    """Run the command with stderr on a pseudo-terminal (as a user's shell has it) and
    stdout on a pipe: its exit status, stdout, and what the terminal received."""
    import pty

    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "sphinx_torchtrace", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
        env={**os.environ, **env},
    )
    os.close(slave)
    screen = b""
    while True:
        try:
            piece = os.read(master, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not piece:
            break
        screen += piece
    os.close(master)
    out = process.stdout.read() if process.stdout else ""
    return process.wait(timeout=300), out, screen.decode("utf-8", "replace")


def test_reading_draws_a_progress_bar_on_a_terminal_only() -> None:
    """A big log takes a while to read: on a terminal a bar shows how far reading is (over
    all the ranks' logs of a folder), then is erased, so the figures start a clean line;
    piped, or in CI, stderr stays empty."""
    folder = DATA / "shared" / "tlparse-inputs" / "inputs" / "multi_rank_logs"
    total = sum(p.stat().st_size for p in folder.glob("dedicated_log_torch_trace_rank_*.log"))
    env = {"TERM": "xterm", "CI": ""}
    status, out, screen = _on_a_terminal("summary", folder, env=env)
    assert status == 0 and out.startswith("log:"), (out, screen)
    assert "sphinx-torchtrace: reading " in screen and "100%" in screen
    assert f"/{total / 1e6:.1f} MB" in screen  # the bar counts every rank's log
    assert screen.endswith("\r\x1b[K")  # erased: nothing of it stays on the screen
    status, out, screen = _on_a_terminal("summary", folder, env={**env, "CI": "true"})
    assert status == 0 and screen == ""
    piped = run("summary", folder, env={"CI": ""})
    assert piped.returncode == 0 and piped.stderr == ""


def test_summary_reads_every_kind_the_directive_reads() -> None:
    """A TORCH_LOGS text log and a TORCH_COMPILE_DEBUG folder, which the directive renders,
    are read by ``summary`` too (it once said "no TORCH_TRACE records found", exit 2);
    ``diff`` refuses a text log with the reason the directive gives, never a crash."""
    text_log = DATA / "captured" / "torch_logs" / "plus_dynamo.log"
    result = run("summary", "--json", text_log)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["compile_ids"] == 6 and figures["statuses"] == {
        "break": 1,
        "error": 1,
        "missing": 4,
    }
    debug = DATA / "captured" / "debug_dir" / "training" / "torch_compile_debug"
    result = run("summary", "--json", debug)
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    assert figures["input"] == "torch-compile-debug" and figures["runs"] >= 1
    assert figures["graph_folders"] == sum(figures["graph_folders_by_kind"].values()) > 0
    # the folder's files hold no times: its compile time is the trace log's beside its runs
    beside = json.loads(run("summary", "--json", debug / "tlparse").stdout)["compile_time"]
    assert figures["compile_time"] == beside and beside["seconds"] > 1
    assert figures["compile_time_from"].endswith("tlparse/dedicated_log_torch_trace_8xohozcf.log")
    refused = run("diff", text_log, text_log)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "does not say which function each compile ran" in refused.stderr


def test_summary_of_a_debug_folder_without_a_trace_log_says_where_times_are(
    tmp_path: Path,
) -> None:
    """Without the trace log torch writes beside the runs, no compile time is made up."""
    debug = tmp_path / "torch_compile_debug"
    shutil.copytree(DATA / "captured" / "debug_dir" / "inference" / "torch_compile_debug", debug)
    shutil.rmtree(debug / "tlparse")
    result = run("summary", debug)
    assert result.returncode == 0, result.stderr
    [line] = [x for x in result.stdout.splitlines() if x.startswith("compile time:")]
    assert "none recorded" in line and "no trace log beside it" in line
    assert "compile_time" not in json.loads(run("summary", "--json", debug).stdout)


def test_a_reader_that_stops_reading_ends_the_command_quietly() -> None:
    """``summary --json --all LOG | head``: no traceback, no error line, the pipe's status."""
    log = DATA / "corpus" / "big_many_models"
    with subprocess.Popen(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", "--json", "--all", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as child:
        assert child.stdout is not None and child.stderr is not None
        assert child.stdout.read(10).startswith(b"{")
        child.stdout.close()  # the output is far longer than a pipe holds
        assert child.stderr.read() == b""
        assert child.wait(timeout=300) == 141


def test_summary_says_where_a_log_without_compile_times_has_them() -> None:
    """No "-" for a compile time the log does hold elsewhere: vLLM's pieces carry no compile
    id, their time is vLLM's; a text log holds none at all, and says so."""
    vllm = DATA / "vllm" / "dedicated_log_torch_trace_rank_0_2dk9f86k.log"
    text_log = DATA / "captured" / "torch_logs" / "plus_dynamo.log"
    said = {}
    for name, log in (("vllm", vllm), ("text", text_log)):
        result = run("summary", log)
        assert result.returncode == 0, result.stderr
        [said[name]] = [x for x in result.stdout.splitlines() if x.startswith("compile time:")]
    seconds = json.loads(run("summary", "--json", vllm).stdout)["vllm"][0]["compile_seconds"]
    assert f"vLLM's: {seconds:.2f} s" in said["vllm"] and "compile id" in said["vllm"]
    assert "TORCH_LOGS text log holds no compilation metrics" in said["text"]
