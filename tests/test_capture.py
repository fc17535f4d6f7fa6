"""``torchtrace-capture``: a report captured at docs-build time, cached by content.

Without torch, the captured program is ``tests/roots/test-capture/scripts/write_trace.py``,
a plain Python script that writes a real trace log where ``TORCH_TRACE`` says (and fails
or hangs when its page asks); the ``torch`` tests capture a real ``torch.compile``
program.  Every build is a real Sphinx build; what is checked is what a reader of the
site or of the build's output would see.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_colors

from sphinx_torchtrace.trace.inputs.capture import CaptureSpec, Interpreter, interpreter_facts

from .conftest import SiteMaker, copy_testroot, generated_pages, warnings_of

REPO = Path(__file__).resolve().parents[1]


def page_text(app: SphinxTestApp, name: str = "index") -> str:
    """The words of a built page, as a reader sees them."""
    html = (Path(app.outdir) / f"{name}.html").read_text(encoding="utf-8")
    body = html[html.find("<h1") :]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


def runs(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.fixture
def counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file each run of the script appends a line to (not part of the cache key)."""
    path = tmp_path / "runs.txt"
    monkeypatch.setenv("CAPTURE_RUNS", str(path))
    return path


def capture_page(options: str = "") -> dict[str, str]:
    return {
        "index.rst": "Captured\n========\n\n.. torchtrace-capture:: scripts/write_trace.py\n"
        f"   :name: live\n{options}\n.. torchtrace-captures::\n"
    }


def test_capture_renders_then_the_cache_serves_it(
    make_site: SiteMaker, tmp_path: Path, counted: Path
) -> None:
    """The first build runs the script and shows its report as torchtrace would; the next
    builds find it in the cache (no run) and show the same pages."""
    srcdir = copy_testroot("capture", tmp_path / "site")
    first = make_site("capture", srcdir=srcdir)
    assert warnings_of(first) == ""
    assert len(runs(counted)) == 1
    pages = generated_pages(first)
    assert "torchtrace/live/index" in pages and "torchtrace/live/frame-0-0" in pages
    text = page_text(first)
    assert "Captured from scripts/write_trace.py at this build" in text
    assert "Trace live, at a glance:" in text and "(1 compile id, 1 attempt): 1 ok" in text
    assert re.search(r"index scripts/write_trace\.py ran [\d.]+ s ok", text), text
    assert (Path(first.outdir) / "torchtrace/live/frame-0-0.html").is_file()

    second = make_site("capture", srcdir=srcdir, freshenv=False)
    assert warnings_of(second) == ""
    assert len(runs(counted)) == 1, "an unchanged script is not run again"
    text = page_text(second)
    assert "Captured from scripts/write_trace.py from the cache (captured " in text
    assert re.search(r"index scripts/write_trace\.py cached [\d.]+ s ok", text), text
    assert generated_pages(second) == pages

    fresh = make_site("capture", srcdir=srcdir, freshenv=True)  # a clean env, same cache
    assert len(runs(counted)) == 1 and warnings_of(fresh) == ""


def test_a_changed_dependency_is_a_miss(
    make_site: SiteMaker, tmp_path: Path, counted: Path
) -> None:
    """The local module the script imports is part of the key (found by reading the
    script); a file it does not import is not; ``:depends:`` names the files instead."""
    srcdir = copy_testroot("capture", tmp_path / "site")
    make_site("capture", srcdir=srcdir)
    (srcdir / "scripts" / "notes.py").write_text("X = 1\n", encoding="utf-8")
    make_site("capture", srcdir=srcdir, freshenv=False)
    assert len(runs(counted)) == 1, "a module the script does not import is no dependency"
    helper = srcdir / "scripts" / "helper.py"
    helper.write_text('GREETING = "hello again"\n', encoding="utf-8")
    third = make_site("capture", srcdir=srcdir, freshenv=False)
    assert len(runs(counted)) == 2, "a changed imported module runs the capture again"
    assert "at this build" in page_text(third)

    depends = make_site(
        "capture",
        srcdir=srcdir,
        freshenv=False,
        pages=capture_page("   :depends: scripts/data/*.json\n"),
    )
    assert len(runs(counted)) == 3  # other options, other key
    (srcdir / "scripts" / "data").mkdir()
    (srcdir / "scripts" / "data" / "config.json").write_text("{}", encoding="utf-8")
    make_site(
        "capture",
        srcdir=srcdir,
        freshenv=False,
        pages=capture_page("   :depends: scripts/data/*.json\n"),
    )
    assert len(runs(counted)) == 4, "a new file matching :depends: is a change"
    helper.write_text('GREETING = "not watched"\n', encoding="utf-8")
    make_site(
        "capture",
        srcdir=srcdir,
        freshenv=False,
        pages=capture_page("   :depends: scripts/data/*.json\n"),
    )
    assert len(runs(counted)) == 4, ":depends: replaces the imports"
    assert warnings_of(depends) == ""


def test_depends_outside_the_source_folder_is_a_warning_and_nothing_runs(
    make_site: SiteMaker, tmp_path: Path, counted: Path
) -> None:
    """A ``:depends:`` glob that reaches a library outside the source folder (by ``..`` or
    a link) cannot be part of the key the docs vouch for: one located
    ``torchtrace.capture`` warning, nothing runs, and no cached report is shown as if it
    were current."""
    outside = tmp_path / "library"
    outside.mkdir()
    (outside / "lib.py").write_text("X = 1\n", encoding="utf-8")
    srcdir = copy_testroot("capture", tmp_path / "site")
    make_site("capture", srcdir=srcdir)
    assert len(runs(counted)) == 1
    (srcdir / "scripts" / "linked").symlink_to(outside, target_is_directory=True)
    for pattern in ("../library/*.py", "scripts/linked/*.py"):
        app = make_site(
            "capture",
            srcdir=srcdir,
            freshenv=False,
            pages=capture_page(f"   :depends: {pattern}\n"),
        )
        warnings = warnings_of(app)
        assert "[torchtrace.capture]" in warnings and "outside the source folder" in warnings
        assert "index.rst:" in warnings, warnings  # located at the directive
        assert len(runs(counted)) == 1, "nothing runs"
        assert "from the cache" not in page_text(app)


def test_a_capture_says_it_started_that_it_runs_and_how_it_ended(
    make_site: SiteMaker, tmp_path: Path, counted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A capture that takes a while is not silent: a status line when it starts (with its
    timeout), one every few seconds while it runs, one when it ends; nothing of it when the
    cache serves it."""
    from sphinx_torchtrace.trace.inputs import capture as capture_module

    monkeypatch.setattr(capture_module, "PROGRESS_SECONDS", 0.5)
    srcdir = copy_testroot("capture", tmp_path / "site")
    app = make_site("capture", srcdir=srcdir, pages=capture_page("   :env: CAPTURE_SLEEP=1.6\n"))
    status = strip_colors(app._status.getvalue())
    assert "torchtrace: capturing scripts/write_trace.py (timeout " in status, status
    assert re.search(r"torchtrace: capturing scripts/write_trace\.py: running for \d+ s", status)
    assert re.search(r"torchtrace: captured scripts/write_trace\.py: ok in [\d.]+ s", status)
    again = make_site(
        "capture", srcdir=srcdir, freshenv=False, pages=capture_page("   :env: CAPTURE_SLEEP=1.6\n")
    )
    assert "torchtrace: captur" not in strip_colors(again._status.getvalue())
    assert len(runs(counted)) == 1


def test_the_key_holds_python_and_the_torch_build(tmp_path: Path) -> None:
    """torch's version and build are read without importing it, from the interpreter and
    environment the capture runs in: a page's PYTHONPATH naming another torch is another
    key."""
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("raise SystemExit('never imported')\n")
    (fake / "torch" / "version.py").write_text(
        "__version__ = '0.0.1'\ngit_version = 'f00dfeed'\ncuda = None\n"
    )
    (fake / "torch-0.0.1.dist-info").mkdir()
    (fake / "torch-0.0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 0.0.1\n"
    )
    facts = interpreter_facts(sys.executable, {**os.environ, "PYTHONPATH": str(fake)})
    assert (facts.torch_version, facts.torch_git) == ("0.0.1", "f00dfeed")
    assert facts.python == sys.version
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    spec = CaptureSpec(script=script, root=tmp_path)
    other_build = Interpreter(facts.python, "0.0.1", "0ther", "1" * 64)
    other_python = Interpreter(
        "3.99.0", facts.torch_version, facts.torch_git, facts.torch_build_sha
    )
    keys = {
        spec.key(facts),
        spec.key(other_build),
        spec.key(other_python),
        spec.key(Interpreter(facts.python, None, None, None)),
    }
    assert len(keys) == 4
    assert spec.key(facts) == spec.key(facts)


def test_a_failing_script_is_a_warning_and_its_partial_trace_is_shown(
    make_site: SiteMaker, tmp_path: Path, counted: Path
) -> None:
    app = make_site("capture", pages=capture_page("   :env: CAPTURE_HOW=fail\n"))
    (warning,) = strip_colors(warnings_of(app)).splitlines()
    assert re.match(
        r"^.*index\.rst:4: WARNING: capture of scripts/write_trace\.py failed "
        r"\(exit status 3\) after [\d.]+ s; the trace it wrote so far is shown; "
        r"its stderr ends: .*\[torchtrace\.capture\]$",
        warning,
    ), warning
    # stderr is data: its escape sequence is shown, never sent to the terminal
    assert "RuntimeError: boom \\x1b[31mred\\x1b[0m" in warning and "\x1b" not in warning
    assert "torchtrace/live/index" in generated_pages(app)  # the partial trace's report
    text = page_text(app)
    assert "failed (exit status 3)" in text and "RuntimeError: boom" in text
    assert "Trace live, at a glance:" in text

    again = make_site("capture", srcdir=Path(app.srcdir), freshenv=False)
    assert len(runs(counted)) == 1  # a failure is cached like a success: the same inputs
    assert "failed (exit status 3) (cached)" in warnings_of(again)


def test_a_script_that_writes_no_trace_says_so(make_site: SiteMaker, counted: Path) -> None:
    app = make_site("capture", pages=capture_page("   :env: CAPTURE_HOW=none\n"))
    (warning,) = strip_colors(warnings_of(app)).splitlines()
    assert warning.endswith(
        "WARNING: capture of scripts/write_trace.py ran but wrote no "
        "trace log (does it call torch.compile?) [torchtrace.capture]"
    )
    assert "It wrote no trace log." in page_text(app) and generated_pages(app) == []


def test_a_capture_past_its_timeout_is_stopped(make_site: SiteMaker, counted: Path) -> None:
    started = time.monotonic()
    app = make_site("capture", pages=capture_page("   :env: CAPTURE_HOW=hang\n   :timeout: 3\n"))
    assert time.monotonic() - started < 60
    (warning,) = strip_colors(warnings_of(app)).splitlines()
    assert "capture of scripts/write_trace.py timed out (stopped) after 3." in warning
    assert "the trace it wrote so far is shown" in warning
    assert warning.endswith("[torchtrace.capture]")
    assert "torchtrace/live/index" in generated_pages(app)
    assert "timed out" in page_text(app)


def test_never_uses_the_cache_only(make_site: SiteMaker, tmp_path: Path, counted: Path) -> None:
    cache = tmp_path / "ci-cache"
    never = {"torchtrace_capture": "never", "torchtrace_capture_cache": str(cache)}
    empty = make_site("capture", confoverrides=never)
    (warning,) = strip_colors(warnings_of(empty)).splitlines()
    assert "index.rst:4: WARNING: no cached capture of scripts/write_trace.py matches" in warning
    assert warning.endswith("(torchtrace_capture = 'never') [torchtrace.capture]")
    assert runs(counted) == [] and generated_pages(empty) == []
    assert re.search(r"index scripts/write_trace\.py missing - no cached capture", page_text(empty))

    # CI captured into the folder it persists; the docs host only reads it
    make_site("capture", confoverrides={"torchtrace_capture_cache": str(cache)})
    assert len(runs(counted)) == 1
    served = make_site("capture", confoverrides=never)
    assert warnings_of(served) == "" and len(runs(counted)) == 1
    assert "torchtrace/live/index" in generated_pages(served)
    always = make_site("capture", confoverrides={**never, "torchtrace_capture": "always"})
    assert len(runs(counted)) == 2 and warnings_of(always) == ""


def test_never_on_a_host_without_torch_publishes_what_ci_captured(
    make_site: SiteMaker, tmp_path: Path, counted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI (torch installed) captures into the folder it persists; a docs host with another
    Python and no torch, in ``never`` mode, finds the capture of the same code."""
    from sphinx_torchtrace.trace.inputs import capture

    cache = {"torchtrace_capture_cache": str(tmp_path / "ci-cache")}
    monkeypatch.setattr(
        capture,
        "interpreter_facts",
        lambda *_a, **_k: Interpreter("3.12.1", "2.13.0+cpu", "abc", "f" * 64),
    )
    make_site("capture", confoverrides=cache)
    assert len(runs(counted)) == 1
    monkeypatch.setattr(
        capture, "interpreter_facts", lambda *_a, **_k: Interpreter("3.11.9", None, None, None)
    )
    host = make_site("capture", confoverrides={**cache, "torchtrace_capture": "never"})
    assert warnings_of(host) == "" and len(runs(counted)) == 1
    assert "from the cache (captured " in page_text(host)
    assert "with torch 2.13.0+cpu" in page_text(host)
    assert "torchtrace/live/frame-0-0" in generated_pages(host)


def test_two_builds_share_one_cache(tmp_path: Path, counted: Path) -> None:
    """Two ``sphinx-build`` processes at once, one cache folder: the script runs once
    (the other build waits for its entry), and both sites show the report."""
    cache = tmp_path / "shared-cache"
    sites = [copy_testroot("capture", tmp_path / f"site{i}") for i in (1, 2)]
    env = {**os.environ, "PYTHONPATH": str(REPO), "CAPTURE_SLEEP": "2"}
    builds = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sphinx",
                "-q",
                "-b",
                "html",
                "-D",
                f"torchtrace_capture_cache={cache}",
                str(site),
                str(site / "_build"),
            ],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for site in sites
    ]
    for build in builds:
        _out, err = build.communicate(timeout=300)
        assert build.returncode == 0, err
        assert "WARNING" not in err, err
    assert len(runs(counted)) == 1
    entries = [p for p in cache.iterdir() if p.name != ".locks"]
    assert len(entries) == 1, entries  # no temporary folder left behind
    for site in sites:
        assert (site / "_build" / "torchtrace" / "live" / "frame-0-0.html").is_file()


def test_a_myst_page_captures_with_arguments(
    make_site: SiteMaker, tmp_path: Path, counted: Path
) -> None:
    """MyST's fenced directive works as rST's; ``:args:`` is split as a shell would, the
    script runs in its own folder unless ``:cwd:`` says."""
    srcdir = copy_testroot("capture", tmp_path / "site")
    (srcdir / "conf.py").write_text(
        'project = "c"\nextensions = ["myst_parser", "sphinx_torchtrace"]\n', encoding="utf-8"
    )
    (srcdir / "index.rst").unlink()
    (srcdir / "index.md").write_text(
        "# Captured\n\n```{torchtrace-capture} scripts/write_trace.py\n:name: live\n"
        ':args: one "two words"\n:cwd: .\n```\n\n```{torchtrace-captures}\n```\n',
        encoding="utf-8",
    )
    app = make_site("capture", srcdir=srcdir)
    assert warnings_of(app) == ""
    assert runs(counted) == [f"ok ['one', 'two words'] {srcdir}"]
    assert (Path(app.outdir) / "torchtrace" / "live" / "index.html").is_file()
    assert re.search(r"index scripts/write_trace\.py ran [\d.]+ s ok", page_text(app))


def test_a_script_outside_the_sources_is_never_run(
    make_site: SiteMaker, tmp_path: Path, counted: Path
) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("open('ran', 'w')\n")
    # the copy of the test root is tmp_path/capture-0: the script is one folder up
    app = make_site(
        "capture", pages={"index.rst": "T\n=\n\n.. torchtrace-capture:: ../outside.py\n"}
    )
    (warning,) = strip_colors(warnings_of(app)).splitlines()
    assert "only scripts of the docs' sources are run [torchtrace.capture]" in warning
    assert not (tmp_path / "ran").exists()


def test_without_torch_a_torch_script_is_a_note_not_a_warning(
    make_site: SiteMaker, tmp_path: Path, counted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A docs build where torch is not installed (the README's quick demo) skips a script
    that imports torch, says so where the report would be, and still passes -W; a plain
    script (no torch import) still runs."""
    from sphinx_torchtrace.trace.inputs import capture

    monkeypatch.setattr(
        capture,
        "interpreter_facts",
        lambda *_args, **_kw: Interpreter(sys.version, None, None, None),
    )
    srcdir = copy_testroot("capture", tmp_path / "site")
    (srcdir / "scripts" / "needs_torch.py").write_text("import torch.nn\n", encoding="utf-8")
    app = make_site(
        "capture",
        srcdir=srcdir,
        pages={
            "index.rst": "T\n=\n\n.. torchtrace-capture:: scripts/needs_torch.py\n\n"
            ".. torchtrace-capture:: scripts/write_trace.py\n\n"
            ".. torchtrace-captures::\n"
        },
    )
    assert warnings_of(app) == ""
    text = page_text(app)
    assert (
        "Not captured in this build: scripts/needs_torch.py imports torch, which the "
        "Python building these docs cannot import"
    ) in text
    assert "index scripts/needs_torch.py skipped - torch not installed" in text
    assert len(runs(counted)) == 1 and "torchtrace/write-trace/index" in generated_pages(app)


def test_bad_capture_options_are_located_warnings(make_site: SiteMaker, counted: Path) -> None:
    app = make_site("capture", pages=capture_page("   :timeout: -1\n   :env: NOT-A-NAME\n"))
    (warning,) = strip_colors(warnings_of(app)).splitlines()
    assert "index.rst:4: WARNING: option :timeout: expected a number of seconds above 0" in warning
    assert warning.endswith("[torchtrace.option]") and runs(counted) == []


@pytest.mark.torch
def test_a_real_torch_compile_capture(make_site: SiteMaker, tmp_path: Path) -> None:
    """torch 2.13 CPU: a compiled function, captured at build time, is a report; the
    record names the torch that made it."""
    srcdir = copy_testroot("capture", tmp_path / "site")
    (srcdir / "scripts" / "compiled.py").write_text(
        "import torch\n\n\n@torch.compile(backend='aot_eager')\ndef f(x):\n"
        "    return torch.relu(x) * 2\n\n\nf(torch.randn(8))\n",
        encoding="utf-8",
    )
    app = make_site(
        "capture",
        srcdir=srcdir,
        pages={
            "index.rst": "T\n=\n\n.. torchtrace-capture:: scripts/compiled.py\n\n"
            ".. torchtrace-captures::\n"
        },
    )
    assert warnings_of(app) == ""
    assert "torchtrace/compiled/frame-0-0" in generated_pages(app)
    text = page_text(app)
    assert "1 ok" in text and re.search(r"scripts/compiled\.py ran [\d.]+ s ok", text)
    (record,) = Path(app.doctreedir).glob("torchtrace-captures/*/record.json")
    made = record.read_text()
    assert f'"torch_version": "{importlib.metadata.version("torch")}"' in made

    again = make_site("capture", srcdir=srcdir, freshenv=False)  # unchanged: the cache
    assert warnings_of(again) == "" and record.read_text() == made
    assert re.search(r"scripts/compiled\.py cached [\d.]+ s ok", page_text(again))


def test_entries_unused_for_a_month_are_removed(
    make_site: SiteMaker, tmp_path: Path, counted: Path
) -> None:
    cache = tmp_path / "cache"
    conf = {"torchtrace_capture_cache": str(cache)}
    srcdir = copy_testroot("capture", tmp_path / "site")
    make_site("capture", srcdir=srcdir, confoverrides=conf)
    (used,) = [p for p in cache.iterdir() if not p.name.startswith(".")]
    stale = cache / ("0" * 64)
    (stale / "trace").mkdir(parents=True)
    (stale / "record.json").write_text("{}")
    old = time.time() - 31 * 86400
    os.utime(stale / "record.json", (old, old))
    os.utime(used / "record.json", (old, old))  # old, but found by this build: kept
    again = make_site("capture", srcdir=srcdir, freshenv=False, confoverrides=conf)
    assert warnings_of(again) == "" and len(runs(counted)) == 1
    assert sorted(p.name for p in cache.iterdir() if not p.name.startswith(".")) == [used.name]


def test_without_flock_a_lock_file_is_taken_over_when_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where ``fcntl`` is missing (Windows), a key's lock is a file made with O_EXCL: a build
    waits while another holds it, and takes over one its holder left behind long ago."""
    import threading

    from sphinx_torchtrace.trace.inputs.capture import LOCKS, CaptureCache

    monkeypatch.setitem(sys.modules, "fcntl", None)  # import fcntl raises ImportError
    cache = CaptureCache(tmp_path / "cache", stale_after=30)
    lock = tmp_path / "cache" / LOCKS / "k.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("12345")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    with cache._lock("k", timeout=1):  # stale: taken over at once
        assert lock.exists()
    assert not lock.exists()

    lock.write_text("12345")  # a live holder: wait for it
    taken = threading.Event()

    def take() -> None:
        with cache._lock("k", timeout=1):
            taken.set()

    waiter = threading.Thread(target=take)
    waiter.start()
    assert not taken.wait(1.0)
    lock.unlink()
    assert taken.wait(10.0)
    waiter.join()


@pytest.mark.torch
def test_a_capture_with_runtime_shows_what_ran(make_site: SiteMaker, tmp_path: Path) -> None:
    """``:runtime:``: the capture is profiled as ``run --runtime`` does; the report shows how
    often the compiled code ran, from the profile kept in the capture's entry."""
    srcdir = copy_testroot("capture", tmp_path / "site")
    (srcdir / "scripts" / "ran.py").write_text(
        "import torch\n\n\n@torch.compile(backend='aot_eager')\ndef f(x):\n"
        "    return torch.relu(x) * 2\n\n\nfor _ in range(3):\n    f(torch.randn(8))\n",
        encoding="utf-8",
    )
    app = make_site(
        "capture",
        srcdir=srcdir,
        pages={"index.rst": "T\n=\n\n.. torchtrace-capture:: scripts/ran.py\n   :runtime:\n"},
    )
    assert warnings_of(app) == ""
    (profile,) = Path(app.doctreedir).glob("torchtrace-captures/*/trace/runtime/profile-*.json.gz")
    assert "Ran: 1 compile id ran, 0 never ran" in page_text(app)  # the page's glance
    overview = (Path(app.outdir) / "torchtrace" / "ran" / "index.html").read_text()
    assert 'id="what-ran"' in overview and profile.name in overview
    frame = (Path(app.outdir) / "torchtrace" / "ran" / "frame-0-0.html").read_text()
    assert "Its compiled code ran 3 times" in frame


def test_runtime_is_part_of_a_captures_key_only_when_asked(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    plain = CaptureSpec(script=script, root=tmp_path).source_key()
    assert CaptureSpec(script=script, root=tmp_path, runtime=False).source_key() == plain
    whole = CaptureSpec(script=script, root=tmp_path, runtime=True).source_key()
    window = CaptureSpec(script=script, root=tmp_path, runtime=True, steps=(2, 4)).source_key()
    assert len({plain, whole, window}) == 3
