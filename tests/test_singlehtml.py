"""The ``singlehtml`` builder's one page, read the way a reader clicks through it.

Every page of the site is on one page there, so every internal link is a fragment
(``#id``) of it.  What a reader notices when that breaks: a link that does not move
(``#document-<page>#<id>``, two ``#``, or an id the page lacks), a link that lands on
the same-named section of another page (every frame page has its ``Artifacts``), a
compile-id badge that goes nowhere, a graph or kernel page missing from the page.
Sphinx's own ``¶`` links of headings point at a heading's first id, as Sphinx writes
them: they are not ours to move and are left out of the ambiguity check.
"""

from __future__ import annotations

import bisect
import html
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.sphinxext.domain import TorchTraceDomain

from .conftest import DATA, SiteMaker, copy_testroot, warnings_of, write_page
from .test_site_invariants import BIG_BYTES, _size, all_traces

#: Logs the sample site adds to the ``multi`` root (compile errors, restarts, a training
#: run, two ranks): recompiles, and a provenance log with its kernels.
SAMPLE = {
    "recompiles": "shared/recompiles/dedicated_log_torch_trace_afr5b1tf.log",
    "provenance": "shared/provenance/dedicated_log_torch_trace_0ptegd0d.log",
}
#: Small enough that graphs and their kernels get pages of their own.
PAGED = {"torchtrace_fold_bytes": 2000}


@dataclass
class Link:
    href: str
    classes: list[str]
    title: str
    badge: bool  # a compile-id badge (``:torchtrace:frame:``, the pages' own)


@dataclass
class OnePage:
    """What the reader's browser sees of the one page: its ids, in order, and links."""

    ids: Counter[str] = field(default_factory=Counter)
    first: dict[str, int] = field(default_factory=dict)  # id -> its first tag's position
    documents: list[tuple[int, str]] = field(default_factory=list)  # where each page starts
    links: list[Link] = field(default_factory=list)

    def document_at(self, node_id: str) -> str | None:
        """The page (docname) whose part of the one page holds ``node_id``'s element: the
        last page started before it (nested pages start after their parent's content)."""
        where = self.first.get(node_id)
        if where is None:
            return None
        i = bisect.bisect_right(self.documents, (where, "\uffff")) - 1
        return self.documents[i][1] if i >= 0 else None


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = OnePage()
        self.tags = 0
        self.open_link: Link | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags += 1
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        if node_id := a.get("id"):
            self.page.ids[node_id] += 1
            self.page.first.setdefault(node_id, self.tags)
            if node_id.startswith("document-"):
                self.page.documents.append((self.tags, node_id[len("document-") :]))
        if tag == "a" and "href" in a:
            self.open_link = Link(a["href"], classes, a.get("title", ""), False)
            self.page.links.append(self.open_link)
        elif self.open_link is not None and "torchtrace-badge" in classes:
            self.open_link.badge = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self.open_link = None


def read_page(path: Path) -> OnePage:
    parser = _Parser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser.page


def link_problems(page: OnePage) -> list[str]:
    """Every in-page link that does not move the reader to its one target."""
    problems: list[str] = []
    for link in page.links:
        href = html.unescape(link.href)
        if href.count("#") > 1:
            problems.append(f"two fragments: {href}")
        elif href.startswith("#") and href != "#":  # "#" is the top of the page
            target = href[1:]
            if not page.ids[target]:
                problems.append(f"dead: {href}")
            elif page.ids[target] > 1 and "headerlink" not in link.classes:
                problems.append(f"{page.ids[target]} targets: {href}")
    return sorted(set(problems))


def generated_docnames(srcdir: Path, gen_dir: str = "torchtrace") -> list[str]:
    """Every generated page of the build (its stub), as a docname."""
    root = srcdir / gen_dir
    return sorted(
        p.relative_to(srcdir).with_suffix("").as_posix()
        for p in root.rglob("*")
        if p.suffix in (".rst", ".md") and "_raw" not in p.relative_to(root).parts
    )


def missing_pages(
    page_path: Path, page: OnePage, docnames: Iterable[str], titles: dict[str, str]
) -> list[str]:
    """Generated pages whose part of the one page is absent, or lacks the page's title."""
    text = page_path.read_text(encoding="utf-8")
    missing: list[str] = []
    for docname in docnames:
        start = text.find(f'<span id="document-{docname}"></span>')
        if start < 0:
            missing.append(docname)
            continue
        end = text.find('<span id="document-', start + 1)
        shown = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text[start:end])).split())
        title = " ".join(titles.get(docname, "").split())
        if title and title not in shown:
            missing.append(f"{docname} (no {title!r})")
    return missing


def badge_problems(page: OnePage, domain: TorchTraceDomain) -> list[str]:
    """Each compile-id badge moves to its frame's anchor, on that frame's page."""
    problems: list[str] = []
    for link in (x for x in page.links if x.badge):
        name = link.title.rsplit(" (", 1)[0]  # "errors/[0/0] (failed)"
        found = domain.find("frame", name)
        if found is None:
            problems.append(f"badge of no frame: {link.title!r}")
            continue
        docname, node_id, _status = found[1]
        target = link.href[1:] if link.href.startswith("#") else ""
        if target != node_id or page.document_at(target) != docname:
            problems.append(f"{name}: {link.href} lands in {page.document_at(target)}")
    return problems


# -- a sample site: several traces, graph and kernel pages, badges ---------------------------


def _sample_pages() -> dict[str, str]:
    """The ``multi`` root's index and pages, and one page per :data:`SAMPLE` log."""
    names = ("errors", "training", "ranks", *SAMPLE)
    pages = {
        "index.rst": "Several traces\n==============\n\n.. toctree::\n\n"
        + "".join(f"   {n}\n" for n in names)
    }
    for name, rel in SAMPLE.items():
        pages[f"{name}.rst"] = (
            f"{name.title()}\n{'=' * len(name)}\n\n.. torchtrace:: @DATA@/{rel}\n"
            f"   :name: {name}\n\nThe first compile: :torchtrace:frame:`{name}/[0/0]`.\n"
        )
    return pages


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> SphinxTestApp:
    """The ``multi`` root and :data:`SAMPLE`, built once with singlehtml."""
    srcdir = copy_testroot("multi", tmp_path_factory.mktemp("single") / "site")
    for name, text in _sample_pages().items():
        write_page(srcdir, name, text)
    app = SphinxTestApp(
        "singlehtml",
        srcdir=srcdir,
        freshenv=True,
        status=StringIO(),
        warning=StringIO(),
        confoverrides={
            "show_warning_types": True,
            "torchtrace_graph_break_registry": False,
            **PAGED,
        },
    )
    try:
        app.build()
    finally:
        app.cleanup()  # the env stays readable
    return app


def _titles(app: SphinxTestApp) -> dict[str, str]:
    return {d: t.astext() for d, t in app.env.titles.items()}


def _domain(app: SphinxTestApp) -> TorchTraceDomain:
    domain = app.env.get_domain("torchtrace")
    assert isinstance(domain, TorchTraceDomain)
    return domain


def test_every_link_of_the_one_page_moves_to_its_target(sample: SphinxTestApp) -> None:
    assert warnings_of(sample) == ""
    page = read_page(sample.outdir / "index.html")
    assert len([x for x in page.links if x.href.startswith("#")]) > 500
    assert link_problems(page) == []


def test_graph_and_kernel_pages_are_on_the_one_page(sample: SphinxTestApp) -> None:
    docnames = generated_docnames(Path(sample.srcdir))
    details = [d for d in docnames if "/graph-" in d or "/kernel-" in d]
    assert len([d for d in details if "/kernel-" in d]) >= 5, details
    assert len([d for d in details if "/graph-" in d]) >= 10, details
    path = sample.outdir / "index.html"
    assert missing_pages(path, read_page(path), docnames, _titles(sample)) == []


def test_badges_move_to_their_compile(sample: SphinxTestApp) -> None:
    page = read_page(sample.outdir / "index.html")
    badges = [x for x in page.links if x.badge]
    # the users' pages' badges, and the generated pages' (a restart's, a recompile's)
    titles = {x.title.rsplit(" (", 1)[0] for x in badges}
    assert {
        "errors/[0/0]#2",
        "errors/[3/0_1]",
        "ranks/rank1/[0/0]",
        "recompiles/[0/0]",
        "provenance/[0/0]",
    } <= titles
    assert len(badges) > 50
    assert badge_problems(page, _domain(sample)) == []


def test_a_section_link_lands_on_its_own_trace(sample: SphinxTestApp) -> None:
    """Every overview has a ``compile directory``: the glance of each trace links its own."""
    page = read_page(sample.outdir / "index.html")
    for label in ("errors", "training", "recompiles"):
        overview = f"torchtrace/{label}/index"
        links = [
            x.href[1:]
            for x in page.links
            if x.href.startswith("#")
            and "compile-directory" in x.href
            and page.document_at(x.href[1:]) == overview
        ]
        assert links, label
    ids = [i for i in page.ids if i.endswith("compile-directory")]
    assert len({page.document_at(i) for i in ids}) >= 5  # one per overview


def test_the_simple_root_and_myst(make_site: SiteMaker) -> None:
    """The smallest site (its badges on the user's page) and a MyST one, with -W."""
    for root in ("simple", "myst"):
        app = make_site(root, "singlehtml", warningiserror=True, confoverrides=PAGED)
        page = read_page(app.outdir / "index.html")
        assert link_problems(page) == [], root
        assert badge_problems(page, _domain(app)) == [], root
        assert [x for x in page.links if x.badge], root
        docnames = generated_docnames(Path(app.srcdir))
        assert missing_pages(app.outdir / "index.html", page, docnames, _titles(app)) == []


def test_after_html_in_the_same_build_folder(make_site: SiteMaker) -> None:
    """``make html singlehtml`` (``sphinx-build -M``) shares one environment: the single
    page still gets every graph and kernel page, and html after it none in its toctrees."""
    first = make_site("multi", "html", confoverrides=PAGED)
    srcdir = Path(first.srcdir)
    docnames = generated_docnames(srcdir)
    details = {d for d in docnames if "/graph-" in d or "/kernel-" in d}
    assert details
    single = make_site("multi", "singlehtml", srcdir=srcdir, freshenv=False, confoverrides=PAGED)
    path = single.outdir / "index.html"
    page = read_page(path)
    assert missing_pages(path, page, docnames, _titles(single)) == []
    assert link_problems(page) == []
    again = make_site("multi", "html", srcdir=srcdir, freshenv=False, confoverrides=PAGED)
    listed = {d for docs in again.env.toctree_includes.values() for d in docs}
    assert not details & listed  # orphans again: the sidebar does not list thousands
    assert warnings_of(again) == ""


# -- every bundled trace (corpus) -------------------------------------------------------------


def _single_site(tmp: Path, traces: list[str]) -> SphinxTestApp:
    srcdir = copy_testroot("simple", tmp / "site")
    labels = {f"t{i:03d}": rel for i, rel in enumerate(traces)}
    index = "All traces\n==========\n\n.. toctree::\n\n" + "".join(f"   {n}\n" for n in labels)
    write_page(srcdir, "index.rst", index)
    for name, rel in labels.items():
        page = f"{name}\n{'=' * len(name)}\n\n.. torchtrace:: @DATA@/{rel}\n   :name: {name}\n"
        write_page(srcdir, f"{name}.rst", page)
    app = SphinxTestApp(
        "singlehtml",
        srcdir=srcdir,
        freshenv=True,
        status=StringIO(),
        warning=StringIO(),
        confoverrides={"show_warning_types": True},
    )
    try:
        app.build()
    finally:
        app.cleanup()
    return app


@pytest.mark.corpus_slow
@pytest.mark.parametrize("big", [False, True], ids=["small", "big"])
def test_every_trace_on_one_page(tmp_path: Path, big: bool) -> None:
    traces = [t for t in all_traces() if (_size(t) > BIG_BYTES) == big]
    if not traces:
        pytest.skip("no such trace")
    assert all((DATA / t).exists() for t in traces)
    app = _single_site(tmp_path, traces)
    path = app.outdir / "index.html"
    page = read_page(path)
    assert link_problems(page) == []
    assert badge_problems(page, _domain(app)) == []
    docnames = generated_docnames(Path(app.srcdir))
    assert missing_pages(path, page, docnames, _titles(app)) == []
