"""The extension's stylesheets, scripts and LaTeX style, without touching the user's config.

Sphinx copies ``html_static_path`` into ``_static/``; an extension that appends its own
folder there changes the configuration Sphinx pickles, so every next build says "The
configuration has changed (html_static_path)", and an EPUB build packs the LaTeX style
too (an unknown mimetype: ``-W -b epub`` fails).  Instead the web assets are written
into the output's ``_static/`` when the builder starts (only when their bytes differ,
so a watcher such as sphinx-autobuild is not woken), and the LaTeX style goes to
``latex_additional_files`` of a LaTeX build alone.

The web assets are one stylesheet and one script, and only the pages that show something
of the extension (a class or raw block of its own: a report page, a role, a provenance
block) load them: the user's other pages load nothing more than without the extension.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.config import Config

STATIC = Path(__file__).parent.parent / "static"
#: (file, kind): the web assets of a page that shows something of the extension.
WEB_ASSETS = (
    ("sphinx-torchtrace.css", "css"),
    ("sphinx-torchtrace.js", "js"),  # opens folds at anchors, stacks tables, provenance
)
LATEX_STYLE = "sphinxtorchtrace.sty"
#: The prefix of every class the extension gives a node or writes in raw HTML.
CLASS_PREFIX = "torchtrace"
_RAW_CLASS = re.compile(rf'class="[^"]*\b{CLASS_PREFIX}')


def add_assets(app: Sphinx) -> None:
    """builder-inited: the assets of this builder's format."""
    if app.builder.format == "latex":
        # any character of a trace prints, whatever the fonts, and table headings
        # whole (see the .sty file)
        app.config.latex_additional_files = [
            *app.config.latex_additional_files,
            str(STATIC / LATEX_STYLE),
        ]
        app.add_latex_package(LATEX_STYLE.removesuffix(".sty"))
    if app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for name, _kind in WEB_ASSETS:
        _copy_if_changed(STATIC / name, static / name)
    app.connect("html-page-context", page_assets)


def page_assets(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """html-page-context: the assets, on a page that shows something of the extension
    (Sphinx adds a file given here to this page alone)."""
    if not isinstance(doctree, nodes.Node) or not uses_extension(doctree):
        return
    for name, kind in WEB_ASSETS:
        if kind == "css":
            app.add_css_file(name)
        else:
            app.add_js_file(name, loading_method="defer")


def uses_extension(doctree: nodes.Node) -> bool:
    """Whether a page's doctree holds a node of the extension's classes or raw HTML
    written with them."""
    for node in doctree.findall(nodes.Element):
        classes: list[str] = node.get("classes", [])
        if any(str(c).startswith(CLASS_PREFIX) for c in classes):
            return True
        if isinstance(node, nodes.raw) and _RAW_CLASS.search(node.astext()):
            return True
    return False


def settle_static_path(app: Sphinx) -> None:
    """builder-inited, after every extension's handler: folders an extension appended to
    ``html_static_path`` when the builder started (sphinx-design does) are copied into
    ``_static/`` here and taken out of the setting again.  Sphinx pickles the setting
    with the environment, compares it with a fresh one on the next build and would say
    "The configuration has changed (html_static_path)" on every build; the user's own
    folders stay as they are."""
    if app.builder.format != "html":
        return
    paths = app.config.html_static_path
    user = set(getattr(app.config, "_torchtrace_user_static", paths))
    added = [entry for entry in paths if entry not in user and Path(entry).is_absolute()]
    if not added:
        return
    static = Path(app.outdir) / "_static"
    for entry in added:
        folder = Path(entry)
        for source in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if source.is_file():
                _copy_if_changed(source, static / source.relative_to(folder))
    app.config.html_static_path = [entry for entry in paths if entry not in added]


def remember_static_path(app: Sphinx, config: Config) -> None:
    """config-inited: the ``html_static_path`` the user's configuration gives."""
    config._torchtrace_user_static = list(config.html_static_path)


def _copy_if_changed(source: Path, dest: Path) -> None:
    data = source.read_bytes()
    try:
        if dest.read_bytes() == data:
            return
    except OSError:
        pass
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
