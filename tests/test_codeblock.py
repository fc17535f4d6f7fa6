"""``torchtrace-code`` takes its settings as words and makes what ``code-block`` makes."""

from __future__ import annotations

import re

from .conftest import SiteMaker

CODE = "def f(x):\n    return x + 1\n\nprint(f(2))"

PAGE = f"""\
:orphan:

Blocks
======

.. code-block:: python
   :force:
   :class: no-search
   :linenos:
   :lineno-start: 5
   :emphasize-lines: 2,4

{"".join("   " + line + chr(10) if line else chr(10) for line in CODE.split(chr(10)))}
.. torchtrace-code:: python linenos start=5 emphasize=2,4

{"".join("   " + line + chr(10) if line else chr(10) for line in CODE.split(chr(10)))}
.. literalinclude:: snippet.txt
   :language: python
   :force:
   :class: no-search

.. torchtrace-code:: python include=snippet.txt

.. torchtrace-code:: text searchable

   a searchable block
"""


def _blocks(html: str) -> list[str]:
    block = r'<div class="no-search highlight-python notranslate">.*?</pre></div>\s*</div>'
    return re.findall(block, html, re.S)


def test_code_blocks_match_code_block_and_literalinclude(make_site: SiteMaker) -> None:
    app = make_site("simple", "html", build=False, pages={"blocks.rst": PAGE})
    (app.srcdir / "snippet.txt").write_text(CODE + "\n", encoding="utf-8")
    app.build()
    assert "blocks.rst" not in app.warning.getvalue()
    html = (app.outdir / "blocks.html").read_text(encoding="utf-8")
    inline_sphinx, inline_ours, included_sphinx, included_ours = _blocks(html)
    assert inline_ours == inline_sphinx
    assert '<span class="hll">' in inline_ours and '<span class="linenos">6</span>' in inline_ours
    assert included_ours == included_sphinx
    assert "x + 1" in re.sub(r"<[^>]+>", "", included_ours)
    # blocks stay out of the search index unless marked searchable
    index = (app.outdir / "searchindex.js").read_text(encoding="utf-8")
    assert '"searchabl' in index and '"print"' not in index


def test_unknown_settings_warn_with_the_page(make_site: SiteMaker) -> None:
    page = (
        ":orphan:\n\nBad\n===\n\n.. torchtrace-code:: python colour=red\n\n   x = 1\n\n"
        ".. torchtrace-code:: python start=one\n\n   y = 2\n"
    )
    app = make_site("simple", "html", pages={"bad.rst": page})
    warnings = app.warning.getvalue()
    assert re.search(r"bad\.rst:\d+: .*unknown settings \['colour'\]", warnings)
    assert re.search(r"bad\.rst:\d+: .*not a line number", warnings)
    assert (app.outdir / "bad.html").is_file()  # the page still builds
