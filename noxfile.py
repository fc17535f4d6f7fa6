"""Developer tasks: ``nox -s tests | tests-matrix | demo | lint | types | package | bench |
tests-torch`` (from a fresh clone: ``python3 bootstrap.py SESSION``)."""

from __future__ import annotations

import glob
import os
import re
import shutil

import nox

nox.options.sessions = ["tests", "lint", "types"]
nox.options.reuse_existing_virtualenvs = True

TORCH = "torch==2.13.0"  # a CPU build; plain `torch` would pull GBs of CUDA packages
LOWEST = "tests/constraints-lowest.txt"
#: The matrix leaves out what does not follow the Sphinx stack's versions or costs too much
#: to repeat at each end: browser tests (one Chromium), TeX runs, snapshots (pinned to the
#: default environment's docutils) and the sites built from the whole corpus.
MATRIX_PYTEST = [
    "-m",
    "not torch and not snapshot and not latexpdf and not corpus and not corpus_slow",
    "--ignore=tests/browser",
]


def interpreter(minor: int) -> str:
    """Python 3.<minor>, as a full path where pyenv built one.

    pyenv's shims fail for a version that is not selected, and nox would try to download an
    interpreter it cannot find; elsewhere (CI images) ``python3.<minor>`` on PATH is used.
    """
    pattern = os.path.expanduser(f"~/.pyenv/versions/3.{minor}.*/bin/python3.{minor}")
    builds = [path for path in glob.glob(pattern) if re.search(rf"/3\.{minor}\.\d+/bin/", path)]
    if builds:
        return max(builds, key=_patch_level)
    return shutil.which(f"python3.{minor}") or f"python3.{minor}"


def _patch_level(path: str) -> int:
    """3.10.13 above 3.10.9: patch levels compare as numbers, not as text."""
    match = re.search(r"/3\.\d+\.(\d+)/bin/", path)
    return int(match.group(1)) if match else -1


#: What ruff lints and formats (tests/capture's programs stay as they ran: pyproject.toml).
LINTED = [
    "sphinx_torchtrace",
    "tests",
    "benchmarks",
    "noxfile.py",
    "bootstrap.py",
    ".ci/smoke_wheel.py",
    "demo_docs/_ext",
]

PY310 = interpreter(10)
PY313 = interpreter(13)


def newest_python() -> str | None:
    """The newest declared Python this machine has (3.13 down to 3.10), or None for nox's own.

    The README's test line runs on it under the newest releases of every dependency, so
    on a machine with 3.13 (CI's) it is the newest end of the matrix as well.
    """
    for minor in (13, 12, 11, 10):
        path = interpreter(minor)
        if os.path.isabs(path) and os.access(path, os.X_OK):
            return path
    return None


@nox.session(python=newest_python())
def tests(session: nox.Session) -> None:
    """The whole suite but the tests that need torch, browser tests and corpus sites included,
    on two workers (the corpus sites and the browser site build once per worker), on the
    newest Python found, under the newest releases (CI's newest end of the matrix)."""
    session.install("-e", ".[test,browser]", "pytest-xdist")
    session.run("pytest", "-n", "2", "-m", "not torch and not corpus_slow", *session.posargs)


@nox.session(name="corpus-builders")
def corpus_builders(session: nox.Session) -> None:
    """The slow checks over every bundled trace: a PDF of each (latexmk), an EPUB of
    each, the whole corpus on one single page, and each log redacted and read back by
    tlparse; CI runs a sample of each (``tests``).  Run before resolving an issue that
    touches what they check."""
    session.install("-e", ".[test]", "pytest-xdist")
    session.run("pytest", "-n", "2", "-m", "corpus_slow", *session.posargs)


@nox.session(name="tests-matrix")
@nox.parametrize(
    ("python", "deps"),
    [(PY310, "lowest"), (PY313, "newest")],
    ids=["3.10-lowest", "3.13-newest"],
)
def tests_matrix(session: nox.Session, deps: str) -> None:
    """The suite at both ends of what pyproject.toml declares: the oldest Python under the
    declared floors, the newest Python under the newest releases.  Two workers, as ``tests``.

    ``nox -s "tests-matrix(3.10-lowest)"`` runs one; extra arguments go to pytest, e.g.
    ``nox -s tests-matrix -- tests/test_sphinx_build.py``.
    """
    constraints = ["-c", LOWEST] if deps == "lowest" else ["--upgrade", "--upgrade-strategy=eager"]
    session.install(*constraints, "-e", ".[test]", "pytest-xdist")
    session.run("python", "-m", "pip", "list", "--format=freeze")  # which versions ran
    session.run("pytest", "-n", "2", *MATRIX_PYTEST, *session.posargs)


@nox.session(name="tests-torch")
def tests_torch(session: nox.Session) -> None:
    """Tests that generate fresh traces with torch 2.13."""
    session.install("-e", ".[test]", TORCH)
    session.run("pytest", "-m", "torch", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """Build the demo docs from the bundled traces and say where they are."""
    session.install("-e", ".[docs]")
    out = "demo_docs/_build/html"  # the doctrees beside it, as sphinx-build -M keeps them
    session.run(
        "sphinx-build",
        "-b",
        "html",
        "-d",
        "demo_docs/_build/doctrees",
        "demo_docs",
        out,
        *session.posargs,
    )
    session.log(f"Demo docs built: open {out}/index.html")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff's lint and its formatter (checked, not applied: ``ruff format`` applies it), and
    the layer contracts of pyproject.toml's ``[tool.importlinter]``; the same checks as the
    pre-commit hooks (``.pre-commit-config.yaml``)."""
    session.install("ruff", "import-linter")
    session.run("ruff", "check", *LINTED)
    session.run("ruff", "format", "--check", *LINTED)
    session.run("lint-imports")


@nox.session
def types(session: nox.Session) -> None:
    session.install("-e", ".", "mypy", "types-docutils", "types-Pygments")
    session.run("mypy")


@nox.session
def package(session: nox.Session) -> None:
    """The release artefacts: ``python -m build`` makes the sdist and the wheel, the wheel
    is installed into this session's fresh environment (not the checkout) and builds a real
    site from a bundled trace with -W, and the CI recipes' commands run as written with its
    console script; the sdist must hold the changelog and the licence."""
    import tarfile

    shutil.rmtree("dist", ignore_errors=True)
    session.install("build")
    session.run("python", "-m", "build", "--outdir", "dist", ".")
    (wheel,) = glob.glob("dist/sphinx_torchtrace-*.whl")
    (sdist,) = glob.glob("dist/sphinx_torchtrace-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[-1] for name in archive.getnames()}
    missing = {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml"} - names
    if missing:
        session.error(f"the sdist lacks {', '.join(sorted(missing))}")
    session.install(wheel)
    session.install("--force-reinstall", "--no-deps", wheel)  # a reused env holds an older one
    log = os.path.abspath(glob.glob("tests/data/shared/graph_breaks/*.log")[0])
    pair = os.path.abspath("tests/data/captured/pairs/recompile")
    recipes = [
        os.path.abspath(p) for p in ("demo_docs/guide/ci.rst", "demo_docs/guide/live_capture.rst")
    ]
    smoke = os.path.abspath(".ci/smoke_wheel.py")
    with session.chdir(session.create_tmp()):  # away from the checkout's package
        session.run("python", smoke, log, pair, *recipes)


@nox.session
def bench(session: nox.Session) -> None:
    """Model and full-site build speed beside tlparse; makes a 30+ MB log with torch first."""
    session.install("-e", ".[test]", TORCH, "furo")
    session.run("python", "benchmarks/bench_model.py", *session.posargs)
    session.run("python", "benchmarks/bench_sphinx.py")


@nox.session
def mutation(session: nox.Session) -> None:
    """10,000 mutated real logs through model and pages, 200 of them built by Sphinx.

    Not in the default sessions (minutes). A quick run: ``nox -s mutation -- --mutants 500
    --builds 10``; ``--seed N`` picks another campaign.
    """
    session.install("-e", ".[test]")
    session.run("python", "benchmarks/mutation_campaign.py", *session.posargs)


@nox.session
def generate(session: nox.Session) -> None:
    """10,000 inputs written from scratch (every record kind, hostile values, odd orders,
    every input kind) through model and pages, 90 of them built by every builder in turn.

    Not in the default sessions (minutes to hours). A quick run: ``nox -s generate --
    --inputs 500 --builds 9``; ``--seed N`` picks another campaign, ``--workers N`` shares
    it between processes, ``--only N --keep DIR`` writes input N again to look at.
    """
    session.install("-e", ".[test]")
    session.run("python", "benchmarks/generate_campaign.py", *session.posargs)


@nox.session
def leaks(session: nox.Session) -> None:
    """50,000 canaries of every secret shape planted in every place of every input kind,
    through check, redact, bundle and a default build, on two processes: none may survive
    (``tests/leaks``; CI runs a sample of it).

    Not in the default sessions (minutes). A quick run: ``nox -s leaks -- --canaries 5000``;
    ``--seed N`` picks another campaign, ``--kinds``/``--shapes`` narrow it, ``--only N
    --keep DIR`` writes input N again with its outputs to look at.
    """
    session.install("-e", ".[test]")
    session.run("python", "-m", "tests.leaks", "--workers", "2", *session.posargs)


@nox.session
def programs(session: nox.Session) -> None:
    """500 generated torch programs (every guard source, a device move, closure cells,
    recompile limits with and without fullgraph, error_on_recompile, stances, raised and
    suppressed errors, graph breaks, dynamic sizes, nested compile regions, calls from
    threads, resets) run under TORCH_TRACE: what summary, the recompile table and each frame
    page say must agree with what each program did (``tests/programs``; CI runs a sample).

    Not in the default sessions (an hour on two cores). A quick run: ``nox -s programs --
    --programs 100``; ``--seed N`` picks another campaign, ``--keep DIR`` keeps each program
    that disagrees with its trace, ``--only N --keep DIR`` runs program N again.
    """
    session.install("-e", ".[test]", TORCH)
    session.run("python", "-m", "tests.programs", "--workers", "2", "--progress", *session.posargs)
