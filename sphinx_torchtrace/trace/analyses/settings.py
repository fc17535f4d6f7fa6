"""What the run was configured with: the ``dynamo_config``/``inductor_config`` the
compilation metrics logged, the settings that differ from PyTorch's usual default, and the
recompile limits in force.  Config text is parsed defensively: a config that is no JSON
object is no config.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Trace
from ..reader import load_json
from .naming import metrics_data

#: Settings readers most often change on purpose, with PyTorch's usual default.
#: Defaults move between releases, so the page says "differs from the usual default".
NOTABLE_SETTINGS: dict[str, dict[str, Any]] = {
    "dynamo_config": {
        "recompile_limit": 8,
        "cache_size_limit": 8,
        "accumulated_recompile_limit": 256,
        "automatic_dynamic_shapes": True,
        "assume_static_by_default": True,
        "capture_scalar_outputs": False,
        "capture_dynamic_output_shape_ops": False,
        "suppress_errors": False,
        "specialize_int": False,
        "specialize_float": False,
        "inline_inbuilt_nn_modules": True,
        "optimize_ddp": True,
        "compiled_autograd": False,
        "error_on_recompile": False,
        "fail_on_recompile_limit_hit": False,
        "allow_rnn": False,  # a graph break's hint names it: a run that changed it says so
        "trace_autograd_ops": False,
        "verify_correctness": False,
    },
    "inductor_config": {
        "max_autotune": False,
        "max_autotune_gemm": False,
        "max_autotune_pointwise": False,
        "coordinate_descent_tuning": False,
        "freezing": False,
        "cpp_wrapper": False,
        "fx_graph_cache": True,
        "force_disable_caches": False,
        "triton.cudagraphs": False,
        "epilogue_fusion": True,
        "aggressive_fusion": False,
        "fallback_random": False,
        "debug": False,
        "trace.enabled": False,
        "trace.provenance_tracking_level": 0,
        "size_asserts": True,
        "layout_optimization": True,
    },
}


def _config_dict(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = load_json(value)
        except (ValueError, RecursionError):  # JSON nested thousands deep is no config
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _configs_of(data: dict[str, Any], parsed: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    found = {}
    for key in NOTABLE_SETTINGS:
        raw = data.get(key)
        if raw is None:
            continue
        cache_key = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True, default=str)
        if cache_key not in parsed:  # configs repeat verbatim: parse each text once
            parsed[cache_key] = _config_dict(raw)
        value = parsed[cache_key]
        if value is not None:
            found[key] = value
    return found


def compile_configs(trace: Trace) -> list[dict[str, dict[str, Any]]]:
    """The ``dynamo_config``/``inductor_config`` pairs in the order the run used them: one
    entry per change (a return to an earlier configuration is a change too)."""
    return [config for config, _ in config_runs(trace)]


def config_runs(trace: Trace) -> list[tuple[dict[str, dict[str, Any]], int]]:
    """Each configuration the compilation metrics logged, with the number of compiles in a
    row that logged it, in log order.

    Read on the first rank that logged one (ranks of a job run the same settings); a
    configuration only another rank logged is added after, as one more change.
    """
    parsed: dict[str, dict[str, Any] | None] = {}
    runs: list[tuple[dict[str, dict[str, Any]], int]] = []
    for rank in trace.ranks:
        own: list[tuple[dict[str, dict[str, Any]], int]] = []
        for c in rank.compiles:
            found = _configs_of(metrics_data(c), parsed)
            if not found:
                continue
            if own and own[-1][0] == found:
                own[-1] = (found, own[-1][1] + 1)
            else:
                own.append((found, 1))
        if not runs:
            runs = own
            continue
        for config, count in own:
            if all(config != seen for seen, _ in runs):
                runs.append((config, count))
    return runs


def compile_config(trace: Trace) -> dict[str, dict[str, Any]]:
    """The configuration of the first compilation that logged one (``{}`` when none did)."""
    configs = compile_configs(trace)
    return configs[0] if configs else {}


@dataclass(frozen=True)
class Setting:
    """A key setting as logged: its values in run order, each with the number of compiles in
    a row that logged it (more than one value where it changed mid-run)."""

    config: str  # "dynamo" or "inductor"
    key: str
    values: list[str]  # JSON text of each value, a new one where it changed
    usual: str
    compiles: tuple[int, ...] = ()  # compiles in a row with each value, where counted

    @property
    def changes(self) -> int:
        return len(self.values) - 1


def notable_settings(
    configs: Sequence[dict[str, dict[str, Any]]], counts: Sequence[int] = ()
) -> list[Setting]:
    """Key settings that differ from PyTorch's usual default at some point: what the user set.

    ``counts`` are the compiles of each configuration (:func:`config_runs`); with them, each
    value says how many compiles in a row logged it.
    """
    out = []
    for section, defaults in NOTABLE_SETTINGS.items():
        for key, usual in defaults.items():
            values: list[Any] = []
            compiles: list[int] = []
            for i, config in enumerate(configs):
                mapping = config.get(section) or {}
                if key not in mapping:
                    continue
                n = counts[i] if i < len(counts) else 0
                if values and mapping[key] == values[-1]:
                    compiles[-1] += n
                else:
                    values.append(mapping[key])
                    compiles.append(n)
            if any(v != usual for v in values):
                out.append(
                    Setting(
                        section.removesuffix("_config"),
                        key,
                        [json.dumps(v, default=str) for v in values],
                        json.dumps(usual),
                        tuple(compiles) if counts else (),
                    )
                )
    return out


def config_json(config: dict[str, dict[str, Any]]) -> str:
    return json.dumps(config, indent=1, sort_keys=True, default=str)


def recompile_limits(
    configs: Sequence[dict[str, dict[str, Any]]], accumulated: bool = False
) -> list[int]:
    """Distinct ``recompile_limit`` values (``cache_size_limit`` in older torch), in run
    order; with ``accumulated``, the ``accumulated_recompile_limit`` ones (the versions of
    all of a code object's frames)."""
    keys = (
        ("accumulated_recompile_limit", "accumulated_cache_size_limit")
        if accumulated
        else ("recompile_limit", "cache_size_limit")
    )
    limits: list[int] = []
    for config in configs:
        dynamo = config.get("dynamo_config") or {}
        for key in keys:
            value = dynamo.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                if value not in limits:
                    limits.append(value)
                break
    return limits
