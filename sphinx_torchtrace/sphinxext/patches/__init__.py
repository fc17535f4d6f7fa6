"""Where the extension reaches into Sphinx's internals, each module with the versions it
was checked against, what it touches, and how it falls back when Sphinx changes."""
