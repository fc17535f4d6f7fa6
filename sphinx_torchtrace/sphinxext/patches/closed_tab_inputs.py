"""A tab's ``<input>`` is written closed (``<input ... />``), so an EPUB's XHTML is XML.

The pages' tab sets are sphinx-design's; its HTML visitor writes each tab's radio button
as ``<input ...>``, left open since sphinx-design 0.6 (a void element in HTML, an
unclosed element in XML).  The EPUB builder writes the same HTML into ``.xhtml`` files,
which readers parse as XML: one open ``<input>`` and the whole page fails to open.  The
self-closed form is what Sphinx writes for every other void element (``<br />``,
``<img ... />``), and HTML reads it the same.

Checked against sphinx-design 0.5 to 0.8 (0.5 wrote ``</input>`` after it, well-formed
too).  Touches: the ``html`` visitor of ``sphinx_design.tabs.sd_tab_input``, set again
after sphinx-design's own.  If the node moves, the import fails and nothing is changed.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.writers.html5 import HTML5Translator


def visit_tab_input(self: HTML5Translator, node: nodes.Element) -> None:
    """sphinx-design's attributes, the element closed."""
    attributes = {"ids": [node["id"]], "type": node["type"], "name": node["set_id"]}
    if node["checked"]:
        attributes["checked"] = "checked"
    self.body.append(self.emptytag(node, "input", **attributes))


def depart_tab_input(self: HTML5Translator, node: nodes.Element) -> None:
    """Nothing: the element is closed already."""


def setup_closed_tab_inputs(app: Sphinx) -> None:
    """After sphinx-design is set up: its tab inputs' HTML visitor replaced."""
    try:
        from sphinx_design.tabs import sd_tab_input
    except ImportError:  # pragma: no cover - sphinx-design is a dependency
        return
    app.add_node(sd_tab_input, override=True, html=(visit_tab_input, depart_tab_input))
