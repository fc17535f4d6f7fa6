"""Figures the overview page shows, computed from the model (no Sphinx, no markup)."""

from __future__ import annotations
