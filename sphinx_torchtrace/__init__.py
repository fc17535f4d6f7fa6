"""sphinx-torchtrace: PyTorch torch.compile trace logs as Sphinx documentation.

``extensions = ["sphinx_torchtrace"]`` registers the ``torchtrace`` directive, the
``torchtrace`` domain (frames, graphs, kernels) and its roles.  The package is
layered, each layer importing only the ones below it: :mod:`.trace` (the model
of a log), :mod:`.site` (which pages exist and what each shows, as plain
blocks), :mod:`.render` (highlighting, SVG, HTML) and :mod:`.sphinxext` (the
only code that imports Sphinx or docutils).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .version import __version__

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def setup(app: Sphinx) -> dict[str, Any]:
    from .sphinxext.setup import setup_extension

    setup_extension(app)
    return {
        "version": __version__,
        "env_version": 2,
        "parallel_read_safe": True,
        "parallel_write_safe": True,
    }
