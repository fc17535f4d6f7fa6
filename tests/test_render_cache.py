"""Compiled templates are cached between builds, and a cached template renders the same pages."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from sphinx_torchtrace.generate import TraceRequest
from sphinx_torchtrace.plan import plan_trace
from sphinx_torchtrace.render import Renderer
from sphinx_torchtrace.trace import load_trace

from .conftest import SHARED


def _pages(renderer: Renderer, log: Path) -> dict[str, str]:
    plan = plan_trace("t", load_trace(log), "torchtrace")
    return renderer.render_trace(plan, TraceRequest("index", str(log), str(log)))


def test_second_renderer_loads_compiled_templates_and_renders_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = SHARED / "training" / "dedicated_log_torch_trace_ukjvghtw.log"
    first = Renderer(rewrites={})
    cache = jinja2.FileSystemBytecodeCache(str(tmp_path))
    first.env.bytecode_cache = cache
    pages = _pages(first, log)
    assert list(tmp_path.iterdir())  # the compiled templates were stored

    second = Renderer(rewrites={})
    second.env.bytecode_cache = cache
    compiled: list[str] = []
    monkeypatch.setattr(second.env, "compile", lambda *a, **k: compiled.append("x"))
    assert _pages(second, log) == pages
    assert compiled == []  # nothing compiled: every template came from the cache


def test_renderers_use_a_bytecode_cache() -> None:
    assert isinstance(Renderer().env.bytecode_cache, jinja2.FileSystemBytecodeCache)
