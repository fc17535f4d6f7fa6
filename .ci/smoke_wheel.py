"""A smoke test of an installed sphinx-torchtrace, run from outside the source tree.

``nox -s package`` builds the sdist and the wheel, installs the wheel into a fresh
environment and runs this: the package must import from site-packages (not from a
checkout), carry its data files, and build a real site from a bundled trace with -W.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import sphinx_torchtrace

LOG = Path(sys.argv[1]).resolve()  # a real trace log of the repository's tests


def main() -> int:
    where = Path(sphinx_torchtrace.__file__).parent
    assert "site-packages" in where.parts, f"imported from {where}, not the installed wheel"
    for data in ("py.typed", "static/sphinx-torchtrace.css", "schemas/diff.schema.json"):
        assert (where / data).is_file(), f"the wheel lacks {data}"
    version = subprocess.run([sys.executable, "-m", "sphinx_torchtrace", "--version"],
                             capture_output=True, text=True, check=True).stdout
    assert sphinx_torchtrace.__version__ in version, version
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "docs"
        src.mkdir()
        shutil.copy(LOG, src / "run.log")
        (src / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\n', encoding="utf-8")
        (src / "index.rst").write_text(
            "Report\n======\n\n.. torchtrace:: run.log\n   :name: run\n", encoding="utf-8")
        subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", str(src),
                        str(Path(tmp) / "html")], check=True)
        assert (Path(tmp) / "html" / "torchtrace" / "run" / "index.html").is_file()
        summary = subprocess.run([sys.executable, "-m", "sphinx_torchtrace", "summary",
                                  str(src / "run.log")], capture_output=True, text=True, check=True)
        assert summary.stdout.strip(), "summary printed nothing"
    print(f"sphinx-torchtrace {sphinx_torchtrace.__version__}: the installed wheel builds a site")
    return 0


if __name__ == "__main__":
    sys.exit(main())
