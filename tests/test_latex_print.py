"""A trace's PDF prints its answers, and says where each payload it leaves out is.

The LaTeX source of a real trace (``sphinx-build -b latex``, no TeX needed) is read
beside the HTML build of the same pages: each large payload (a graph, generated
code, a metrics record, the compile config) is one line giving its size and the
HTML page and anchor that show it, and that page has that anchor; the answers
(the glance, failures, the compile directory) are printed; ``torchtrace_latex_payloads
= "all"`` prints the payloads instead.  Long names of the trace carry the break
points that keep them inside the margin (``tests/test_latex_pdf.py`` counts TeX's
overfull boxes on real PDFs).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from .conftest import SHARED, SiteMaker, warnings_of

TRAINING = SHARED / "training" / "dedicated_log_torch_trace_ukjvghtw.log"
PAGE = """\
Training
========

.. torchtrace:: @DATA@/shared/training/dedicated_log_torch_trace_ukjvghtw.log
   :name: train
"""
#: "854 lines (30.8 KiB), not printed: ... shows them at <page>.html#<anchor>."
SUMMARY = re.compile(
    r"([\d,]+) lines \(([\d.]+ (?:B|KiB|MiB))\), not printed: the HTML build of these pages "
    r"shows them at \\sphinxcode\{\\sphinxupquote\{(.*?)\}\}"
)
BREAK = r"\sphinxtorchtracebreak{}"
#: A key of the compile config, as Pygments writes it in a printed code block.
CONFIG_KEY = r"accumulated\PYGZus{}recompile\PYGZus{}limit"


def _tex(app: SphinxTestApp) -> str:
    return next(Path(app.outdir).glob("*.tex")).read_text(encoding="utf-8")


def _plain(tex: str) -> str:
    """What TeX prints of a piece of Sphinx's LaTeX: its break points and escapes undone."""
    tex = tex.replace(BREAK, "").replace(r"\sphinxhyphen{}", "-")
    return re.sub(r"\\([_#%&{}])", r"\1", tex)


def _build(make_site: SiteMaker, builder: str, **conf: object) -> SphinxTestApp:
    return make_site("simple", builder, pages={"index.rst": PAGE}, confoverrides=conf)


def test_payloads_print_as_a_line_that_says_where_the_html_shows_them(
    make_site: SiteMaker,
) -> None:
    tex = _tex(_build(make_site, "latex"))
    html = Path(_build(make_site, "html").outdir)
    found = SUMMARY.findall(tex)
    assert len(found) >= 20, tex[:2000]
    for lines, size, where in found:
        page, _, anchor = _plain(where).partition("#")
        assert page.startswith("torchtrace/train/") and anchor, where
        shown = (html / page).read_text(encoding="utf-8")
        assert f'id="{anchor}"' in shown, f"{page} has no #{anchor}"
        assert int(lines.replace(",", "")) > 40 or size.endswith(("KiB", "MiB"))
    # the compile config (the longest payload of a page) is one of them, and not printed
    assert CONFIG_KEY not in tex
    # the answers stay: the glance, the directory, the graph break with its reason
    for heading in ("At a glance", "Compile directory", "Graph break", "Failures and restarts"):
        assert f"{{{heading}}}" in tex, heading
    assert "Compiled: " in tex and "(5 compile ids, 7 attempts)" in tex


def test_all_prints_every_payload(make_site: SiteMaker) -> None:
    tex = _tex(_build(make_site, "latex", torchtrace_latex_payloads="all"))
    assert SUMMARY.search(tex) is None
    assert CONFIG_KEY in tex


def test_a_bad_payloads_value_warns_and_summarizes(make_site: SiteMaker) -> None:
    app = _build(make_site, "latex", torchtrace_latex_payloads="everything")
    assert "torchtrace_latex_payloads = 'everything' must be 'summary' or 'all'" in (
        warnings_of(app)
    )
    assert SUMMARY.search(_tex(app))


@pytest.mark.parametrize(
    "name",
    [
        "cpp_fused__native_batch_norm_legit_functional_convolution_backward_max_pool2d_with"
        "_indices_backward_native_batch_norm_backward_relu_threshold_backward_3",  # a kernel
        "4f8ad3f05294250352fd5e21b5fd5660ac1cdb69bea566642a38f1d0b600de46",  # the log's sha256
    ],
)
def test_long_names_of_the_trace_may_break(make_site: SiteMaker, name: str) -> None:
    """TeX breaks neither ``_`` nor a digest: such a name carries break points wherever
    the pages print it as text, and reads as the log wrote it (they print nothing)."""
    tex = _tex(_build(make_site, "latex"))
    chars = [re.escape(r"\_" if c == "_" else c) for c in name]
    printed = re.findall(f"(?:{re.escape(BREAK)})?".join(chars), tex)
    assert printed, f"{name} is not in the LaTeX"
    assert all(BREAK in p for p in printed), f"{name} is printed without break points"


def test_with_a_published_site_the_line_links_it(make_site: SiteMaker) -> None:
    """``html_baseurl`` set: each left-out payload links the published page and anchor."""
    tex = _tex(_build(make_site, "latex", html_baseurl="https://example.org/docs/"))
    links = re.findall(r"not printed: the HTML build of these pages shows them at (\\\S+)", tex)
    assert len(links) >= 20
    for link in links:
        assert re.match(
            r"\\sphinx(?:url|href)\{https://example\.org/docs/torchtrace/train/\S+\.html", link
        )
