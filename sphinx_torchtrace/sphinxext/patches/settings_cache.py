"""One docutils settings parser per build, not one per document.

Since Sphinx 8.2, reading a document builds a docutils ``OptionParser`` from
every component's settings specification (some eighty options) and reads the
docutils configuration files, only to take its default values.  A trace adds
hundreds of documents, and those parsers were a thirtieth of the build.  The
parser is a pure function of the components' (class-level) specifications,
the defaults Sphinx passes and the configuration files, so one is kept per
set of components and reused while the defaults are equal: every document
still gets its own, fresh settings object.

Checked against Sphinx 8.2 to 9.0 and docutils 0.20 to 0.22.  Touches:
``sphinx.util.docutils._get_settings`` (private), called by
``_parse_str_to_doctree`` for each document read.  Falls back to Sphinx's own
function when either is missing (Sphinx 7 and 8.0/8.1 keep a parser per
build already), when its signature changes, or when a component's settings
are not the same for every instance of its class.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any

from docutils.frontend import OptionParser
from sphinx.application import Sphinx
from sphinx.util import docutils as sphinx_docutils

_MARK = "_torchtrace_cached_settings"
_SPEC_ATTRIBUTES = (
    "settings_spec",
    "settings_defaults",
    "settings_default_overrides",
    "relative_path_settings",
)


def _spec_key(component: Any) -> type | None:
    """The class whose specification a component uses, or None if its instance differs."""
    cls = component if isinstance(component, type) else type(component)
    for name in _SPEC_ATTRIBUTES:
        if getattr(component, name, None) is not getattr(cls, name, None):
            return None
    return cls


def cached_get_settings(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (Sphinx's ``_get_settings``) with one parser per components and defaults."""
    parsers: dict[tuple[tuple[type, ...], bool], tuple[dict[str, Any], OptionParser]] = {}

    @functools.wraps(original)
    def get_settings(
        *components: Any, defaults: dict[str, Any], read_config_files: bool = False
    ) -> Any:
        classes = [_spec_key(c) for c in components]
        if any(cls is None for cls in classes):
            return original(*components, defaults=defaults, read_config_files=read_config_files)
        key = (tuple(cls for cls in classes if cls is not None), bool(read_config_files))
        known = parsers.get(key)
        if known is None or known[0] != defaults:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # docutils' OptionParser
                parser = OptionParser(
                    components=components, defaults=defaults, read_config_files=read_config_files
                )
            known = parsers[key] = (dict(defaults), parser)
        return known[1].get_default_values()

    setattr(get_settings, _MARK, True)
    return get_settings


def _patchable() -> bool:
    function = getattr(sphinx_docutils, "_get_settings", None)
    if function is None or not hasattr(sphinx_docutils, "_parse_str_to_doctree"):
        return False
    if getattr(function, _MARK, False):
        return False
    parameters = inspect.signature(function).parameters
    return (
        "defaults" in parameters
        and parameters["defaults"].kind is inspect.Parameter.KEYWORD_ONLY
        and "read_config_files" in parameters
    )


def setup_settings_cache(app: Sphinx) -> None:
    if _patchable():
        sphinx_docutils._get_settings = cached_get_settings(sphinx_docutils._get_settings)


def remove_settings_cache() -> None:
    """Sphinx's own function back (the build finished, or the speed-ups are off)."""
    function = getattr(sphinx_docutils, "_get_settings", None)
    if getattr(function, _MARK, False):
        sphinx_docutils._get_settings = function.__wrapped__  # type: ignore[union-attr]
