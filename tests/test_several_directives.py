"""Several directives of one log, on one page or on several: each renders its own trace.

Reported on real logs: the same log in two directives of one page rendered the second's
report in both places, the first's pages were orphans (``toc.not_included`` failed
``-W``), a ``:ranks:`` warning of one was said at both, and the ``torchtrace.label``
advice said "give one a :name:" when both had one.
"""

from __future__ import annotations

import re
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

from .conftest import SiteMaker, warnings_of

LOG = "@DATA@/shared/graph_breaks/dedicated_log_torch_trace_051e7f1c.log"


def _warnings(app: SphinxTestApp) -> list[str]:
    return [line for line in warnings_of(app).splitlines() if "WARNING" in line]


def test_one_log_twice_on_a_page_is_two_reports(make_site: SiteMaker) -> None:
    page = (
        f"Twice\n=====\n\n.. torchtrace:: {LOG}\n   :name: first\n\n"
        f".. torchtrace:: {LOG}\n   :name: second\n   :ranks: 3\n"
    )
    app = make_site("simple", "html", pages={"index.rst": page})
    warnings = _warnings(app)
    # one warning, at the directive whose option it is (line 7), and no orphan page
    assert len(warnings) == 1 and re.search(r"index\.rst:7: WARNING: :ranks:", warnings[0]), (
        warnings
    )
    html = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert 'href="torchtrace/first/index.html"' in html
    assert 'href="torchtrace/second/index.html"' in html
    for label in ("first", "second"):  # each report's own objects, on its own pages
        overview = (Path(app.outdir) / "torchtrace" / label / "index.html").read_text(
            encoding="utf-8"
        )
        assert f"frame-0-0.html#torchtrace-frame-{label}-0-0" in overview, label


def test_the_same_name_twice_is_one_warning_with_fitting_advice(make_site: SiteMaker) -> None:
    page = (
        f"Twice\n=====\n\n.. torchtrace:: {LOG}\n   :name: run\n\n"
        f".. torchtrace:: {LOG}\n   :name: run\n   :no-source:\n"
    )
    app = make_site("simple", "html", pages={"index.rst": page})
    [warning] = _warnings(app)
    assert "index.rst:7:" in warning and "'run' is used twice" in warning, warning
    assert "give one another :name:" in warning and "[torchtrace.label]" in warning


def test_one_log_on_two_pages_with_the_same_options_shares_its_pages(
    make_site: SiteMaker,
) -> None:
    page = f"Page\n====\n\n.. toctree::\n\n   other\n\n.. torchtrace:: {LOG}\n   :name: run\n"
    other = f"Other\n=====\n\n.. torchtrace:: {LOG}\n   :name: run\n"
    app = make_site("simple", "html", pages={"index.rst": page, "other.rst": other})
    assert _warnings(app) == []
    for name in ("index.html", "other.html"):
        html = (Path(app.outdir) / name).read_text(encoding="utf-8")
        assert 'torchtrace/run/index.html"' in html, name
