"""Raw downloads (a whole graph, a trace's events): written into the output, never into
the user's source folder.

A download of a log holds as many bytes as the log's payloads (270 MB of a 328 MB log),
so copying it through the docs' sources, as Sphinx's ``:download:`` role needs, put that
much into the user's tree and wrote it twice.  Here each file is written once, straight to
where Sphinx would have copied it (``_downloads/<md5 of its source path>/<name>``, so the
links and the output are the same as before), and only for a builder that publishes
downloads (HTML, dirhtml, singlehtml; never LaTeX, EPUB or text).

The pages' ``download_reference`` nodes name their file ``torchtrace-download://<path>``,
which Sphinx's download collector leaves alone (it takes it for a URL);
:func:`place_downloads` then gives each node the file's name in ``_downloads``, as the
collector would have.  A manifest in the extension's cache lists what was written into
each output folder, so a download no build makes any more is removed from it.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterator
from pathlib import Path
from weakref import WeakKeyDictionary

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

from .files import Content, write_content

#: How a page's node names a generated download (:mod:`.doctree`).
SCHEME = "torchtrace-download://"
#: Sphinx's folder of downloads, in the output.
DOWNLOADS = "_downloads"
#: This build's manifest of the downloads it wrote, by application (read at the end).
_MANIFESTS: WeakKeyDictionary[Sphinx, Path] = WeakKeyDictionary()


def download_name(relpath: str) -> str:
    """Where Sphinx puts the copy of the source file ``relpath`` in ``_downloads``."""
    digest = hashlib.md5(relpath.encode(), usedforsecurity=False).hexdigest()
    return f"{digest}/{posixpath.basename(relpath)}"


def has_downloads(app: Sphinx) -> bool:
    """Whether this build's builder publishes downloads (Sphinx's ``download_support``)."""
    return bool(getattr(app.builder, "download_support", False))


def output_path(app: Sphinx, relpath: str) -> Path:
    return Path(app.outdir) / DOWNLOADS / download_name(relpath)


def place_downloads(app: Sphinx, doctree: nodes.document) -> None:
    """doctree-read, after Sphinx's collector: each generated download's name in the
    output, where its links point in every builder that shows them."""
    for node in doctree.findall(addnodes.download_reference):
        target = node.get("reftarget", "")
        if target.startswith(SCHEME):
            node.attributes.pop("refuri", None)
            node["filename"] = download_name(target[len(SCHEME) :])


def _manifest(app: Sphinx, caches: Path) -> Path:
    """The list of what the extension wrote into this output folder, in its caches."""
    out = Path(app.outdir).resolve()
    name = hashlib.sha256(str(out).encode()).hexdigest()[:16]
    return caches / "torchtrace-downloads" / f"{name}.json"


def _listed(path: Path) -> list[str]:
    try:
        listed = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(listed, list):
        return []
    return [n for n in listed if isinstance(n, str)]


def write_downloads(app: Sphinx, caches: Path, wanted: dict[str, Content]) -> None:
    """Write this build's downloads (by source-relative path; ``None``: kept as it is) into
    the output, and remove the ones an earlier build wrote there that none makes now.
    ``caches``: the extension's cache folder, which keeps the list of what was written."""
    if not has_downloads(app):
        return
    root = (Path(app.outdir) / DOWNLOADS).resolve()
    names = {download_name(relpath): text for relpath, text in wanted.items()}
    for name, text in names.items():
        if text is not None:
            write_content(root / name, text)
    manifest = _manifest(app, caches)
    _MANIFESTS[app] = manifest
    for name in set(_listed(manifest)) - set(names):
        path = (root / name).resolve()
        if path.is_relative_to(root) and path.is_file():
            path.unlink()
            try:
                path.parent.rmdir()
            except OSError:
                pass  # another file is there
    try:
        manifest.parent.mkdir(parents=True, exist_ok=True)
        manifest.write_text(json.dumps(sorted(names), indent=0), encoding="utf-8")
    except OSError:
        pass  # no list: a download no build makes stays, nothing worse


def written_downloads(app: Sphinx) -> Iterator[Path]:
    """The downloads this build's output holds from the extension, as its manifest lists."""
    manifest = _MANIFESTS.get(app)
    if manifest is None:
        return
    root = (Path(app.outdir) / DOWNLOADS).resolve()
    for name in _listed(manifest):
        path = (root / name).resolve()
        if path.is_relative_to(root):
            yield path
