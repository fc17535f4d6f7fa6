"""The extension's configuration values, typed and checked once, at ``config-inited``.

Each ``torchtrace_*`` value is declared once, as a field of a frozen dataclass of
settings with its default and its check (:func:`setting`): the values every family
uses in :class:`TorchTraceConfig`, a family's own in the family's module (the capture
family's in ``families/capture.py``).  A bad value is one ``torchtrace.config`` warning
naming what is valid, and the default is used instead: never an "Extension error".
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sphinx.application import Sphinx
from sphinx.config import Config

from ..render.paths import DEFAULT_PATH_REWRITES
from ..site.naming import DEFAULT_GENERATED_DIR, generated_folder
from ..site.plan import DEFAULT_FOLD_BYTES, DEFAULT_MAX_FRAMES
from ..trace.reader import DEFAULT_MAX_LOG_BYTES
from .warnings import CONFIG, warn

PREFIX = "torchtrace_"
_CHECK = "torchtrace_check"
_CHECKED = "_torchtrace_checked"  # on Sphinx's Config: {settings class: its instance}

Settings = TypeVar("Settings")


def setting(default: Any, check: Callable[[Any], Any]) -> Any:
    """A field that is a configuration value ``torchtrace_<field name>``: its default and
    its check (the value to use, or ValueError saying what is valid)."""
    if isinstance(default, dict | list):  # a fresh copy for each build's settings
        return dataclasses.field(
            default_factory=lambda: type(default)(default), metadata={_CHECK: check}
        )
    return dataclasses.field(default=default, metadata={_CHECK: check})


def config_values(settings: type) -> Iterator[tuple[str, Any, Callable[[Any], Any]]]:
    """``(torchtrace_name, default, check)`` of each field of a settings class."""
    for f in dataclasses.fields(settings):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        yield PREFIX + f.name, default, f.metadata[_CHECK]


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
    if (
        isinstance(value, str)
        or not isinstance(value, list | tuple)
        or not all(isinstance(v, str) and v for v in value)
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


#: What ``torchtrace_latex_payloads`` may be.
LATEX_PAYLOADS = ("summary", "all")


def _latex_payloads(value: Any) -> str:
    if value not in LATEX_PAYLOADS:
        raise ValueError("must be 'summary' or 'all'")
    return str(value)


def _baseline(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or "\0" in value:
        raise ValueError(
            "must be the published site's URL or a path (relative to conf.py's folder), or None"
        )
    return value.strip()


@dataclass(frozen=True)
class TorchTraceConfig:
    """The values every family uses (``torchtrace_<field>``)."""

    generated_dir: str = setting(DEFAULT_GENERATED_DIR, _generated_dir)
    # {regex: replacement} applied to published trace text, before the built-in rules.
    path_rewrites: dict[str, str] = setting({}, _path_rewrites)
    # Frames a trace lists in the HTML sidebar; beyond it, the first page of each function.
    # Every page carries the sidebar (each entry about 150 bytes of HTML with furo), and
    # 20 entries fill one screen of it: the compile directory lists the rest.
    sidebar_frames: int = setting(20, _count)
    # The built-in path rewrites (home directories to ~/, site-packages ...), after the
    # user's; False publishes paths as logged.
    default_path_rewrites: bool = setting(True, _flag)
    # Bytes read from one log at most, decompressed: a gzip log can expand to gigabytes.
    max_log_bytes: int = setting(DEFAULT_MAX_LOG_BYTES, _positive)
    # Compiles (frames) of one trace that get pages, in compile order; the rest are listed
    # in a table on the overview: thousands of pages make a slow build and a useless sidebar.
    max_frames: int = setting(DEFAULT_MAX_FRAMES, _positive)
    # Graphs, guards and generated code of at most this many bytes are folded on their
    # frame page, with their kernels; larger ones get pages of their own.  0: every graph
    # and kernel gets a page (a site several times heavier: each page carries the theme).
    fold_bytes: int = setting(DEFAULT_FOLD_BYTES, _count)
    # Today's wording and every hint of each graph-break id, from the graph-break registry
    # of the torch installed beside Sphinx (never imported, never fetched); False: the
    # logs' own text only, whatever is installed.
    graph_break_registry: bool = setting(True, _flag)
    # Ranks of one trace that diverge (compile ids, statuses, caches, graph shapes, collective
    # schedules ...) are a ``torchtrace.divergence`` warning at the directive, so that a CI
    # docs build with -W fails on a job whose ranks ran different graphs.  Off: a note on
    # the overview only.
    warn_divergence: bool = setting(False, _flag)
    # What looks secret in a trace (values read from the environment, tokens, keys) is
    # published masked, with a ``torchtrace.secret`` warning; each entry here is a regular
    # expression that, matching a variable's whole name (``HF_TOKEN``) or a whole value, says
    # the user vouches for it: published as logged, and not looked for by the publish check.
    secrets_keep: tuple[str, ...] = setting((), _secrets_keep)
    # The published site (its URL, or a path relative to conf.py's folder: a site, or its
    # ``torchtrace-objects.json``) whose object names a recapture is compared with, on every
    # build until the new meanings are published; None: with the last build of this
    # environment (a fresh CI or Read the Docs build has none).
    moved_baseline: str | None = setting(None, _baseline)
    # The build's speed-ups (patches of Sphinx's internals that change no output file:
    # sphinxext/patches/speedups.py); False runs Sphinx as it ships.
    speedups: bool = setting(True, _flag)
    # The PDF (LaTeX builders): "summary" prints each large payload (a graph, generated code,
    # a guard dump, a config) as a line with its size and where the HTML build has it, so a
    # trace prints as its answers; "all" prints every payload (up to the first 150 lines).
    latex_payloads: str = setting("summary", _latex_payloads)

    def rewrite_rules(self) -> dict[str, str]:
        """The user's rules first, then the defaults (unless turned off)."""
        rules = dict(self.path_rewrites)
        if self.default_path_rewrites:
            rules.update((k, v) for k, v in DEFAULT_PATH_REWRITES.items() if k not in rules)
        return rules


def add_config_values(app: Sphinx, classes: Sequence[type]) -> None:
    """Each field of each settings class, a configuration value checked at config-inited."""
    for settings in classes:
        for name, default, _check in config_values(settings):
            app.add_config_value(name, default, "env")

    def check(app: Sphinx, config: Config) -> None:
        check_config(config, classes)

    app.connect("config-inited", check, priority=100)


def check_config(config: Config, classes: Sequence[type]) -> None:
    """Every value checked; a bad one is warned about and replaced by its default."""
    checked: dict[type, Any] = getattr(config, _CHECKED, None) or {}
    for settings in classes:
        values = {}
        for name, default, check in config_values(settings):
            try:
                values[name] = check(getattr(config, name))
            except ValueError as err:
                warn(CONFIG, f"{name} = {getattr(config, name)!r} {err}; using {default!r}")
                values[name] = default
                setattr(config, name, default)
        checked[settings] = _typed(settings, values)
    setattr(config, _CHECKED, checked)


def settings_of(config: Config, settings: type[Settings]) -> Settings:
    """A settings class's checked values (checked now if ``config-inited`` has not run)."""
    found = (getattr(config, _CHECKED, None) or {}).get(settings)
    if isinstance(found, settings):
        return found
    values = {}
    for name, default, check in config_values(settings):
        try:
            values[name] = check(getattr(config, name, default))
        except ValueError:
            values[name] = default
    return _typed(settings, values)


def torchtrace_config(config: Config) -> TorchTraceConfig:
    """The values every family uses, checked."""
    return settings_of(config, TorchTraceConfig)


def _typed(settings: type[Settings], values: dict[str, Any]) -> Settings:
    return settings(**{k.removeprefix(PREFIX): v for k, v in values.items()})
