"""The recipes a user copies work as written, as far as this machine can run them.

Every YAML recipe of the docs (GitHub Actions, Read the Docs) parses; PyTorch is always
its CPU build from PyTorch's index (the default wheel brings gigabytes of CUDA); a job
that gates on a comparison builds and uploads its report first (``if: always()``), so a
regression still leaves a report to read; and each ``sphinx-torchtrace`` command of a
recipe runs, on a bundled pair of real runs, with the options it is written with.  The
project's own Read the Docs build installs CPU torch, so its "captured at build time"
page captures; the release workflow publishes with trusted publishing, no token.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import DATA

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "demo_docs"
PAIR = DATA / "captured" / "pairs" / "graph_break_fixed"
CPU_INDEX = "--extra-index-url https://download.pytorch.org/whl/cpu"
_BLOCK = re.compile(r"^\.\. code-block:: yaml\n((?:\n|   .*\n)+)", re.M)


def yaml_recipes() -> list[tuple[str, str]]:
    """(where, text) of every YAML code block of the docs' rST pages."""
    found = []
    for page in sorted(DOCS.rglob("*.rst")):
        if "_build" in page.parts or "torchtrace" in page.relative_to(DOCS).parts[:1]:
            continue
        text = page.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{page.relative_to(ROOT)}:{line}", textwrap.dedent(match.group(1))))
    return found


RECIPES = yaml_recipes()


def commands(recipe: Any) -> list[str]:
    """Every shell line of a workflow's ``run:`` steps or a Read the Docs job."""
    lines: list[str] = []
    for steps in _steps(recipe):
        for step in steps:
            lines.extend(str(step.get("run", "")).splitlines())
    if not isinstance(recipe, dict):
        return [line.strip() for line in lines if line.strip()]
    for job_lines in ((recipe.get("build") or {}).get("jobs") or {}).values():
        lines.extend(job_lines)
    return [line.strip() for line in lines if line.strip()]


def _steps(recipe: Any) -> list[list[dict[str, Any]]]:
    """Each job's steps; a recipe that shows only some steps is one job's."""
    if isinstance(recipe, list):
        return [recipe]
    return [
        job.get("steps", []) for job in (recipe.get("jobs") or {}).values() if isinstance(job, dict)
    ]


def torch_installs(lines: list[str]) -> list[str]:
    return [
        line
        for line in lines
        if re.match(r"(?:python -m )?pip install", line)
        and re.search(r"(?<![\w-])torch(?![\w-])", line)
    ]


def test_the_docs_have_recipes_for_both_services() -> None:
    texts = "".join(text for _, text in RECIPES)
    assert "runs-on:" in texts and "sphinx:" in texts  # GitHub Actions and Read the Docs
    assert len(RECIPES) >= 3


@pytest.mark.parametrize(("where", "text"), RECIPES, ids=[w for w, _ in RECIPES])
def test_a_recipe_parses_and_installs_cpu_torch(where: str, text: str) -> None:
    recipe = yaml.safe_load(text)
    assert isinstance(recipe, (dict, list)), where
    for line in torch_installs(commands(recipe)):
        assert re.search(r"torch==[\d.]+\+cpu", line) and CPU_INDEX in line, (where, line)


@pytest.mark.parametrize(("where", "text"), RECIPES, ids=[w for w, _ in RECIPES])
def test_a_gate_comes_after_its_report_is_built_and_uploaded(where: str, text: str) -> None:
    recipe = yaml.safe_load(text)
    if isinstance(recipe, dict) and "--fail-on" in " ".join(
        ((recipe.get("build") or {}).get("jobs") or {}).get("pre_build", [])
    ):
        pytest.fail(f"{where}: a Read the Docs gate fails the build before the report")
    for steps in _steps(recipe):
        gates = [i for i, s in enumerate(steps) if "--fail-on" in str(s.get("run", ""))]
        if not gates:
            continue
        builds = [i for i, s in enumerate(steps) if "sphinx-build" in str(s.get("run", ""))]
        uploads = [
            i
            for i, s in enumerate(steps)
            if str(s.get("uses", "")).startswith("actions/upload-artifact")
        ]
        assert builds and uploads, f"{where}: a gate with no report"
        assert max(builds) < min(gates) and max(uploads) < min(gates), where
        assert all(steps[i].get("if") == "always()" for i in uploads), where


def recipe_cli_lines() -> list[tuple[str, str]]:
    return [
        (where, line)
        for where, text in RECIPES
        for line in commands(yaml.safe_load(text))
        if line.startswith("sphinx-torchtrace ")
    ]


@pytest.mark.parametrize(
    ("where", "line"), recipe_cli_lines(), ids=[w for w, _ in recipe_cli_lines()]
)
def test_a_recipes_command_runs_as_written(where: str, line: str, tmp_path: Path) -> None:
    """The recipe's own words, its two runs replaced by a bundled pair of real runs: the
    options parse (no usage error, exit 2) and the gate answers 0 or 1."""
    words = list(shlex.shlex(line, posix=True, punctuation_chars=True))
    operators = [i for i, w in enumerate(words) if w in (">", ">>", "|", "||", "&&", ";")]
    args = words[1 : operators[0] if operators else None]  # the command, not the shell's part
    assert args[0] == "diff", line
    paths = [
        i
        for i, a in enumerate(args)
        if i > 0 and not a.startswith("-") and (i == 1 or not args[i - 1].startswith("-"))
    ][:2]
    args[paths[0]], args[paths[1]] = str(PAIR / "baseline"), str(PAIR / "new")
    result = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode in (0, 1), (where, result.stderr)
    assert result.stdout.strip(), where


def test_the_projects_read_the_docs_build_captures_with_cpu_torch() -> None:
    """Without torch the demo's flagship page says "Not captured in this build"."""
    config = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text(encoding="utf-8"))
    installs = torch_installs(commands(config))
    assert installs and all("+cpu" in line and CPU_INDEX in line for line in installs)
    assert config["sphinx"]["configuration"] == "demo_docs/conf.py"
    assert ".. torchtrace-capture::" in (DOCS / "traces" / "live_capture.rst").read_text(
        encoding="utf-8"
    )


def test_the_release_workflow_publishes_with_trusted_publishing() -> None:
    workflow = yaml.safe_load(
        (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    )
    publish = workflow["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"}
    (step,) = [s for s in publish["steps"] if "pypi-publish" in str(s.get("uses", ""))]
    assert "password" not in str(step) and "token" not in str(step.get("with", {}))
    build = " ".join(commands(workflow))
    assert "bootstrap.py package" in build  # the sdist and the wheel, smoke-tested


def test_the_version_is_set_once_and_has_its_changelog_section() -> None:
    from sphinx_torchtrace import __version__

    version_file = (ROOT / "sphinx_torchtrace" / "version.py").read_text(encoding="utf-8")
    assert f'__version__ = "{__version__}"' in version_file
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and "sphinx_torchtrace.version.__version__" in (
        pyproject
    )
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## {re.escape(__version__)} - \d{{4}}-\d\d-\d\d$", changelog, re.M)
    assert changelog.index("## Unreleased") < changelog.index(f"## {__version__} ")


def test_the_readme_opens_with_the_bootstrap_lines_ci_runs() -> None:
    """The README's two first commands are the ones CI runs, and need no installed pip."""
    first = (ROOT / "README.md").read_text(encoding="utf-8").split("\n\n")[1]
    assert [line.split("#")[0].strip() for line in first.splitlines()] == [
        "python3 bootstrap.py demo",
        "python3 bootstrap.py tests",
    ]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python3 bootstrap.py tests" in ci and "bootstrap.py demo" in ci
