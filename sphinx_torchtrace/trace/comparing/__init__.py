"""Comparing runs: whether two runs compare at all, what changed between them (the
``diff`` behind CI gates) and how several runs moved (the trend)."""
