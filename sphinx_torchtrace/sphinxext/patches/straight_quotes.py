"""Generated pages keep their quotes straight: Sphinx's smart-quotes pass is skipped there.

Trace text is code-like (guards, reasons, names), and :mod:`.rst` escapes its
quotes so they stay as logged; the pass walked every text node of every
generated page to curl a few apostrophes of our own help text, about a
twentieth of a big build.
``document.settings.smart_quotes = False`` is how Sphinx lets an extension
turn the pass off for one document.  The user's own pages are untouched.

Checked against Sphinx 7.0 to 9.0.  Touches: ``document.settings.smart_quotes``
(documented by Sphinx as the per-document switch) before ``SphinxSmartQuotes``
(priority 750).  If the switch stops working, pages only get curly quotes.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

from ...site.naming import generated_prefix


class StraightQuotesOnGeneratedPages(SphinxTransform):
    default_priority = 700  # before SphinxSmartQuotes (750)

    def apply(self, **kwargs: Any) -> None:
        if self.env.docname.startswith(generated_prefix(self.config.torchtrace_generated_dir)):
            self.document.settings.smart_quotes = False


def setup_straight_quotes(app: Sphinx) -> None:
    app.add_transform(StraightQuotesOnGeneratedPages)
