"""The extension's own words, translatable: ``_("Compile directory")``.

Pages are built as data here, without Sphinx; the Sphinx layer installs the
translator of the build's ``language`` (:func:`set_translator`), the identity
otherwise.  Only fixed words of ours go through :func:`_`, never trace data: a
string with a value in it is a template (``_("{count} kernels").format(...)``).
The catalog's template is ``sphinx_torchtrace/locale/sphinx_torchtrace.pot``.
"""

from __future__ import annotations

from collections.abc import Callable

#: The message catalog of the extension's words (``<locale>/<lang>/LC_MESSAGES/<domain>.mo``).
DOMAIN = "sphinx_torchtrace"

_translate: Callable[[str], str] = str


def _(message: str) -> str:
    """``message`` in the build's language, when a catalog translates it."""
    return _translate(message)


def set_translator(translate: Callable[[str], str] | None) -> None:
    """Use ``translate`` for every word from now on (None: the words as written)."""
    global _translate
    _translate = translate if translate is not None else str
