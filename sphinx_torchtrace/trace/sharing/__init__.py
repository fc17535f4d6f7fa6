"""Sharing a trace safely: finding machine paths and source lines in log text, and the
``check``, ``redact`` and ``bundle`` commands over logs."""
