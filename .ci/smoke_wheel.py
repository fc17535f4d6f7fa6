"""A smoke test of an installed sphinx-torchtrace, run from outside the source tree.

``nox -s package`` builds the sdist and the wheel, installs the wheel into a fresh
environment and runs this: the package must import from site-packages (not from a
checkout), carry its data files, and build a real site from a bundled trace with -W;
then every ``sphinx-torchtrace`` line of the CI recipes in the docs runs as written, with
the installed console script, on a bundled pair of real runs in place of the recipe's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import sphinx_torchtrace

LOG = Path(sys.argv[1]).resolve()  # a real trace log of the repository's tests
PAIR = Path(sys.argv[2]).resolve()  # a baseline/ and a new/ run of one program
RECIPES = [Path(p).resolve() for p in sys.argv[3:]]  # docs pages holding CI recipes
#: the runs a recipe compares, as the docs name them
RECIPE_RUNS = {"docs/traces/baseline": "baseline", "docs/traces/new": "new"}


def main() -> int:
    where = Path(sphinx_torchtrace.__file__).parent
    assert "site-packages" in where.parts, f"imported from {where}, not the installed wheel"
    for data in ("py.typed", "static/sphinx-torchtrace.css", "schemas/diff.schema.json"):
        assert (where / data).is_file(), f"the wheel lacks {data}"
    version = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert sphinx_torchtrace.__version__ in version, version
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "docs"
        src.mkdir()
        shutil.copy(LOG, src / "run.log")
        (src / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\n', encoding="utf-8")
        (src / "index.rst").write_text(
            "Report\n======\n\n.. torchtrace:: run.log\n   :name: run\n", encoding="utf-8"
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "sphinx",
                "-W",
                "-q",
                "-b",
                "html",
                str(src),
                str(Path(tmp) / "html"),
            ],
            check=True,
        )
        assert (Path(tmp) / "html" / "torchtrace" / "run" / "index.html").is_file()
        summary = subprocess.run(
            [sys.executable, "-m", "sphinx_torchtrace", "summary", str(src / "run.log")],
            capture_output=True,
            text=True,
            check=True,
        )
        assert summary.stdout.strip(), "summary printed nothing"
    ran = run_recipes()
    print(
        f"sphinx-torchtrace {sphinx_torchtrace.__version__}: the installed wheel builds a site; "
        f"{ran} recipe command(s) ran as written"
    )
    return 0


def run_recipes() -> int:
    """Each ``sphinx-torchtrace diff`` line of the recipes, its shell redirection left out:
    the options parse and the gate answers 0 or 1 (never 2, a usage error)."""
    script = Path(sys.executable).with_name("sphinx-torchtrace")
    assert script.is_file(), f"the wheel installed no {script.name} command"
    ran = 0
    for page in RECIPES:
        for line in page.read_text(encoding="utf-8").splitlines():
            match = re.search(r"(?:^|\s)(sphinx-torchtrace diff [^>|]*)", line)
            if match is None or "``" in line:
                continue
            words = match.group(1).split()
            words = [str(PAIR / RECIPE_RUNS[w]) if w in RECIPE_RUNS else w for w in words]
            result = subprocess.run([str(script), *words[1:]], capture_output=True, text=True)
            assert result.returncode in (0, 1), (line, result.stderr)
            assert result.stdout.strip(), line
            ran += 1
    assert ran or not RECIPES, "no recipe command found"
    return ran


if __name__ == "__main__":
    sys.exit(main())
