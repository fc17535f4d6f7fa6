"""Generate the pages of every directive's input at ``builder-inited``: stubs on disk.

Sphinx reads only documents that exist as files, so each page of an input is a small
stub in a folder the extension owns (``torchtrace_generated_dir``; :mod:`.files`).
Here the sources are scanned for each family's directives (:mod:`.scan`), each
directive's input is handed to the first of its family's handlers that accepts it
(:mod:`.families`), which reads, plans and registers it (:mod:`.built`) and says which
stubs and downloads it wants; then what changed is written.  This module knows no
family or handler by name.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from . import families
from .built import built
from .cache_dirs import settle_caches
from .config import torchtrace_config
from .downloads import write_downloads
from .families.base import Context
from .files import stub_format, write_all
from .moved import note_moved
from .scan import resolve_argument, scan_sources
from .warnings import OPTION


def generate_pages(app: Sphinx) -> None:
    """builder-inited: read every directive's input and (re)write its stubs and downloads."""
    config = torchtrace_config(app.config)
    suffix, parser = stub_format(app)
    registry = built(app)
    registry.clear()
    context = Context(
        app=app,
        config=config,
        built=registry,
        gen_dir=config.generated_dir,
        suffix=suffix,
        parser=parser,
        caches=settle_caches(app),
        # builders that assemble one document need graph and kernel pages in a toctree
        detail_toctree=app.builder.name not in ("html", "dirhtml", "linkcheck"),
    )
    registry.detail_toctree = context.detail_toctree  # pages read for another: again
    for family in families.FAMILIES:
        requests = scan_sources(app, config.generated_dir, family.name)
        for request in requests:  # grows: a debug folder adds the trace logs of its run
            request.path = resolve_argument(
                request.argument, context.source_dir(request), app.srcdir
            )
            try:
                options = family.options.parse(request.raw_options)
            except ValueError as err:
                context.fail(request, family.name, str(err), OPTION)
                continue
            handler = family.handler_for(request.path, options)
            requests.extend(handler.generate(context, request, options))
    for done in context.finish:
        done()
    for family in families.FAMILIES:
        if family.finish is not None:
            family.finish(context)
    registry.origins.update((f, (r.docname, r.line)) for f, r in context.folders.items())
    note_moved(app, registry)
    added = any(path.suffix == suffix and not path.exists() for path in context.wanted)
    removed = write_all(Path(app.srcdir) / config.generated_dir, context.wanted)
    write_downloads(app, context.caches, context.downloads)
    registry.pages_changed = added or any(r.endswith(suffix) for r in removed)
    _remove_outputs(app, config.generated_dir, suffix, removed)


def rewrite_navigation(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """env-updated: when this build added or removed generated pages, every page again.
    A theme's navigation (furo's sidebar, the global toctree) lists every page, and Sphinx
    writes only the pages that changed: the others kept links to a recaptured trace's
    removed pages (thousands of dead links in the demo after a rebuild), or lacked its new
    ones."""
    return sorted(env.found_docs) if built(app).pages_changed else []


def _remove_outputs(app: Sphinx, gen_dir: str, suffix: str, removed: list[str]) -> None:
    """The output pages of stubs the extension no longer writes (a recaptured trace with
    fewer compiles): Sphinx forgets the documents but leaves their HTML, which would stay
    published, out of the search index.  Only those files, by name, inside the output."""
    outfile = getattr(app.builder, "get_outfilename", None)
    if app.builder.format != "html" or outfile is None:
        return
    outdir = Path(app.outdir).resolve()
    for relpath in removed:
        if not relpath.endswith(suffix):
            continue  # not a page (a download of an earlier version)
        docname = f"{gen_dir}/{relpath[: -len(suffix)]}"
        for path in (
            Path(outfile(docname)),
            Path(app.outdir) / "_sources" / f"{docname}{suffix}.txt",
        ):
            try:
                inside = path.resolve().is_relative_to(outdir)
                if inside and path.is_file():
                    path.unlink()
            except OSError:
                continue
