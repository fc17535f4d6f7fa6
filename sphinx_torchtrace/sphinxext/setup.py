"""Registration of everything the extension adds to Sphinx."""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config

from ..render.fx_lexer import FxGraphLexer
from ..site.naming import generated_prefix
from . import families
from .assets import add_assets, remember_static_path, settle_static_path
from .break_index import setup_break_index
from .built import changed_inputs, forget_built
from .config import TorchTraceConfig, add_config_values
from .doctree import chart_node, plain_when_missing
from .domain import TorchTraceDomain
from .downloads import place_downloads
from .fold import setup_folds
from .generate import generate_pages, rewrite_navigation
from .glance import setup_glance
from .input_guard import setup_input_guard
from .latex import setup_latex
from .latex_payloads import setup_latex_payloads
from .latex_words import setup_word_breaks
from .moved import write_manifest
from .options_table import OptionsTable
from .page import TorchTracePage
from .patches.closed_tab_inputs import setup_closed_tab_inputs
from .patches.fast_code import setup_fast_code
from .patches.man_references import setup_man_references
from .patches.speedups import setup_speedups
from .patches.straight_quotes import setup_straight_quotes
from .provenance import setup_provenance
from .publish_check import setup_publish_check
from .single_page import setup_single_page
from .translations import (
    install_translations,
    keep_out_of_catalogs,
    reset_translations,
    write_catalog_template,
)
from .warnings_table import WarningsTable
from .web_only import setup_web_only


def setup_extension(app: Sphinx) -> None:
    app.setup_extension("sphinx_design")
    setup_closed_tab_inputs(app)  # after sphinx-design's own visitor
    add_config_values(app, [TorchTraceConfig, *(s for f in families.FAMILIES for s in f.settings)])
    app.add_lexer("torchtrace-fx", FxGraphLexer)
    setup_fast_code(app)
    app.add_domain(TorchTraceDomain)
    for family in families.FAMILIES:
        family.setup(app)  # its directive and its companions
    app.add_directive("torchtrace-page", TorchTracePage)
    app.add_directive("torchtrace-warnings", WarningsTable)
    app.add_directive("torchtrace-options", OptionsTable)
    app.add_node(
        chart_node,
        html=(_visit_chart_html, _depart),
        latex=(_pass, _depart),
        text=(_pass, _depart),
        man=(_pass, _depart),
        texinfo=(_pass, _depart),
    )
    setup_latex(app)
    setup_latex_payloads(app)
    setup_word_breaks(app)
    setup_web_only(app)
    setup_glance(app)
    setup_man_references(app)
    setup_folds(app)
    setup_provenance(app)
    setup_straight_quotes(app)
    setup_speedups(app)  # torchtrace_speedups: patches that change no output
    setup_publish_check(app)
    setup_input_guard(app)
    setup_break_index(app)
    setup_single_page(app)
    app.connect("builder-inited", install_translations)
    app.connect("builder-inited", generate_pages)
    app.connect("doctree-read", place_downloads, priority=600)  # after Sphinx's collector
    app.connect("env-updated", rewrite_navigation)
    app.connect("builder-inited", add_assets)
    app.connect("config-inited", remember_static_path)
    app.connect("builder-inited", settle_static_path, priority=900)  # after sphinx-design's
    app.connect("config-inited", _exclude_side_files)
    app.connect("missing-reference", plain_when_missing, priority=900)  # after intersphinx
    app.connect("build-finished", write_manifest)  # torchtrace-objects.json, published
    app.connect("build-finished", forget_built)
    app.connect("build-finished", reset_translations)
    app.connect("build-finished", write_catalog_template, priority=400)  # before forget_built
    app.connect("doctree-resolved", keep_out_of_catalogs)
    app.connect("env-get-outdated", changed_inputs)


def _visit_chart_html(self: object, node: chart_node) -> None:
    """The SVG (drawn and escaped by render.charts); the fallback table is for other builders."""
    from docutils import nodes

    body: list[str] = self.body  # type: ignore[attr-defined]
    body.append('<div class="torchtrace-chart-box">' + node["svg"] + "</div>\n")
    raise nodes.SkipNode


def _pass(self: object, node: chart_node) -> None:
    """Other builders show the children: the same numbers as a table."""


def _depart(self: object, node: chart_node) -> None:
    pass


def _exclude_side_files(app: Sphinx, config: Config) -> None:
    """Raw downloads are files, not documents, whatever the suffixes."""
    pattern = generated_prefix(config.torchtrace_generated_dir) + "**/_raw"
    if pattern not in config.exclude_patterns:  # a new list: the default one is shared
        config.exclude_patterns = [*config.exclude_patterns, pattern]
