"""``fx_graph_bundled_cache_hit`` is no cache lookup: torch logs it when it loads the FX
graph that an AOT-autograd cache entry carried (``BundledOutputCodeLoadable.post_compile``,
"always a hit"), just before that entry's ``aotautograd_cache_hit``.  On the torch 2.14 and
2.15 captures (a regional-Inductor compile among others) the warm run's lookups mirror the
cold run's (19 misses, 19 hits), in ``summary`` and at a glance, and the overview's cache
section and the compile's page say the bundled loads apart, each with the hit that carried
it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from .conftest import DATA, build_once, copy_testroot, page_words, warnings_of

VERSIONS = ("t214", "t215")
_RECORD = re.compile(r'^\S+ \S+ \d+ \S+\] \{"artifact": \{"name": "(\w+)_cache_(hit|miss|bypass)"')
BUNDLED = "fx_graph_bundled"


def _log(version: str, run: str) -> Path:
    return DATA / "captured" / f"newer_torch_{version}" / f"{run}.log"


def _records(log: Path) -> list[tuple[int, str, str]]:
    """(line, cache, result) of each cache record, read from the log's envelopes."""
    out = []
    for n, line in enumerate(log.read_text("utf-8").splitlines(), 1):
        if m := _RECORD.match(line):
            out.append((n, m.group(1), m.group(2)))
    return out


def _summary(log: Path) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", "summary", str(log), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    cache = json.loads(out)["cache"]
    assert isinstance(cache, dict)
    return cache


@pytest.mark.parametrize("version", VERSIONS)
def test_warm_lookups_mirror_the_cold_ones(version: str) -> None:
    cold, warm = _records(_log(version, "cold")), _records(_log(version, "warm"))
    bundled = [r for r in warm if r[1] == BUNDLED]
    assert bundled and all(r[2] == "hit" for r in bundled)
    assert not [r for r in cold if r[1] == BUNDLED]
    looked = Counter(r[2] for r in warm if r[1] != BUNDLED)
    assert _summary(_log(version, "warm")) == dict(looked)
    assert _summary(_log(version, "cold"))["miss"] == looked["hit"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> SphinxTestApp:
    """One build of the two warm logs."""
    srcdir = copy_testroot("regions", tmp_path_factory.mktemp("bundled") / "src")
    page = "Warm starts\n===========\n\n"
    for version in VERSIONS:
        log = _log(version, "warm")
        (srcdir / "logs" / version).mkdir(parents=True)
        shutil.copy(log, srcdir / "logs" / version / log.name)
        page += f".. torchtrace:: logs/{version}/{log.name}\n   :name: {version}\n\n"
    (srcdir / "index.rst").write_text(page, encoding="utf-8")
    return build_once(srcdir)


def _carrier(records: list[tuple[int, str, str]], line: int) -> int:
    """The first AOT-autograd hit after a bundled load (the oracle's own reading)."""
    return next(n for n, cache, result in records if n > line and cache == "aotautograd")


@pytest.mark.parametrize("version", VERSIONS)
def test_the_pages_say_the_bundled_loads_apart(site: SphinxTestApp, version: str) -> None:
    assert warnings_of(site) == ""
    records = _records(_log(version, "warm"))
    bundled = [n for n, cache, _ in records if cache == BUNDLED]
    looked = Counter(r for _, cache, r in records if cache != BUNDLED)
    root = Path(site.outdir) / "torchtrace" / version
    index = page_words(root / "index.html")
    glance = index.split("This is the")[0]
    assert (
        f"Cache lookups: {looked['hit']} hits, {looked['bypass']} bypasses; besides, "
        f"{len(bundled)} FX graphs loaded from inside AOT-autograd cache entries"
    ) in glance
    said = (
        f"Besides: {len(bundled)} FX graphs loaded from inside AOT-autograd cache entries "
        f"(fx_graph_bundled_cache_hit, first at line {bundled[0]}, with the "
        f"aotautograd_cache_hit at line {_carrier(records, bundled[0])}), in"
    )
    assert said in index
    assert f"In all: {looked['hit']} hit, {looked['bypass']} bypass." in index
    pages = [p for p in root.glob("frame-*.html") if "fx_graph_bundled" in p.read_text("utf-8")]
    assert pages
    words = "".join(page_words(p) for p in pages)
    for line in bundled:
        assert (
            "loaded from inside the aotautograd cache hit (line "
            f"{_carrier(records, line)}): no lookup of its own" in words
        )
    assert "fx_graph_bundled hit" not in words


def test_vllms_saved_compiles_are_loads_not_lookups(
    built_site: Callable[..., SphinxTestApp],
) -> None:
    """vLLM's warm start loads its saved ahead-of-time compiles (bundled AOT-autograd
    entries) with no lookup of torch's caches: the loads are said, no lookup is counted."""
    log = DATA / "vllm" / "warm" / "dedicated_log_torch_trace_rank_0_uzoer41p.log"
    records = _records(log)
    assert records and all(cache == BUNDLED for _, cache, _ in records)
    assert _summary(log) == {}
    root = Path(built_site("vllm", "html").outdir) / "torchtrace" / "warm"
    index = page_words(root / "index.html")
    glance = index.split("This is the")[0]
    assert (
        f"Cache lookups: none; {len(records)} FX graphs loaded from inside AOT-autograd cache "
        "entries" in glance
    )
    assert (
        f"Besides: {len(records)} FX graphs loaded from inside AOT-autograd cache entries "
        f"(fx_graph_bundled_cache_hit, first at line {records[0][0]}, no AOT-autograd cache "
        "lookup logged for its entry)" in index
    )


@pytest.mark.parametrize("version", VERSIONS)
def test_the_warm_start_remark_counts_lookups_not_bundled_loads(version: str) -> None:
    """ "hit the cache (N hits: ...)" names the lookups that hit, never the FX graph a hit
    carried (once "fx_graph_bundled_cache_hit" among them, one more hit than looked up)."""
    from sphinx_torchtrace.trace import load_trace
    from sphinx_torchtrace.trace.analyses import compile_time as ct

    warm = load_trace(_log(version, "warm"))
    said = [r for r in ct.remarks(ct.compile_time_tree(warm)) if r.kind == "warm_compile"]
    assert said, "the capture's warm start compiles C++ all the same"
    records = {line: (cache, result) for line, cache, result in _records(_log(version, "warm"))}
    for remark in said:
        assert BUNDLED not in remark.text
        hits = [s for s in remark.records if s.line in records]
        assert hits and all(records[s.line] == (records[s.line][0], "hit") for s in hits)
        assert all(records[s.line][0] != BUNDLED for s in hits)
        assert f"({len(hits)} hit" in remark.text


@pytest.mark.parametrize("version", VERSIONS)
def test_summary_says_the_bundled_loads_apart(version: str) -> None:
    log = _log(version, "warm")
    loads = sum(1 for _line, cache, _result in _records(log) if cache == BUNDLED)
    assert loads > 0
    run = [sys.executable, "-m", "sphinx_torchtrace", "summary", str(log)]
    data = json.loads(subprocess.run([*run, "--json"], capture_output=True, check=True).stdout)
    assert data["bundled_loads"] == loads
    text = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    [line] = [x for x in text.splitlines() if x.startswith("cache lookups:")]
    assert f"besides, {loads} FX graph(s) loaded from inside AOT-autograd cache entries" in line
