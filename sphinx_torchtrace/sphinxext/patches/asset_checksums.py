"""Each stylesheet's and script's checksum is looked up once per build, not once per page.

Since Sphinx 7.1 every ``<link>`` and ``<script>`` of a page carries a checksum
(``?v=...``) of its file, and for every page and asset Sphinx resolves the file's
path on disk again (a system call per path component) before finding the checksum
it already computed.  A trace adds hundreds of pages, each with a dozen assets:
those look-ups were a sixtieth of the build.  Sphinx caches the checksum of each
resolved path for the life of the process; this keeps the resolution as well,
per output folder and asset name, so every page still gets the checksum Sphinx
would give it.

Checked against Sphinx 7.1 to 9.0.  Touches: ``sphinx.builders.html._file_checksum``
(private), which the HTML builder's ``css_tag`` and ``js_tag`` call by that name.
Falls back to nothing when the name is missing (Sphinx 7.0 has no checksums).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sphinx.application import Sphinx
from sphinx.builders import html as html_builder

_NAME = "_file_checksum"
_MARK = "_torchtrace_memoized"


def memoized(checksum: Callable[[Any, Any], str]) -> Callable[[Any, Any], str]:
    """``checksum(outdir, filename)`` remembered per arguments (errors are not remembered)."""
    cached = functools.lru_cache(maxsize=4096)(checksum)

    @functools.wraps(checksum)
    def file_checksum(outdir: Any, filename: Any) -> str:
        try:
            hash((outdir, filename))
        except TypeError:  # an unhashable path type: as Sphinx does it
            return checksum(outdir, filename)
        return cached(outdir, filename)

    setattr(file_checksum, _MARK, True)
    return file_checksum


def setup_asset_checksums(app: Sphinx) -> None:
    original = getattr(html_builder, _NAME, None)
    if original is None or getattr(original, _MARK, False):
        return
    setattr(html_builder, _NAME, memoized(original))


def remove_asset_checksums() -> None:
    """Sphinx's own function back (the build finished, or the speed-ups are off)."""
    function = getattr(html_builder, _NAME, None)
    if getattr(function, _MARK, False):
        setattr(html_builder, _NAME, function.__wrapped__)  # type: ignore[union-attr]
