"""The extension's configuration values, typed and checked once, at ``config-inited``.

Each ``torchtrace_*`` value is declared here with its default and a check; a
bad value is one ``torchtrace.config`` warning naming what is valid, and the
default is used instead: never an "Extension error".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config

from ..render.paths import DEFAULT_PATH_REWRITES
from ..site.naming import DEFAULT_GENERATED_DIR, generated_folder
from ..site.plan import DEFAULT_FOLD_BYTES, DEFAULT_MAX_FRAMES
from ..trace.diff import DEFAULT_REGRESSIONS, validate_regressions
from ..trace.reader import DEFAULT_MAX_LOG_BYTES
from .warnings import warn


@dataclass(frozen=True)
class TorchTraceConfig:
    generated_dir: str
    path_rewrites: dict[str, str]  # the user's rules, applied before the defaults
    sidebar_frames: int
    default_path_rewrites: bool  # the built-in rules (home directories, site-packages ...)
    max_log_bytes: int  # read no more than this of one log (decompressed)
    max_frames: int  # compiles of one trace that get pages; the rest are listed on its overview
    fold_bytes: int  # graphs up to this size are folded on their frame page, not paged
    regressions: dict[str, bool | float | None]  # which torchtrace-diff changes warn
    graph_break_registry: bool  # read the installed torch's graph-break registry
    warn_divergence: bool  # ranks of a trace that diverge are a torchtrace.divergence warning
    capture: str  # torchtrace-capture: "auto" (cache, else run), "always" (run), "never"
    capture_cache: str | None  # the captures' folder (None: in the doctree folder)
    capture_timeout: float  # seconds a capture may run unless its :timeout: says
    secrets_keep: tuple[str, ...]  # patterns of variable names / values published as logged
    moved_baseline: str | None  # the published site's torchtrace-objects.json (path or URL)

    def rewrite_rules(self) -> dict[str, str]:
        """The user's rules first, then the defaults (unless turned off)."""
        rules = dict(self.path_rewrites)
        if self.default_path_rewrites:
            rules.update((k, v) for k, v in DEFAULT_PATH_REWRITES.items() if k not in rules)
        return rules


def _generated_dir(value: Any) -> str:
    folder = generated_folder(value) if isinstance(value, str) else None
    if folder is None:
        raise ValueError("must name a sub-folder of the sources, such as 'torchtrace'")
    return folder


def _path_rewrites(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError("must be a dict of {regular expression: replacement} strings")
    for pattern, replacement in value.items():
        try:
            re.compile(pattern).sub(replacement, "")
        except (re.error, IndexError) as err:
            raise ValueError(f"rule {pattern!r} -> {replacement!r}: {err}") from err
    return dict(value)


def _secrets_keep(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, list | tuple) or not all(
        isinstance(v, str) and v for v in value
    ):
        raise ValueError("must be a list of variable names or regular expressions of values")
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as err:
            raise ValueError(f"{pattern!r}: {err}") from err
    return tuple(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("must be True or False")
    return value


def _positive(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError("must be a whole number above 0")
    return value


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("must be a whole number, 0 or more")
    return value


def _capture_mode(value: Any) -> str:
    if value not in CAPTURE_MODES:
        raise ValueError(f"must be one of {', '.join(map(repr, CAPTURE_MODES))}")
    return str(value)


def _folder(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a folder (a path, relative to conf.py's folder) or None")
    return value


def _baseline(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise ValueError("must be the published site's URL or a path (relative to conf.py's "
                         "folder), or None")
    return value.strip()


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e9:
        raise ValueError("must be a number of seconds above 0")
    return float(value)


#: ``torchtrace_capture``: use the cache, else run; always run; only use the cache.
CAPTURE_MODES = ("auto", "always", "never")

#: name: (default, check); each check returns the value to use or raises ValueError.
VALUES: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "torchtrace_generated_dir": (DEFAULT_GENERATED_DIR, _generated_dir),
    # {regex: replacement} applied to published trace text; None means the defaults
    # (home directories to ~/, site-packages to <site-packages>/), {} turns them off.
    "torchtrace_path_rewrites": ({}, _path_rewrites),
    # Frames a trace lists in the HTML sidebar; beyond it, the first page of each function
    # (every page listing every frame grows with the square of their number).
    "torchtrace_sidebar_frames": (50, _count),
    # The built-in path rewrites, after the user's (False publishes paths as logged).
    "torchtrace_default_path_rewrites": (True, _flag),
    # Bytes read from one log at most, decompressed: a gzip log can expand to gigabytes.
    "torchtrace_max_log_bytes": (DEFAULT_MAX_LOG_BYTES, _positive),
    # Compiles (frames) of one trace that get pages, in compile order; the rest are listed
    # in a table on the overview: thousands of pages make a slow build and a useless sidebar.
    "torchtrace_max_frames": (DEFAULT_MAX_FRAMES, _positive),
    # Graphs, guards and generated code of at most this many bytes are folded on their
    # frame page, with their kernels; larger ones get pages of their own.  0: every graph
    # and kernel gets a page (a site several times heavier: each page carries the theme).
    "torchtrace_fold_bytes": (DEFAULT_FOLD_BYTES, _count),
    # What a ``torchtrace-diff`` warns about as a regression (``regression_<kind>``), and
    # the thresholds: missing keys take the defaults; ``compile_time`` is a ratio or None.
    "torchtrace_regressions": (dict(DEFAULT_REGRESSIONS), validate_regressions),
    # Today's wording and every hint of each graph-break id, from the graph-break registry
    # of the torch installed beside Sphinx (never imported, never fetched); False: the
    # logs' own text only, whatever is installed.
    "torchtrace_graph_break_registry": (True, _flag),
    # Ranks of one trace that diverge (compile ids, statuses, caches, graph shapes, collective
    # schedules ...) are a ``torchtrace.divergence`` warning at the directive, so that a CI
    # docs build with -W fails on a job whose ranks ran different graphs.  Off: a note on
    # the overview only.
    "torchtrace_warn_divergence": (False, _flag),
    # ``torchtrace-capture``: "auto" runs a script when no cached capture matches its
    # content, "always" runs every one, "never" uses the cache only (a warning when none
    # matches: a docs host without torch can publish what CI captured).
    "torchtrace_capture": ("auto", _capture_mode),
    # Where captures are kept (a folder CI can persist, relative to conf.py's folder);
    # None: ``torchtrace-captures`` in the doctree folder.
    "torchtrace_capture_cache": (None, _folder),
    # Seconds a capture may run before it is stopped (a directive's :timeout: overrides).
    "torchtrace_capture_timeout": (600.0, _seconds),
    # What looks secret in a trace (values read from the environment, tokens, keys) is
    # published masked, with a ``torchtrace.secret`` warning; each entry here is a regular
    # expression that, matching a variable's whole name (``HF_TOKEN``) or a whole value, says
    # the user vouches for it: published as logged, and not looked for by the publish check.
    "torchtrace_secrets_keep": ((), _secrets_keep),
    # The published site (its URL, or a path relative to conf.py's folder: a site, or its
    # ``torchtrace-objects.json``) whose object names a recapture is compared with, on every
    # build until the new meanings are published; None: with the last build of this
    # environment (a fresh CI or Read the Docs build has none).
    "torchtrace_moved_baseline": (None, _baseline),
}

_CHECKED = "_torchtrace_checked"


def add_config_values(app: Sphinx) -> None:
    for name, (default, _check) in VALUES.items():
        app.add_config_value(name, default, "env")
    app.connect("config-inited", check_config, priority=100)


def check_config(app: Sphinx, config: Config) -> None:
    """Every value checked; a bad one is warned about and replaced by its default."""
    checked: dict[str, Any] = {}
    for name, (default, check) in VALUES.items():
        try:
            checked[name] = check(getattr(config, name))
        except ValueError as err:
            warn("config", f"{name} = {getattr(config, name)!r} {err}; using {default!r}")
            checked[name] = default
            setattr(config, name, default)
    setattr(config, _CHECKED, _typed(checked))


def torchtrace_config(config: Config) -> TorchTraceConfig:
    """The checked configuration (checked now if ``config-inited`` has not run)."""
    found = getattr(config, _CHECKED, None)
    if isinstance(found, TorchTraceConfig):
        return found
    values = {}
    for name, (default, check) in VALUES.items():
        try:
            values[name] = check(getattr(config, name, default))
        except ValueError:
            values[name] = default
    return _typed(values)


def _typed(values: dict[str, Any]) -> TorchTraceConfig:
    return TorchTraceConfig(**{k.removeprefix("torchtrace_"): v for k, v in values.items()})
