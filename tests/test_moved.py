"""``torchtrace.moved`` warns every time it matters, on a fresh CI build too.

Reported: the warning came once and never again (the next build compared with the
environment it had just updated), never on a fresh CI or Read the Docs build (no earlier
environment), and a function moved one line down was "another function".  What each
object name meant is now published (``torchtrace-objects.json`` beside ``objects.inv``)
and ``torchtrace_moved_baseline`` names the published site to compare with.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_colors

from .conftest import SiteMaker, warnings_of

SIMPLE = "@DATA@/shared/simple/dedicated_log_torch_trace_5aek85xk.log"
OTHER = "@DATA@/shared/graph_breaks/dedicated_log_torch_trace_051e7f1c.log"


def page(log: str) -> dict[str, str]:
    return {
        "index.rst": f"Run\n===\n\nSee :torchtrace:frame:`run/[0/0]`.\n\n"
        f".. torchtrace:: {log}\n   :name: run\n"
    }


def moved(app: SphinxTestApp) -> list[str]:
    return [
        line for line in strip_colors(warnings_of(app)).splitlines() if "[torchtrace.moved]" in line
    ]


def test_the_published_site_holds_what_each_name_meant(make_site: SiteMaker) -> None:
    app = make_site("simple", "html", pages=page(SIMPLE))
    manifest = json.loads((Path(app.outdir) / "torchtrace-objects.json").read_text("utf-8"))
    assert manifest["objects"]["run/[0/0]"] == "forward (~/project/simple.py:15)"
    assert (Path(app.outdir) / "objects.inv").is_file()


def test_a_fresh_build_compares_with_the_published_site_every_time(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    published = make_site("simple", "html", pages=page(SIMPLE))
    site = Path(published.outdir)
    conf = {"torchtrace_moved_baseline": str(site)}  # a fresh CI build: no environment
    first = make_site("simple", "html", pages=page(OTHER), confoverrides=conf)
    (warning,) = moved(first)
    assert "than on the published site: run/[0/0] was forward (~/project/simple.py:15)" in (warning)
    # the next CI build, fresh again, says it again: until the new meanings are published
    again = make_site("simple", "html", srcdir=Path(first.srcdir), confoverrides=conf)
    assert len(moved(again)) == 1
    # without a baseline, a fresh build has nothing to compare with
    plain = make_site("simple", "html", srcdir=Path(first.srcdir))
    assert moved(plain) == []


def test_a_function_moved_down_a_line_is_the_same_function(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    manifest = tmp_path / "published" / "torchtrace-objects.json"
    manifest.parent.mkdir()
    manifest.write_text(
        json.dumps({"version": 1, "objects": {"run/[0/0]": "forward (~/project/simple.py:14)"}}),
        encoding="utf-8",
    )
    app = make_site(
        "simple",
        "html",
        pages=page(SIMPLE),
        confoverrides={"torchtrace_moved_baseline": str(manifest)},
    )
    assert moved(app) == []
    manifest.write_text(
        json.dumps({"version": 1, "objects": {"run/[0/0]": "forward (~/project/other.py:15)"}}),
        encoding="utf-8",
    )
    app = make_site(
        "simple",
        "html",
        pages=page(SIMPLE),
        confoverrides={"torchtrace_moved_baseline": str(manifest)},
    )
    (warning,) = moved(app)
    assert "run/[0/0] was forward (~/project/other.py:15), is now forward" in warning


@pytest.mark.parametrize("content", ["not json", '{"objects": ["a"]}', "[]"])
def test_a_baseline_that_cannot_be_read_is_one_warning(
    make_site: SiteMaker, tmp_path: Path, content: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    app = make_site(
        "simple", "html", pages=page(SIMPLE), confoverrides={"torchtrace_moved_baseline": str(bad)}
    )
    (warning,) = moved(app)
    assert "torchtrace_moved_baseline: cannot read" in warning
    assert "compared with the last build instead" in warning
    assert (Path(app.outdir) / "torchtrace" / "run" / "index.html").is_file()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A folder served on 127.0.0.1, as a published site is."""
    folder = tmp_path / "www"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{server.server_address[1]}/", folder
        server.shutdown()


def test_the_baseline_may_be_the_published_sites_url(
    make_site: SiteMaker, served: tuple[str, Path]
) -> None:
    url, folder = served
    published = make_site("simple", "html", pages=page(SIMPLE))
    (folder / "torchtrace-objects.json").write_bytes(
        (Path(published.outdir) / "torchtrace-objects.json").read_bytes()
    )
    app = make_site(
        "simple", "html", pages=page(OTHER), confoverrides={"torchtrace_moved_baseline": url}
    )
    (warning,) = moved(app)
    assert "than on the published site: run/[0/0] was forward" in warning
