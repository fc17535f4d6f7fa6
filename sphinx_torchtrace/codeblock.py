"""``torchtrace-code``: the code blocks of generated pages, without directive options.

A generated page of a big trace holds many code blocks (graphs, kernels, stack
traces).  ``code-block`` and ``literalinclude`` read their options as a field
list, and docutils builds a nested state machine for every field list: that
cost more than the blocks themselves.  Our templates write the settings as
words after the language instead, and the node is the one ``code-block`` makes,
so highlighting, builders and themes see no difference::

    .. torchtrace-code:: python linenos start=1204 emphasize=4 fast include=../_raw/x.txt

Words: ``linenos``; ``start=N`` (first line number); ``emphasize=1,4`` (lines of
the block, from 1); ``fast`` (HTML without Pygments, see :mod:`.fastcode`);
``searchable`` (else the block is left out of the search index); ``include=PATH``
(the text of a generated side file, relative to the page, instead of content).
"""

from __future__ import annotations

from typing import ClassVar

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from .fastcode import FAST_CLASS

_FLAGS = frozenset({"linenos", "fast", "searchable"})
_SETTINGS = frozenset({"start", "emphasize", "include"})


class TorchTraceCode(SphinxDirective):
    has_content = True
    required_arguments = 1
    optional_arguments = 8
    option_spec: ClassVar[None] = None  # settings are arguments: see the module docstring

    def run(self) -> list[nodes.Node]:
        language, *words = self.arguments
        flags = {w for w in words if "=" not in w}
        settings = dict(w.split("=", 1) for w in words if "=" in w)
        unknown = (flags - _FLAGS) | (settings.keys() - _SETTINGS)
        if unknown:
            raise self.error(f"torchtrace-code: unknown settings {sorted(unknown)}")
        if "include" in settings:
            rel, path = self.env.relfn2path(settings["include"])
            self.env.note_dependency(rel)
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    code = f.read()
            except OSError as err:
                raise self.error(f"torchtrace-code: cannot read {rel}: {err}") from err
        else:
            code = "\n".join(self.content)
        literal = nodes.literal_block(code, code, language=language, force=True)
        literal["classes"] += ([] if "searchable" in flags else ["no-search"]) + (
            [FAST_CLASS] if "fast" in flags else []
        )
        args: dict[str, object] = {}
        try:
            if "linenos" in flags or "start" in settings:
                literal["linenos"] = True
                args["linenostart"] = int(settings.get("start", "1"))
            if "emphasize" in settings:
                count = code.count("\n") + 1
                lines = map(int, settings["emphasize"].split(","))
                args["hl_lines"] = [n for n in lines if n <= count]
        except ValueError as err:
            raise self.error(f"torchtrace-code: not a line number: {err}") from err
        literal["highlight_args"] = args
        self.set_source_info(literal)
        return [literal]
