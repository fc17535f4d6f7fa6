"""Split Inductor's generated code into its kernels (placeholder, filled in next)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Kernel:
    """One generated kernel of an output-code artifact."""

    name: str
    kind: str
    source: str
    definition_line: int
    source_nodes: list[str] = field(default_factory=list)
    aten_ops: list[str] = field(default_factory=list)
    launch_lines: list[int] = field(default_factory=list)


def split_output_code(code: str, artifact_name: str) -> list[Kernel]:
    return []
