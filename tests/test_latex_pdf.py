"""A PDF of a real trace: ``sphinx-build -M latexpdf`` works out of the box, and reads right.

TeX stops on things trace text is full of (code lines of tens of thousands of
characters, characters no font sets up, line breaks inside inline literals), so
this builds the PDF for real with the TeX set CI installs.  Marked ``latexpdf``;
without ``latexmk`` it is skipped, except in CI, where it fails.

A built PDF is also read as a reader of the printed book would: no line runs into
the margin by more than a few points (TeX's "Overfull \\hbox": a kernel name, a
digest), no link points at nothing (TeX's "undefined reference": a fold only HTML
has), no word of a table heading is hyphenated ("Sta-tus"), no sentence offers a
download a book cannot hold, the answer at a glance is printed once, and the
compile config comes after the status legend, not before it.  The words on the page are read with
``pdftotext`` (poppler-utils) where it is installed, the ``.tex`` otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import DATA, SHARED
from .test_site_invariants import corpus_traces

pytestmark = pytest.mark.latexpdf

TRAINING_LOG = next((SHARED / "training").glob("*.log"))
CORPUS = SHARED.parent / "corpus"
#: The two largest logs of the corpus (27 and 25 MB of text, 82 and 50 compile ids):
#: thousands of lines of generated code per frame, which TeX cannot hold whole.
LARGEST = [
    next((CORPUS / "many_functions").glob("*.log.gz")),
    next((CORPUS / "big_many_models").glob("*.log.gz")),
]
#: The other traces of the corpus (a folder of rank logs is one trace), one book each.
OTHERS = [rel for rel in corpus_traces() if DATA / rel not in LARGEST]


@dataclass
class Book:
    """A PDF built by latexmk, with what TeX said and the words printed."""

    pages: int
    tex: str  # the LaTeX source Sphinx wrote
    log: str  # TeX's log of the last run, its 79-column lines joined again
    text: str | None  # the PDF's words, by pdftotext; None where it is not installed


def _pdf(tmp_path: Path, log: Path) -> Book:
    """Build a PDF of one log (or folder of rank logs) with latexmk."""
    if shutil.which("latexmk") is None:
        if os.environ.get("CI"):
            pytest.fail("latexmk is missing: .ci/run installs the TeX set")
        pytest.skip("latexmk is not installed")
    src = tmp_path / "src"
    src.mkdir()
    name = f"trace{''.join(log.suffixes)}"
    if log.is_dir():
        shutil.copytree(log, src / name)
    else:
        shutil.copy(log, src / name)
    (src / "conf.py").write_text('extensions = ["sphinx_torchtrace"]\nproject = "pdf"\n')
    (src / "index.rst").write_text(f"Trace\n=====\n\n.. torchtrace:: {name}\n")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-M", "latexpdf", str(src), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        errors="replace",  # LaTeX echoes non-ASCII input in its own 8-bit encoding
        timeout=900,
    )
    latex = tmp_path / "out" / "latex"
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (latex / "pdf.pdf").stat().st_size > 100_000  # every page of the site is in it
    said = _joined_log((latex / "pdf.log").read_text(encoding="latin-1"))
    written = re.search(r"Output written on pdf\.pdf \((\d+) pages", said)
    assert written, said[-2000:]
    text = None
    if shutil.which("pdftotext"):
        out = subprocess.run(
            ["pdftotext", "-layout", "-enc", "UTF-8", str(latex / "pdf.pdf"), "-"],
            capture_output=True,
            check=True,
            timeout=300,
        )
        text = out.stdout.decode("utf-8", "replace")
    tex = (latex / "pdf.tex").read_text(encoding="utf-8")
    return Book(int(written.group(1)), tex, said, text)


def _joined_log(log: str) -> str:
    """TeX breaks its log's lines at 79 characters, names of labels included."""
    return re.sub(r"^(.{79})\n", r"\1", log, flags=re.MULTILINE)


def undefined_references(book: Book) -> list[str]:
    """The labels TeX found no target for, after latexmk's last run: links to nothing."""
    return re.findall(r"(?:Hyper reference|Reference) `([^']*)' on page \d+ undefined", book.log)


def heading_words(tex: str) -> set[str]:
    """The words of table headings (header rows, stub columns), as Sphinx writes them,
    but those a body cell holds too (the PDF's text cannot tell the two apart)."""

    def words(cells: list[str]) -> set[str]:
        return {
            w
            for cell in cells
            for w in re.findall(r"[A-Za-z]+", re.sub(r"\\[a-zA-Z]+", " ", cell))
            if len(w) >= 5
        }  # TeX hyphenates no shorter word

    heads = re.findall(r"\\sphinxstyletheadfamily \\sphinxAtStartPar\n(.*?)\n\\sphinx", tex)
    cells = re.findall(
        r"\\begin\{varwidth\}\[t\]\{[^\n]*\}\n\\sphinxAtStartPar\n(.*?)\n\\sphinx", tex
    )
    return words(heads) - words(cells)


def hyphenated(text: str, words: set[str]) -> list[str]:
    """Words of ``words`` that a table cell of the PDF breaks across lines: ``Sta-`` on
    one line and ``tus`` right under it (``pdftotext -layout`` keeps the columns; a word
    a paragraph breaks goes on at the start of the next line, which is no heading's)."""
    lines = text.split("\n")
    found = set()
    for word in words:
        for cut in range(2, len(word) - 1):
            head = re.compile(rf"(?<![A-Za-z]){re.escape(word[:cut])}-(?=\s|$)")
            tail = re.compile(rf"(?<![A-Za-z]){re.escape(word[cut:])}(?![A-Za-z])")
            for line, below in zip(lines, lines[1:], strict=False):
                starts = {m.start() for m in tail.finditer(below)}
                if any(abs(m.start() - s) <= 2 for m in head.finditer(line) for s in starts):
                    found.add(f"{word[:cut]}-{word[cut:]}")
    return sorted(found)


#: How far a line may run into the margin: TeX reports boxes a hair too wide, which no
#: reader sees; a name running off the page is tens or hundreds of points.
OVERFULL_PT = 5.0


def overfull(book: Book) -> list[str]:
    """Lines TeX could not keep inside the margin by more than :data:`OVERFULL_PT`, with
    what they hold (TeX's next log line)."""
    boxes = re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\)[^\n]*\n([^\n]*)", book.log)
    return [f"{w}pt: {what[:120]}" for w, what in boxes if float(w) > OVERFULL_PT]


def check_print(book: Book) -> None:
    """What a reader of the printed book would notice, for any trace."""
    assert undefined_references(book) == []
    assert overfull(book) == []
    assert "multiply defined" not in book.log
    words = book.text if book.text is not None else book.tex
    assert "is a download" not in words and "script to download" not in words
    assert "at a glance:" not in words  # the directive's glance: the overview follows it
    assert len(re.findall(r"\{At a glance\}", book.tex)) == 1
    if book.text is not None:
        assert hyphenated(book.text, heading_words(book.tex)) == []


def test_training_trace_makes_a_pdf(tmp_path: Path) -> None:
    book = _pdf(tmp_path, TRAINING_LOG)
    assert book.pages > 20
    check_print(book)
    assert heading_words(book.tex) >= {"Status", "Kernels", "Artifacts", "Compilations"}
    if book.text is None:
        return
    # no word offers a file: the record is a line of the log, the timeline the HTML's
    assert "download" not in book.text.lower()
    assert "The whole compilation_metrics record is line 4785 of the log." in book.text
    # the glance once, then the header, the legend, and the compile config after them: a
    # line saying where the HTML shows it (torchtrace_latex_payloads = "summary")
    glance = "Compiled: 5 functions (5 compile ids, 7 attempts): 2 ok, 3 empty"
    assert book.text.count(glance) == 1
    legend = book.text.index("Status legend\n")
    assert book.text.index("Full compile configuration follows") < legend
    config = book.text.index("Full compile configuration\n")
    assert legend < config
    assert '"dynamo_config"' not in book.text
    assert re.match(
        r"[\d,]+ lines \([\d.]+ KiB\), not printed", book.text[config:].split("\n", 2)[1]
    )
    # a trace's answers in a few dozen pages, not the 144 of its payloads printed
    assert book.pages < 80, book.pages


def test_table_headings_are_checked_for_hyphens() -> None:
    """The check above sees a heading TeX broke, as the PDFs of the report showed it, and
    not the same word broken at the end of a paragraph's line."""
    text = "Compile   Function   Sta-    Time\nid                   tus\n"
    assert hyphenated(text, {"Status", "Function"}) == ["Sta-tus"]
    assert hyphenated("Status   Time\nok      1 s\n", {"Status"}) == []
    paragraph = "options that differ from Py-\nTorch's usual defaults\n"
    assert hyphenated(paragraph, {"PyTorch"}) == []


@pytest.mark.parametrize(
    ("name", "most_pages"),
    # 41 and 129 pages with their payloads printed (torchtrace_latex_payloads = "all")
    [("aoti_mlp", 25), ("scan_errors", 90)],
)
def test_corpus_traces_print_inside_the_margin(tmp_path: Path, name: str, most_pages: int) -> None:
    """Kernel names (``aoti_mlp``: ``cpp_fused__adaptive_avg_pool2d__native_batch_norm_
    legit_no_training_relu_1`` in a table cell), exception names in a narrow column
    (``scan_errors``: ``UncapturedHigherOrderOpError``) and the log's sha256 break inside
    the margin: no overfull box a reader would see, the whole corpus in ``corpus_slow``."""
    book = _pdf(tmp_path, next((CORPUS / name).glob("*.log*")))
    check_print(book)
    assert book.pages <= most_pages, book.pages


@pytest.mark.corpus_slow
@pytest.mark.parametrize("log", LARGEST, ids=lambda p: p.parent.name)
def test_the_largest_traces_make_a_pdf_of_sane_length(tmp_path: Path, log: Path) -> None:
    """Large payloads are a line saying where the HTML build shows them, and long code in
    an answer an excerpt with a note: hundreds of pages for a 25 MB log at most, not tens
    of thousands, and TeX's memory is never exceeded."""
    book = _pdf(tmp_path, log)
    assert 10 < book.pages < 1000, book.pages
    check_print(book)


@pytest.mark.corpus_slow
@pytest.mark.parametrize("rel", OTHERS)
def test_every_corpus_trace_prints_right(tmp_path: Path, rel: str) -> None:
    check_print(_pdf(tmp_path, DATA / rel))
