"""sphinx-torchtrace: PyTorch torch.compile trace logs as Sphinx documentation.

``extensions = ["sphinx_torchtrace"]`` registers the ``torchtrace`` directive, the
``torchtrace`` domain (frames, graphs, kernels) and its roles.  The trace model
lives in :mod:`sphinx_torchtrace.trace` and imports nothing of Sphinx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from .extension import setup_extension

    setup_extension(app)
    return {
        "version": __version__,
        "env_version": 1,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
