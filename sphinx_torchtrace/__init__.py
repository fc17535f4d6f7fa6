"""sphinx-torchtrace: PyTorch torch.compile trace logs as Sphinx documentation.

``extensions = ["sphinx_torchtrace"]`` registers the ``torchtrace`` directive.
The trace model itself lives in :mod:`sphinx_torchtrace.trace` and imports
nothing of Sphinx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from .directive import setup_directive

    setup_directive(app)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
