"""Compile ids, written exactly as tlparse and torch write them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True, slots=True)
class CompileId:
    """Which compilation a record belongs to: ``[0/0]``, ``[1/0_1]``, ``[!0/2/0]``, ``[-/-]``.

    ``attempt`` counts restarts of Dynamo's analysis of one frame (0 is the
    first); ``compiled_autograd_id`` is set for compiled-autograd graphs.
    """

    compiled_autograd_id: int | None = None
    frame_id: int | None = None
    frame_compile_id: int | None = None
    attempt: int = 0

    @classmethod
    def from_envelope(cls, envelope: dict[str, Any]) -> CompileId:
        """The compile id a record's envelope names; attempt is 0 when absent (as in tlparse)."""
        return cls(
            _int_or_none(envelope.get("compiled_autograd_id")),
            _int_or_none(envelope.get("frame_id")),
            _int_or_none(envelope.get("frame_compile_id")),
            _int_or_none(envelope.get("attempt")) or 0,
        )

    @property
    def is_unknown(self) -> bool:
        """True for ``[-/-]``: records logged outside any compilation."""
        return self.compiled_autograd_id is None and self.frame_id is None

    @property
    def frame(self) -> CompileId:
        """The same compile id without its attempt: what tlparse's stack trie colors."""
        return CompileId(self.compiled_autograd_id, self.frame_id, self.frame_compile_id, 0)

    def __str__(self) -> str:
        parts = "" if self.compiled_autograd_id is None else f"!{self.compiled_autograd_id}/"
        parts += f"{_dash(self.frame_id)}/{_dash(self.frame_compile_id)}"
        if self.attempt:
            parts += f"_{self.attempt}"
        return f"[{parts}]"

    @property
    def slug(self) -> str:
        """A file-name-safe form, e.g. ``-_0_0_1`` (tlparse's directory names)."""
        return "_".join(
            _dash(v)
            for v in (self.compiled_autograd_id, self.frame_id, self.frame_compile_id, self.attempt)
        )

    @classmethod
    def parse(cls, text: str) -> CompileId:
        """Parse ``[0/1]``, ``0/1_2``, ``[!0/1/0]`` or ``[-/-]``."""
        s = text.strip()
        if s.startswith("[") and s.endswith("]"):
            s = s[1:-1]
        ca = None
        if s.startswith("!"):
            head, _, s = s[1:].partition("/")
            ca = int(head)
            if not s:
                return cls(ca, None, None, 0)
        frame, _, rest = s.partition("/")
        fcid, _, attempt = rest.partition("_")
        return cls(
            ca,
            None if frame == "-" else int(frame),
            None if fcid in ("-", "") else int(fcid),
            int(attempt) if attempt else 0,
        )


UNKNOWN = CompileId()


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
