"""Inline SVG charts made at build time (no plotting library, nothing fetched at view time)."""

from __future__ import annotations
