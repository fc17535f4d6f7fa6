"""A frame role names its trace in every builder when its page links frames of several.

``[0/0]`` of one trace and ``[0/0]`` of another read the same in text, man and PDF, where
no hover title tells them apart: on such a page each role shows its trace's label
(``simple/[0/0]``); on a page of one trace it stays the short ``[0/0]``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import SiteMaker, warnings_of

PAGES = {
    "index.rst": (
        "Two runs\n========\n\n"
        ".. toctree::\n\n   one\n\n"
        ".. torchtrace:: @DATA@/shared/simple/dedicated_log_torch_trace_5aek85xk.log\n"
        "   :name: simple\n\n"
        ".. torchtrace:: @DATA@/shared/recompiles/dedicated_log_torch_trace_afr5b1tf.log\n"
        "   :name: recompiles\n\n"
        "First :torchtrace:frame:`simple/[0/0]`, then :torchtrace:frame:`recompiles/[0/0]`.\n"
    ),
    "one.rst": "One run\n=======\n\nOnly :torchtrace:frame:`simple/[0/0]` here.\n",
}


def _words(path: Path) -> str:
    """The file's words; LaTeX's braces around brackets (``{[}0/0{]}``), its break points in
    long names and man's escapes dropped."""
    text = path.read_text(encoding="utf-8").replace("\\sphinxtorchtracebreak{}", "")
    text = text.replace("{[}", "[").replace("{]}", "]")
    return " ".join(text.replace("\\", "").split())


@pytest.mark.parametrize(
    ("builder", "index", "one"),
    [
        ("text", "index.txt", "one.txt"),
        ("man", "*.1", None),
        ("latex", "*.tex", None),
    ],
)
def test_roles_name_their_trace_where_a_page_links_several(
    make_site: SiteMaker, builder: str, index: str, one: str | None
) -> None:
    app = make_site("simple", builder, pages=PAGES)
    assert "torchtrace.ref" not in warnings_of(app)
    out = Path(app.outdir)
    shown = _words(next(out.glob(index)))
    first = shown.index("First ")
    said = shown[first : first + 600]  # LaTeX wraps each role in its classes
    assert "simple/[0/0]" in said and "recompiles/[0/0]" in said, said
    if one is not None:  # a page of one trace keeps the short id
        page = _words(out / one)
        assert re.search(r"Only \*?\[0/0\]\*? here", page), page
