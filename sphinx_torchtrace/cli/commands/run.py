"""``run``: a program under ``TORCH_TRACE``, then the report of the trace it wrote.

The exit status is the program's (2 when no report could be made of a program that
succeeded); what it prints of the program's command line is masked as ``redact`` masks
a log.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ...trace.secrets import mask_secrets, secret_name
from ..common import InputError, error, interactive, note, open_page, rewrite_option, say

HELP = "run a program under TORCH_TRACE, then build its report"
DESCRIPTION = (
    "Run PROGRAM with TORCH_TRACE set to a new folder (its output streamed, "
    "Inductor's caches off), build the report of the trace it wrote as build does and "
    "print where it is.  The exit status is the program's (2 when no report could be "
    "made of a program that succeeded)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        default="torchtrace_out",
        help="output folder (default: ./torchtrace_out)",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument(
        "--open",
        action="store_true",
        help="open the report in a browser (the default on a terminal, not CI)",
    )
    shown.add_argument("--no-browser", action="store_true", help="do not open the report")
    shown.add_argument("--serve", action="store_true", help="then preview it on 127.0.0.1")
    parser.add_argument(
        "-p", "--port", type=int, default=8000, help="--serve's port (default 8000; 0: any)"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument(
        "--runtime",
        action="store_true",
        help="also profile the program with torch.profiler: how often each compiled region "
        "ran and how long (kept beside the trace, shown on the pages)",
    )
    parser.add_argument(
        "--steps",
        metavar="FIRST:LAST",
        help="with --runtime: profile optimizer steps FIRST to LAST only (bounds the "
        "profiler's cost on a long run; default: the whole run)",
    )
    parser.add_argument(
        "--worth-it",
        action="store_true",
        help="with --runtime: run the program again with every graph on the eager backend "
        "and show, per compile id, eager time against compiled time and compile time",
    )
    rewrite_option(parser)
    parser.add_argument(
        "program",
        metavar="-- PROGRAM",
        nargs=argparse.REMAINDER,
        help="the command to run, after --: python train.py --epochs 1",
    )


def run(args: argparse.Namespace) -> int:
    program = list(args.program)
    if program[:1] == ["--"]:
        program = program[1:]
    if not program:
        raise InputError("give the program to run after --: run -- python train.py")
    try:
        from ...sphinxext.cache_dirs import cache_home
        from ...sphinxext.standalone import StandaloneBuildError, build_site
    except ImportError:
        raise InputError("run needs Sphinx to build the report: pip install sphinx") from None
    steps = _steps(args)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    trace_dir = cache_home() / "runs" / f"{stamp}-{os.getpid()}"
    status = _traced_run(args, program, trace_dir, steps)
    if not any(trace_dir.glob("dedicated_log_torch_trace_*.log*")):
        error(f"the program wrote no trace log in {trace_dir} (does it run torch.compile?)")
        return status or 2
    try:
        # the folder made for the run is shown by its name, as a log folder given is
        rules = [*args.rewrite, (os.fspath(trace_dir), trace_dir.name)]
        index = build_site([trace_dir], Path(args.output), quiet=args.quiet, rewrites=rules)
    except StandaloneBuildError as e:
        error(str(e))
        return status or 2
    say(str(index))
    _show_report(args, index)
    return status


def _steps(args: argparse.Namespace) -> tuple[int, int] | None:
    """``--steps``, checked: only with ``--runtime``, as ``--worth-it``."""
    from ...trace.runtime import parse_steps

    if (args.steps or args.worth_it) and not args.runtime:
        raise InputError("--steps and --worth-it go with --runtime")
    try:
        return parse_steps(args.steps) if args.steps else None
    except ValueError as e:
        raise InputError(f"--steps: {e}") from None


def _traced_run(
    args: argparse.Namespace, program: list[str], trace_dir: Path, steps: tuple[int, int] | None
) -> int:
    """Run the program (then again on the eager backend, ``--worth-it``); its exit status."""
    from ...trace.inputs.capture import run_program
    from ...trace.runtime import RUNTIME_DIR, runtime_environment

    env = runtime_environment(trace_dir / RUNTIME_DIR, steps) if args.runtime else None
    if not args.quiet:
        note(f"TORCH_TRACE={trace_dir}")
        note(f"running {shown_command(program)}" + (" under torch.profiler" if env else ""))
    started = time.monotonic()
    try:
        returncode, _ = run_program(
            program,
            trace_dir,
            env=env,
            stdout=None,
            own_session=False,
            progress=None if args.quiet else _still_running(),
        )
    except OSError as e:
        raise InputError(f"cannot run {shown_command(program[:1])}: {e.strerror or e}") from None
    status = (
        returncode
        if returncode is not None and returncode >= 0
        else (128 - returncode if returncode is not None else 2)
    )
    if not args.quiet or status:
        note(f"the program exited with status {status} after {time.monotonic() - started:.1f} s")
    if args.worth_it:
        try:
            _eager_run(program, trace_dir, steps, args.quiet)
        except OSError as e:
            raise InputError(
                f"cannot run {shown_command(program[:1])}: {e.strerror or e}"
            ) from None
    if args.runtime and not any((trace_dir / RUNTIME_DIR).glob("profile-*.json.gz")):
        note(
            "no runtime profile was written: no compiled region ran while profiled"
            + (
                " (or --steps counted no optimizer step: a compiled opt.step() calls no hook)"
                if steps
                else ""
            )
        )
    return status


def _show_report(args: argparse.Namespace, index: Path) -> None:
    """Serve the report (``--serve``) or open it (``--open``, or at a terminal)."""
    if args.serve:
        from ...sphinxext.standalone import serve

        out = Path(args.output).resolve()
        try:
            serve(
                out,
                args.port,
                ready=lambda line: print(line, flush=True),
                page=index.relative_to(out).as_posix(),
            )
        except OSError as e:
            raise InputError(f"cannot serve on 127.0.0.1:{args.port}: {e.strerror or e}") from None
        except KeyboardInterrupt:
            pass
    elif args.open or (not args.no_browser and interactive()):
        open_page(index)


def _eager_run(
    program: list[str], trace_dir: Path, steps: tuple[int, int] | None, quiet: bool
) -> None:
    """The program again, every graph on the eager backend, profiled beside the first run
    (its own trace is left out: the report is the compiled run's)."""
    import shutil

    from ...trace.inputs.capture import run_program
    from ...trace.runtime import RUNTIME_DIR, runtime_environment

    if not quiet:
        note("running it again with every graph on the eager backend (--worth-it)")
    scratch = trace_dir.with_name(trace_dir.name + "-eager")
    try:
        run_program(
            program,
            scratch,
            env=runtime_environment(trace_dir / RUNTIME_DIR, steps, eager=True),
            stdout=subprocess.DEVNULL,
            own_session=False,
            progress=None if quiet else _still_running(),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _still_running() -> Callable[[float], None]:
    """A line now and then while the program runs (its own output may be silent for
    minutes): at 5, 10, 20, 40 and 60 s, then every minute, never a line every few seconds
    through a long training run."""
    marks = [5.0, 10.0, 20.0, 40.0, 60.0]

    def progress(elapsed: float) -> None:
        if elapsed + 0.5 < marks[0]:
            return
        note(f"the program is still running ({elapsed:.0f} s)")
        while marks[0] <= elapsed + 0.5:
            marks.append(marks[-1] + 60.0)
            marks.pop(0)

    return progress


#: What stands for a value the command line's own words say is secret.
_MASKED_ARG = "[secret masked]"
#: ``NAME=value`` (``env HF_TOKEN=… python …``) and ``--name=value``.
_ASSIGNMENT = re.compile(r"(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.-]{0,255})=")


def shown_command(program: Sequence[str]) -> str:
    """A program's command line as ``run`` prints it, with what a reader of the terminal or
    the CI log must not get masked: the value of an argument or assignment whose name says
    it is secret (``--token X``, ``--api-key=X``, ``HF_TOKEN=X``, by the rule that names
    environment variables), then every secret
    :data:`~sphinx_torchtrace.trace.secrets.mask_secrets` finds (a token, a key, a URL's
    password, a random string), as ``redact`` masks them."""
    words: list[str] = []
    after_secret_option = False
    for word in program:
        assignment = _ASSIGNMENT.match(word)
        if after_secret_option and not word.startswith("-"):
            word = _MASKED_ARG
        elif assignment is not None and secret_name(assignment["name"].lstrip("-")):
            word = assignment.group() + _MASKED_ARG
        after_secret_option = (
            word.startswith("-") and "=" not in word and secret_name(word.lstrip("-"))
        )
        words.append(word)
    return mask_secrets(shlex.join(words))
