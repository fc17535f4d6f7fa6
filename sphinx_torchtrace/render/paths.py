"""Path rewriting: the one pass that hides machine paths in everything a page publishes.

Trace text is full of absolute paths (home directories, site-packages).  Every
string the Sphinx layer publishes (page text, code blocks, downloads, the
provenance view) goes through one :class:`PathRewriter`, applied line by line so
that it can never add or remove a line and line numbers stay the model's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: ``/any/prefix/site-packages/`` (or ``dist-packages``): from the first ``/`` of a path to
#: the first site-packages folder after it.  A match may begin only where a path begins
#: or right after the previous match: otherwise every ``/`` of a long slash-only payload
#: would scan to its end (``/[^\s"'<>]*?/(?:site|dist)-packages/``, same results,
#: took minutes on 150 KB of ``/``).  Group 1 keeps what precedes the first ``/``.
SITE_PACKAGES = (
    r"(?:(?<![^\s\"'<>])|(?<=/site-packages/)|(?<=/dist-packages/))"
    r"([^\s\"'<>/]*)/[^\s\"'<>]*?/(?:site|dist)-packages/"
)

#: Rewrites applied to every path in published text unless configured otherwise.
#: Log text is untrusted: each pattern here runs in time linear in the text's length.
DEFAULT_PATH_REWRITES: dict[str, str] = {
    SITE_PACKAGES: r"\g<1><site-packages>/",
    # home directories: Linux and macOS users, and the superuser's
    r"/(?:(?:home|Users)/[^/\s\"']+|root)/": "~/",
}


#: Text a rule can only match where this literal occurs: the rule then runs on those lines
#: alone (its look-behinds make it slow over megabytes of graphs that hold no such path).
_LITERAL_HINTS = {SITE_PACKAGES: "-packages/"}


class PathRewriter:
    """``{regex: replacement}`` rules applied in order; no rules: text unchanged."""

    def __init__(self, rules: Mapping[str, str] | None = None) -> None:
        rules = DEFAULT_PATH_REWRITES if rules is None else rules
        self._rules = [(re.compile(p), r, _LITERAL_HINTS.get(p)) for p, r in rules.items()]

    def __call__(self, text: str) -> str:
        for pattern, replacement, hint in self._rules:
            if hint is None:
                text = pattern.sub(replacement, text)
            elif hint in text:
                lines = text.split("\n")
                text = "\n".join(
                    pattern.sub(replacement, line) if hint in line else line for line in lines
                )
        return text

    def __bool__(self) -> bool:
        return bool(self._rules)
