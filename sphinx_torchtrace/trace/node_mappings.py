"""The node mappings Inductor logs with ``INDUCTOR_PROVENANCE=1`` (which graph nodes became
which kernels), decoded into plain maps.

A reader of a trace or of a debug folder keeps them in the model as it finds them;
:mod:`.analyses.provenance` draws the lines between the panes from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .reader import load_json

NodeMap = dict[str, list[str]]


@dataclass(slots=True)
class NodeMappings:
    """The node-level content of a node-mappings artifact, validated and typed."""

    version: float = 1.0
    pre_to_post: NodeMap = field(default_factory=dict)
    post_to_pre: NodeMap = field(default_factory=dict)
    kernel_to_post: NodeMap = field(default_factory=dict)  # JSON key cppCodeToPost
    post_to_kernel: NodeMap = field(default_factory=dict)  # JSON key postToCppCode
    valid: bool = True  # False when the payload was not a JSON object

    @classmethod
    def parse(cls, text: str) -> NodeMappings:
        """Decode the JSON payload; anything malformed becomes empty maps, never an error."""
        try:
            data = load_json(text)
        except ValueError:  # not JSON, or nested too deeply to decode
            return cls(valid=False)
        if not isinstance(data, dict):
            return cls(valid=False)
        version = data.get("version", 1.0)
        if (
            isinstance(version, bool)
            or not isinstance(version, (int, float))
            or not -1e6 < version < 1e6
        ):  # NaN, infinities, a float() that overflows
            version = 1.0
        return cls(
            version=float(version),
            pre_to_post=_node_map(data.get("preToPost")),
            post_to_pre=_node_map(data.get("postToPre")),
            kernel_to_post=_node_map(data.get("cppCodeToPost")),
            post_to_kernel=_node_map(data.get("postToCppCode")),
        )

    @property
    def empty(self) -> bool:
        return not (
            self.pre_to_post or self.post_to_pre or self.kernel_to_post or self.post_to_kernel
        )


def _node_map(value: Any) -> NodeMap:
    """A ``{str: [str, ...]}`` object with anything else dropped."""
    if not isinstance(value, dict):
        return {}
    return {
        str(key): [v for v in targets if isinstance(v, str)]
        for key, targets in value.items()
        if isinstance(targets, list)
    }
