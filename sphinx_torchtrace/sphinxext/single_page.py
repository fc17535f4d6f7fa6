"""Links of the ``singlehtml`` builder's one page: each lands where it points.

The builder puts every document of the toctree on one page, each after a
``<span id="document-<docname>">``, and links another document as
``#document-<docname>``.  Two things go wrong there, for our pages and any other:

- a link to an anchor of another document is ``get_relative_uri`` plus ``#`` plus the
  id, ``#document-<docname>#<id>``: two fragments, a link that goes nowhere.  Sphinx
  7.3 cut them down to the last fragment afterwards (``fix_refuris``); Sphinx 9 no
  longer does (sphinx-doc/sphinx#14221);
- ids are unique within a document only, and on one page they repeat: every frame
  page has its ``artifacts`` section, every page its ``id1``, so ``#artifacts`` would
  land on the first frame's.

Once every reference of the assembled page is made (``doctree-resolved``, late), each
link to a document of the page becomes one fragment: the id of its target in that
target's own document, or, where other documents use the id too, an alias added to
the target (``<docname>/<id>``: docutils makes no id with a slash).  A link within a
document whose id repeats elsewhere is pointed at its own document's target the same
way.  The theme's navigation (the ``toc`` of the sidebar, the ``toctree()`` of furo or
the Read the Docs theme) is made by Sphinx as HTML after the page's body, with the same
double fragments: its links are given the ids made for it before the body was written.
Other builders, and documents not on the page, are left as they are.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.builders.singlehtml import SingleFileHTMLBuilder

_PREFIX = "#document-"
#: A link of Sphinx's navigation HTML to an anchor of another document of the page.
_NAV_HREF = re.compile(r'href="#document-([^"#]*)#([^"]*)"')


class SinglePage:
    """The documents of one assembled page and where each id of each lies."""

    def __init__(self, document: nodes.document, root_doc: str) -> None:
        self.docnames: set[str] = {root_doc}
        self._where: dict[tuple[str, str], nodes.Element] = {}
        self._uses: Counter[str] = Counter()
        self._doc_of: dict[int, str] = {}  # id(reference node) -> its document
        stack: list[tuple[nodes.Node, str]] = [(document, root_doc)]
        while stack:  # not recursive: one page may nest thousands of documents
            node, docname = stack.pop()
            if not isinstance(node, nodes.Element):
                continue
            if isinstance(node, addnodes.start_of_file):
                docname = node["docname"]
                self.docnames.add(docname)
            for node_id in node["ids"]:
                self._uses[node_id] += 1
                self._where.setdefault((docname, node_id), node)
            if isinstance(node, nodes.reference):
                self._doc_of[id(node)] = docname
            stack.extend((child, docname) for child in reversed(node.children))

    def document_of(self, reference: nodes.reference) -> str | None:
        """The document a reference of the page was written in."""
        return self._doc_of.get(id(reference))

    def href(self, docname: str, anchor: str = "") -> str | None:
        """``#<id>`` for ``anchor`` of ``docname``, ``#document-<docname>`` for the document
        (or where it has no such anchor), None for a document not on the page."""
        if docname not in self.docnames:
            return None
        node_id = self.target_id(docname, anchor) if anchor else None
        return "#" + node_id if node_id is not None else _PREFIX + docname

    def target_id(self, docname: str, anchor: str) -> str | None:
        """An id of ``docname``'s target ``anchor`` that nothing else on the page has; an
        alias is added to the target when its own ids all repeat elsewhere."""
        target = self._where.get((docname, anchor))
        if target is None:
            return None
        if self._uses[anchor] == 1:
            return anchor
        ids: list[str] = target["ids"]
        for node_id in ids:
            if self._uses[node_id] == 1:
                return node_id
        alias, n = f"{docname}/{anchor}", 1
        while self._uses[alias]:
            n += 1
            alias = f"{docname}/{anchor}-{n}"
        ids.append(alias)
        self._uses[alias] += 1
        return alias

    def fixed_navigation(self, markup: str) -> str:
        """Sphinx's navigation HTML with each ``#document-<doc>#<id>`` link made one
        fragment (ids already made: the body is written by then)."""

        def fix(match: re.Match[str]) -> str:
            docname, anchor = html.unescape(match[1]), html.unescape(match[2])
            target = self._where.get((docname, anchor))
            ids = [] if target is None else [i for i in target["ids"] if self._uses[i] == 1]
            href = "#" + ids[0] if ids else self.href(docname)
            return match[0] if href is None else f'href="{html.escape(href)}"'

        return _NAV_HREF.sub(fix, markup)


_PAGES: WeakKeyDictionary[nodes.document, SinglePage] = WeakKeyDictionary()


def single_page(document: nodes.document, root_doc: str) -> SinglePage:
    """The page's map, made once per assembled page (links and later handlers share it)."""
    page = _PAGES.get(document)
    if page is None:
        page = _PAGES[document] = SinglePage(document, root_doc)
    return page


def is_single_page(app: Sphinx, docname: str) -> bool:
    """Whether this resolved doctree is the one page of a ``singlehtml`` build."""
    return isinstance(app.builder, SingleFileHTMLBuilder) and docname == app.config.root_doc


def fix_single_page_links(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Each internal link of the one page: one fragment, its target's own id."""
    if not is_single_page(app, docname):
        return
    page = single_page(doctree, docname)
    for ref in doctree.findall(nodes.reference):
        refuri = ref.get("refuri")
        if refuri is not None:
            if refuri.startswith(_PREFIX):
                target, _, anchor = refuri[len(_PREFIX) :].partition("#")
                href = page.href(target, anchor)
                if href is not None:
                    ref["refuri"] = href
            continue
        refid = ref.get("refid")
        home = page.document_of(ref)
        if refid and home is not None:
            own = page.target_id(home, refid)
            if own is not None and own != refid:
                ref["refid"] = own


def prepare_navigation(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """The ids the navigation will link (each document's sections), made while the body
    can still carry them."""
    if not is_single_page(app, docname):
        return
    page = single_page(doctree, docname)
    for doc in sorted(page.docnames):
        toc = app.env.tocs.get(doc)
        for ref in toc.findall(nodes.reference) if toc is not None else ():
            anchor = ref.get("anchorname", "")
            if anchor.startswith("#") and len(anchor) > 1:
                page.target_id(doc, anchor[1:])


def fix_navigation(
    app: Sphinx,
    pagename: str,
    templatename: str,
    context: dict[str, Any],
    doctree: nodes.document | None,
) -> None:
    """html-page-context: the sidebar's ``toc`` and the themes' ``toctree()``, fixed."""
    page = _PAGES.get(doctree) if doctree is not None else None
    if page is None or not is_single_page(app, pagename):
        return
    if isinstance(context.get("toc"), str):
        context["toc"] = page.fixed_navigation(context["toc"])
    toctree = context.get("toctree")
    if callable(toctree):
        context["toctree"] = _fixed_toctree(toctree, page)


def _fixed_toctree(toctree: Callable[..., str], page: SinglePage) -> Callable[..., str]:
    def fixed(**kwargs: Any) -> str:
        return page.fixed_navigation(toctree(**kwargs))

    return fixed


def setup_single_page(app: Sphinx) -> None:
    """After every other handler has made its references (todo lists, ours); the
    navigation before the themes' own handlers (500) call ``toctree()``."""
    app.connect("doctree-resolved", fix_single_page_links, priority=900)
    app.connect("doctree-resolved", prepare_navigation, priority=902)
    app.connect("html-page-context", fix_navigation, priority=400)


__all__ = ["SinglePage", "is_single_page", "setup_single_page", "single_page"]
