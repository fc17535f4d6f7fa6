"""Registration of everything the extension adds to Sphinx."""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

from .directive import TorchTraceDirective
from .domain import TorchTraceDomain
from .generate import generate_pages

STATIC = Path(__file__).parent / "static"


def setup_extension(app: Sphinx) -> None:
    app.setup_extension("sphinx_design")
    app.add_config_value("torchtrace_generated_dir", "torchtrace", "env", types=[str])
    # {regex: replacement} applied to published trace text; None means the defaults
    # (home directories to ~/, site-packages to <site-packages>/), {} turns them off.
    app.add_config_value("torchtrace_path_rewrites", None, "env")
    app.add_domain(TorchTraceDomain)
    app.add_directive("torchtrace", TorchTraceDirective)
    app.connect("builder-inited", generate_pages)
    app.connect("builder-inited", _add_static)


def _add_static(app: Sphinx) -> None:
    if app.builder.format != "html":
        return
    app.config.html_static_path.append(str(STATIC))
    app.add_css_file("sphinx-torchtrace.css")
