"""The package's version, in a module of its own: every layer may read it, and it
imports nothing (the package's ``__init__`` imports Sphinx's side when Sphinx calls it)."""

__version__ = "0.2.0"
