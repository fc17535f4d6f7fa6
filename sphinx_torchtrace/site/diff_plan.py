"""Which pages a ``torchtrace-diff`` comparison gets, and their names.

The comparison itself is shown where the directive stands; each frame that changed (new,
gone or different) gets a detail page under ``<generated>/diff-<label>/``.  Page names come
from what a frame *is* (function and occurrence, as the comparison matches frames), never
from a compile id, so they stay put when a program is edited and captured again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..trace.comparing.changes import FrameDiff, TraceDiff
from ..trace.comparing.run_frames import FrameFacts
from .naming import digest, fit, item_segment, label_segment, name_text, shown_name

#: Finds the frame object (``run/[0/*]`` page) of one run's frame, when that run is in the site.
FrameObject = Callable[[FrameFacts], str | None]


@dataclass
class DiffFramePlan:
    """One frame of the comparison: its diff, its detail page, its objects in both runs."""

    rank: int
    frame: FrameDiff
    docname: str | None  # a detail page when the frame changed
    baseline_object: str | None = None  # the baseline run's frame object, when in the site
    new_object: str | None = None


@dataclass
class DiffPlan:
    """A comparison's pages: the directive's own (the summary) and the frame detail pages."""

    label: str
    diff: TraceDiff
    root: str  # docname folder, e.g. "torchtrace/diff-fix"
    baseline_label: str = "baseline"
    new_label: str = "new"
    frames: list[DiffFramePlan] = field(default_factory=list)
    baseline_index: str | None = None  # the baseline trace's overview, when in the site
    new_index: str | None = None
    no_source: bool = False  # ``:no-source:``: the user's source lines left out of every text

    @property
    def multi_rank(self) -> bool:
        return len(self.diff.ranks) > 1 or any(r.alike for r in self.diff.ranks)

    def frames_of_rank(self, rank: int) -> list[DiffFramePlan]:
        return [f for f in self.frames if f.rank == rank]

    def page_of(self, docname: str) -> DiffFramePlan:
        """The frame a detail page shows (KeyError for a docname not of this comparison)."""
        for f in self.frames:
            if f.docname == docname:
                return f
        raise KeyError(docname)

    @property
    def docnames(self) -> list[str]:
        return [f.docname for f in self.frames if f.docname is not None]


def diff_root(generated_dir: str, label: str) -> str:
    """``torchtrace/diff-<label>``: the folder of a comparison's pages."""
    return f"{generated_dir}/{fit('diff-' + label_segment(label))}"


def diff_label_text(label: str) -> str:
    """A label as shown: one printable line (controls and line breaks escaped as in names,
    spaces kept)."""
    return shown_name(name_text(" ".join(label.split())))


def plan_diff(
    label: str,
    diff: TraceDiff,
    generated_dir: str,
    *,
    baseline_label: str = "baseline",
    new_label: str = "new",
    baseline_object: FrameObject | None = None,
    new_object: FrameObject | None = None,
    no_source: bool = False,
) -> DiffPlan:
    """The pages of one comparison; ``*_object`` link frames to their runs' pages."""
    plan = DiffPlan(
        diff_label_text(label),
        diff,
        diff_root(generated_dir, label),
        baseline_label,
        new_label,
        no_source=no_source,
    )
    taken: set[str] = set()
    for r in diff.ranks:
        folder = f"{plan.root}/rank{r.rank}" if plan.multi_rank else plan.root
        for f in r.frames:
            docname = None
            if f.changed and not diff.nothing_compared:  # no frame was matched: no pages
                segment = item_segment("frame", f.key.function, f.key.occurrence)
                docname = f"{folder}/{segment}"
                if docname in taken:  # the same function in another file
                    docname = f"{folder}/{fit(f'{segment}--h{digest(str(f.key) + f.key.file)}')}"
                taken.add(docname)
            plan.frames.append(
                DiffFramePlan(
                    r.rank,
                    f,
                    docname,
                    baseline_object(f.baseline) if baseline_object and f.baseline else None,
                    new_object(f.new) if new_object and f.new else None,
                )
            )
    return plan
