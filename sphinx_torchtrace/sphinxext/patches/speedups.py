"""The build's speed-ups, behind one switch: ``torchtrace_speedups`` (True by default).

Each speed-up reaches into Sphinx, docutils or the interpreter to make a build of many
generated pages faster, and changes no output file (``tests/test_build_speedups.py``
builds with the switch on and off and compares every file, byte for byte).  What each
saves is measured by ``benchmarks/bench_speedups.py`` on real logs and stated in its
module's docstring, with what it touches: all four together take a 285-page trace's build
from 18.9 s to 13.5 s.  A speed-up that saves nothing measurable is removed (one settings
parser per build, highlighting ahead in a forked process and memoized asset checksums
were, in ``benchmarks/results/speedups-37/``).  With the switch off
(``torchtrace_speedups = False`` in ``conf.py``, for a Sphinx version the patches were
not checked against, or to rule them out), none is installed and Sphinx runs as it ships.

The process-wide ones (transform classes wrapped, the collector's threshold) are put in
place when the configuration is read and put back when the build finishes, so a later build
in the same process (a test suite, an editor's preview) finds Sphinx as it was.
"""

from __future__ import annotations

from collections.abc import Callable

from sphinx.application import Sphinx
from sphinx.config import Config

from ..config import torchtrace_config
from . import gc_threshold, generated_transforms, navigation, stem_cache

#: name -> (install for this build, put back what is process-wide, or None).
SPEEDUPS: dict[str, tuple[Callable[[Sphinx], None], Callable[[], None] | None]] = {
    "navigation": (navigation.setup_navigation, None),
    "stem_cache": (stem_cache.setup_stem_cache, None),
    "gc_threshold": (gc_threshold.setup_gc_threshold, None),  # restores itself
    "generated_transforms": (
        generated_transforms.setup_generated_transforms,
        generated_transforms.remove_generated_transforms,
    ),
}


def setup_speedups(app: Sphinx) -> None:
    # after the configuration is checked (priority 100), before the builder exists
    app.connect("config-inited", install, priority=200)
    app.connect("build-finished", put_back, priority=900)


def install(app: Sphinx, config: Config) -> None:
    """Every speed-up, unless ``torchtrace_speedups`` is False (then none, and whatever an
    earlier build of this process left is put back)."""
    if not torchtrace_config(config).speedups:
        put_back(app, None)
        return
    for setup, _remove in SPEEDUPS.values():
        setup(app)


def put_back(app: Sphinx, exception: BaseException | None) -> None:
    """What is process-wide, as Sphinx ships it."""
    for _setup, remove in SPEEDUPS.values():
        if remove is not None:
            remove()
