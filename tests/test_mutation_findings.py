"""What the mutation campaign (``benchmarks/mutation_campaign.py``) found, one test each."""

from __future__ import annotations

import time
from pathlib import Path

from sphinx_torchtrace.site.characters import LONGEST_WORD, short_words

from .conftest import SIMPLE_LOG, SiteMaker, warnings_of, write_page
from .tools.hostile_log import format_record, read_records

#: A megabyte-long word: a path of single-letter folders, as a log may hold.
HUGE_WORD = "x/" * 500_000


def test_a_megabyte_long_name_builds_as_text_in_bounded_time(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """Sphinx's text writer wraps a word in time that grows with its length squared or worse
    (a 40 KB word took 7 s, a megabyte hours): inline text cuts words no real name reaches."""
    records = read_records(SIMPLE_LOG)
    for record in records:
        if record.kind == "str" and record.envelope["str"][0].endswith("simple.py"):
            record.envelope["str"][0] = HUGE_WORD  # the user's file name, in every stack
    app = make_site("simple", "text", build=False)
    srcdir = Path(app.srcdir)
    (srcdir / "huge.log").write_text("".join(map(format_record, records)), encoding="utf-8")
    write_page(srcdir, "index.rst", "Huge\n====\n\n.. torchtrace:: huge.log\n   :name: huge\n")
    started = time.perf_counter()
    app = make_site("simple", "text", srcdir=srcdir)
    assert time.perf_counter() - started < 60  # under 5 s on the 2-core machine
    assert "Traceback" not in warnings_of(app)
    frame = (app.outdir / "torchtrace/huge/frame-0-0.txt").read_text(encoding="utf-8")
    assert f"({len(HUGE_WORD) - LONGEST_WORD}" in frame  # "… (999000 more characters)", wrapped
    assert len(frame) < 100_000


def test_only_words_longer_than_any_real_name_are_cut() -> None:
    path = "/home/user/" + "a" * 300 + "/model.py"
    assert short_words(f"forward at {path}:12") == f"forward at {path}:12"
    assert short_words("y" * LONGEST_WORD) == "y" * LONGEST_WORD
    assert short_words("a " + "y" * (LONGEST_WORD + 5) + " b") == (
        "a " + "y" * LONGEST_WORD + "… (5 more characters) b"
    )
    many = ("y" * (LONGEST_WORD - 1) + " ") * 2000  # 2 MB of words just short of the limit
    started = time.perf_counter()
    assert short_words(many) == many
    assert time.perf_counter() - started < 5  # linear: each word is scanned once


def test_a_whole_file_diagnostic_names_the_log_not_a_page(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A location without a line was taken by Sphinx for a docname: ``run.log.rst``."""
    records = [r for r in read_records(SIMPLE_LOG) if r.kind != "str"]  # stacks refer to none
    app = make_site("simple", "html", build=False)
    srcdir = Path(app.srcdir)
    (srcdir / "run.log").write_text("".join(map(format_record, records)), encoding="utf-8")
    write_page(srcdir, "index.rst", "Run\n===\n\n.. torchtrace:: run.log\n")
    app = make_site("simple", "html", srcdir=srcdir)
    lines = [w for w in warnings_of(app).splitlines() if "[torchtrace.intern]" in w]
    assert lines and all("run.log:" in w and "run.log.rst" not in w for w in lines)
