"""What this build's builder writes, asked the way each Sphinx version allows.

Checked against Sphinx 7.0 to 9.0.  Touches: ``BuildEnvironment._builder_cls``
(private, Sphinx 9 only: Sphinx 9 deprecates ``SphinxTransform.app``, through
which Sphinx 7 and 8 reach the builder).  Falls back to the public attribute
when the private one is missing.
"""

from __future__ import annotations

from sphinx.transforms import SphinxTransform


def builder_format(transform: SphinxTransform) -> str:
    """``html``, ``latex``, ``text`` ...: the output format of the running builder."""
    builder_cls = getattr(transform.env, "_builder_cls", None)
    if builder_cls is not None:
        return str(builder_cls.format)
    return str(transform.app.builder.format)


def builder_has_downloads(transform: SphinxTransform) -> bool:
    """Whether the running builder copies downloads: Sphinx's own switch for
    ``:download:`` (``download_support``, a class attribute: True for HTML's builders,
    False for EPUB's, absent from every other)."""
    builder_cls = getattr(transform.env, "_builder_cls", None)
    if builder_cls is None:
        builder_cls = type(transform.app.builder)
    return bool(getattr(builder_cls, "download_support", False))
