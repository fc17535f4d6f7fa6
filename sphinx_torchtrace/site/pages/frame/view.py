"""What every part of a frame page reads: the frame, its neighbours and the settings,
and how a value from the log is put in a cell."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from ....trace import Artifact, Compile
from ....trace.analyses.timings import plausible
from ...blocks import AnchorLink, Code, Inline, ObjectLink
from ...plan import FramePlan, PageSettings, TracePlan
from ...source import maybe_strip

#: A number no compile could have logged (infinite, 400 digits) is shown as text, this long.
ODD_NUMBER_LIMIT = 40
#: Counts at or past this are corrupt records, not graph sizes: left out of the facts.
MAX_COUNT = 10**15


@dataclass(frozen=True)
class FrameView:
    """What every part of the page reads: the frame, its neighbours and the settings."""

    plan: TracePlan
    frame: FramePlan
    settings: PageSettings
    previous: Compile | None

    @property
    def compile(self) -> Compile:
        return self.frame.compile

    def strip(self, text: str) -> str:
        return maybe_strip(text, self.settings.no_source)

    def anchor_link(self, anchor: str, text: str) -> AnchorLink:
        return AnchorLink(self.frame.docname, anchor, text)

    def frame_link(self, compile_: Compile) -> Inline:
        """A link to another compile's page; its label where the plan has no page for it."""
        other = self.plan.frame_for(compile_)
        return ObjectLink("frame", other.name) if other is not None else Code(compile_.label)


def artifact_anchor(a: Artifact) -> str:
    """Where an artifact is shown on its frame page (its fold, or the failure it is)."""
    return f"artifact-{a.ordinal}"


# -- formatting -------------------------------------------------------------------------------


def is_number(value: object) -> TypeGuard[int | float]:
    """Numbers as metrics hold them; booleans are flags, not counts."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_count(value: object) -> TypeGuard[int]:
    """A count a compile could have logged (a corrupt record's is past :data:`MAX_COUNT`)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_COUNT


def seconds_text(value: object) -> str:
    """``1.234 s``; a dash for what is no duration (a string, infinite, ``1e308``)."""
    seconds = plausible(value)
    return "—" if seconds is None else f"{seconds:.3f} s"


def odd_number(value: int | float) -> Code:
    """A logged number that no compile could have measured, shown as the log has it."""
    return Code(truncate(str(value), ODD_NUMBER_LIMIT))


def truncate(text: str, limit: int) -> str:
    """The text, cut to ``limit`` characters with ``...`` where longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
