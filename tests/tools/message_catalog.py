"""The template of the extension's message catalog, from the ``_("...")`` calls of the
package: ``python -m tests.tools.message_catalog > sphinx_torchtrace/locale/sphinx_torchtrace.pot``.

A test checks the committed template against this, so it never falls behind the code.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "sphinx_torchtrace"

HEADER = """\
# The words of sphinx-torchtrace's generated pages (a template: copy it to
# <locale_dirs>/<lang>/LC_MESSAGES/sphinx_torchtrace.po, translate, compile to .mo).
msgid ""
msgstr ""
"Project-Id-Version: sphinx-torchtrace\\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"""


def messages() -> dict[str, list[str]]:
    """Each message of a ``_("...")`` call, with the places that use it, in file order."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "_"
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                place = f"{path.relative_to(PACKAGE.parent).as_posix()}:{node.lineno}"
                found.setdefault(node.args[0].value, []).append(place)
    return found


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def template() -> str:
    entries = [HEADER]
    for message in sorted(messages()):
        entries.append(f'msgid {_quoted(message)}\nmsgstr ""\n')
    return "\n".join(entries)


if __name__ == "__main__":
    sys.stdout.write(template())
