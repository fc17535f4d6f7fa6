"""Path rewriting: the one pass that hides machine paths in everything a page publishes.

Trace text is full of absolute paths (home directories, site-packages).  Every
string the Sphinx layer publishes (page text, code blocks, downloads, the
provenance view) goes through one :class:`PathRewriter`, applied line by line so
that it can never add or remove a line and line numbers stay the model's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

#: Rewrites applied to every path in published text unless configured otherwise.
DEFAULT_PATH_REWRITES: dict[str, str] = {
    r"/[^\s\"'<>]*?/(?:site|dist)-packages/": "<site-packages>/",
    # home directories: Linux and macOS users, and the superuser's
    r"/(?:(?:home|Users)/[^/\s\"']+|root)/": "~/",
}


class PathRewriter:
    """``{regex: replacement}`` rules applied in order; no rules: text unchanged."""

    def __init__(self, rules: Mapping[str, str] | None = None) -> None:
        rules = DEFAULT_PATH_REWRITES if rules is None else rules
        self._rules = [(re.compile(p), r) for p, r in rules.items()]

    def __call__(self, text: str) -> str:
        for pattern, replacement in self._rules:
            text = pattern.sub(replacement, text)
        return text

    def __bool__(self) -> bool:
        return bool(self._rules)
