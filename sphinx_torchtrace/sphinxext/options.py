"""Checking a directive's options: what every directive family shares.

Each family (:mod:`.families`) declares its option spec, the type its options become
and what each option does on each kind of input; the scan (:mod:`.scan`) and the
directive check a page's options with the same spec, so they can never disagree on
what an option means (the scan once dropped ranks the directive rejected).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from docutils.parsers.rst import directives

#: What an option given where it does nothing gets: a warning, never silence.
NO_EFFECT = "no effect: a ``torchtrace.option`` warning says so"


def name_option(value: str | None) -> str:
    text = " ".join((value or "").split())
    if not text:
        raise ValueError("a name is required")
    return text


class AnyOption(dict[str, Callable[[str | None], Any]]):
    """An option spec that takes every key, so that :func:`parse_options` can say what a
    misspelled option should have been (docutils would only say it is unknown)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Callable[[str | None], Any]:
        return directives.unchanged


def checked_options(
    raw: Mapping[str, str | None], spec: Mapping[str, Callable[[str | None], Any]]
) -> dict[str, Any]:
    """Each option checked by its entry of ``spec``; ValueError names the bad one."""
    values: dict[str, Any] = {}
    for key, text in raw.items():
        check = spec.get(key)
        if check is None:
            raise ValueError(f"unknown option :{key}:; valid: {', '.join(spec)}")
        try:
            values[key] = check(text)
        except ValueError as err:
            raise ValueError(f"option :{key}: {err}") from err
    return values
