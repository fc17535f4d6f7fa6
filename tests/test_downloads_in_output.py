"""Raw downloads (whole graphs, records, events) are written into the output, never into the
docs' source folder: the user's tree gets the small page stubs only (issue 56: a 328 MB log
put 270 MB there), and every download link of every page works in each HTML builder."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from .conftest import DATA, SiteMaker

LOG = DATA / "shared" / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
PAGED = {"torchtrace_fold_bytes": 0}  # every graph a page of its own and a download
HREF = re.compile(r'href="([^"#]*_downloads/[^"#]+)"')


def download_links(out: Path) -> list[tuple[Path, Path]]:
    """(page, the file a download link of it points to) over every page of a site."""
    found = []
    for page in out.rglob("*.html"):
        for href in HREF.findall(page.read_text(encoding="utf-8")):
            found.append((page, (page.parent / unquote(html.unescape(href))).resolve()))
    return found


def generated_files(srcdir: Path) -> list[Path]:
    return [p for p in (srcdir / "torchtrace").rglob("*") if p.is_file()]


@pytest.mark.parametrize("builder", ["html", "dirhtml", "singlehtml"])
def test_downloads_are_in_the_output_and_every_link_works(
    make_site: SiteMaker, builder: str
) -> None:
    app = make_site("simple", builder, confoverrides=PAGED)
    out, src = Path(app.outdir), Path(app.srcdir)
    links = download_links(out)
    targets = {target for _, target in links}
    assert len(targets) >= 5  # the graphs, the records, the timeline
    missing = [(p.relative_to(out), t) for p, t in links if not t.is_file()]
    assert not missing
    joint = [t for t in targets if t.name == "graph-dynamo-output-graph.txt"]
    assert joint and "class GraphModule" in joint[0].read_text(encoding="utf-8")
    made = generated_files(src)
    assert made and not any("_raw" in p.parts for p in made)
    assert sum(p.stat().st_size for p in made) <= 0.05 * LOG.stat().st_size


def test_a_build_without_downloads_writes_none(make_site: SiteMaker) -> None:
    """LaTeX offers no downloads: none is made, in the sources or the output."""
    app = make_site("simple", "latex", confoverrides=PAGED)
    assert not (Path(app.outdir) / "_downloads").exists()
    assert not any("_raw" in p.parts for p in generated_files(Path(app.srcdir)))


def test_a_download_no_page_offers_any_more_leaves_the_output(make_site: SiteMaker) -> None:
    first = make_site("simple", "html", confoverrides=PAGED)
    out, src = Path(first.outdir), Path(first.srcdir)
    before = {t for _, t in download_links(out)}
    again = make_site("simple", "html", srcdir=src, freshenv=False)  # graphs folded again
    after = {t for _, t in download_links(Path(again.outdir))}
    assert after < before and all(t.is_file() for t in after)
    assert not any(t.exists() for t in before - after)  # no longer published
