"""Developer tasks: ``nox -s tests | demo | lint | types | bench | tests-torch``."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "types"]
nox.options.reuse_existing_virtualenvs = True

TORCH = "torch==2.13.0"  # a CPU build; plain `torch` would pull GBs of CUDA packages


@nox.session
def tests(session: nox.Session) -> None:
    """The whole suite but the tests that need torch."""
    session.install("-e", ".[test]")
    session.run("pytest", "-m", "not torch", *session.posargs)


@nox.session(name="tests-torch")
def tests_torch(session: nox.Session) -> None:
    """Tests that generate fresh traces with torch 2.13."""
    session.install("-e", ".[test]", TORCH)
    session.run("pytest", "-m", "torch", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """Build the demo docs from the bundled traces and say where they are."""
    session.install("-e", ".", "furo")
    out = "demo_docs/_build/html"
    session.run("sphinx-build", "-b", "html", "demo_docs", out, *session.posargs)
    session.log(f"Demo docs built: open {out}/index.html")


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", "sphinx_torchtrace", "tests", "benchmarks", "noxfile.py")


@nox.session
def types(session: nox.Session) -> None:
    session.install("-e", ".", "mypy", "types-docutils", "types-Pygments")
    session.run("mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Model and full-site build speed beside tlparse; makes a 30+ MB log with torch first."""
    session.install("-e", ".[test]", TORCH, "furo")
    session.run("python", "benchmarks/bench_model.py", *session.posargs)
    session.run("python", "benchmarks/bench_sphinx.py")
