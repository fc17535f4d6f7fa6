"""A directive family: one directive, everything about it in one place.

A family says its directive's name, the paths its argument names, its options (the
spec both the scan and the directive check, the type they become, what each does on
each format of input: the docs' table), its handlers of input, in the order they
are asked, any configuration values of its own, its warning subtypes (the docs' table
lists them), its companion directives (a table of what the family did in this build)
and the step that finishes its build's generation; :meth:`Family.setup` registers it
with Sphinx.  The rest of the extension loops over :data:`..FAMILIES` and knows no
family by name: a new directive is its model, its page views and a module here that
declares a :class:`Family`, plus its line in :data:`..FAMILIES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from docutils.parsers.rst import Directive
from sphinx.application import Sphinx

from ..directive import InputDirective, input_directive
from ..warnings import WarningType
from .base import Context, InputHandler

#: An option's check: the option's text (None for a flag) -> its value, or ValueError.
OptionCheck = Callable[[str | None], Any]


@dataclass(frozen=True)
class Options:
    """A family's options, and what each does on each kind of input."""

    #: option -> its check; the scan and the directive both check with it
    spec: Mapping[str, OptionCheck]
    #: a page's options as text -> the family's options type (ValueError names the bad one)
    parse: Callable[[Mapping[str, str | None]], Any]
    #: the formats of input as the docs' table names them (its columns)
    input_formats: tuple[str, ...] = ()
    #: option -> input format -> what it does there (the table ``torchtrace-options`` shows,
    #: every cell checked on a real build by the tests)
    effects: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Family:
    """One directive and what it reads, plans and registers."""

    #: the directive's name, as a page writes it
    name: str
    #: one line for the directive's docstring: what it shows
    description: str
    options: Options
    #: what reads its input: the first handler that accepts a path reads it, so the
    #: catch-all comes last
    handlers: tuple[InputHandler, ...]
    #: the inputs a directive names (its argument, its options), relative to its page:
    #: kept out of Sphinx's document discovery; None: it names no input (a script)
    input_paths: Callable[[str, Mapping[str, str]], list[str]] | None = None
    #: classes of configuration values of its own (``torchtrace_<field>``: see
    #: :func:`..config.setting`)
    settings: tuple[type, ...] = ()
    #: the ``torchtrace.<name>`` subtypes its directive warns with, its own (the reader's
    #: and the extension's are :mod:`..warnings`'): the docs' table lists them after those
    warnings: tuple[WarningType, ...] = ()
    #: other directives it adds (name -> class), such as a table of its build's work
    companions: Mapping[str, type[Directive]] = field(default_factory=dict)
    #: called once every directive of the build is generated (what its companions need)
    finish: Callable[[Context], None] | None = None

    def directive(self) -> type[InputDirective]:
        return input_directive(self.name, self.description, self.options.spec, self.options.parse)

    def setup(self, app: Sphinx) -> None:
        app.add_directive(self.name, self.directive())
        for name, companion in self.companions.items():
            app.add_directive(name, companion)

    def handler_for(self, path: str, options: object) -> InputHandler:
        """The handler that reads ``path``: the first that accepts it, else the last."""
        return next((h for h in self.handlers if h.accepts(path, options)), self.handlers[-1])
