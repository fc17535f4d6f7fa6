"""After the build, a last look for machine paths that the rewrites did not hide.

Path rewrites (:mod:`..render.paths`) know home directories, site-packages, Python's
prefix, inductor's cache and the project's root; a trace can still hold others (a
cluster's ``/scratch/alice/...``, a Windows checkout).  At ``build-finished`` the
files the extension made are scanned: the HTML of its generated pages and its
downloads, found through the generated folder's manifest, so nothing else of the
project is read.  Surviving absolute paths give one ``torchtrace.path`` warning that
names a few and the setting that hides them.  The scan is bounded (bytes per file)
and its patterns are linear.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from sphinx.application import Sphinx

from ..render.paths import PROJECT
from ..trace.diagnostics import quote
from .config import torchtrace_config
from .generate import MANIFEST
from .warnings import warn

#: Bytes of one file scanned, at most.
MAX_SCAN_BYTES = 64 << 20
#: Paths named in the warning, at most.
SHOWN = 3

_ROOTS = "home|Users|root|tmp|var|data|srv|opt|mnt|scratch"
# Two or more segments under a root folder, starting where a path starts.  Each
# alternative starts with a literal and its classes exclude the separator they stop
# at: linear.
SURVIVING_PATH = re.compile(
    rf"(?<![\w.~/\\-])/(?:{_ROOTS})/[^\s/\"'<>&]+/[^\s\"'<>&]+"
    r"|(?<![\w\\])[A-Za-z]:\\{1,2}[^\s\\/\"'<>:&]+\\{1,2}[^\s\"'<>&]+"
)
_TAG = re.compile(r"<[^<>]*>")
# Paths that tell nothing of the machine or its user: the rewritten inductor cache, and
# the random folders of Python's ``tempfile`` that torch works in (``/tmp/tmpk2j4_x9a/``,
# ``/tmp/torchelastic_krot7efo/``).
_HARMLESS = re.compile(
    r"/(?:var/)?tmp/(?:torchinductor_user(?![^/])"
    r"|(?!torchinductor_)(?:tmp|[A-Za-z]{1,40}_)[a-z0-9_]{8}/)"
)


def setup_publish_check(app: Sphinx) -> None:
    app.connect("build-finished", check_published_paths)


def check_published_paths(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: one ``torchtrace.path`` warning if published files hold machine paths."""
    if exception is not None:
        return
    found: list[str] = []
    files = 0
    first: str | None = None
    for path, location in published_files(app):
        paths = surviving_paths(_read(path))
        if paths:
            files += 1
            first = first or location
            found.extend(p for p in paths if p not in found)
    if not found:
        return
    shown = ", ".join(quote(p, 80) for p in found[:SHOWN])
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    warn(
        "path",
        f"{files} published file(s) hold absolute paths that no rewrite hid: {shown}{more}; "
        "add a rule for them to torchtrace_path_rewrites (a {regex: replacement} dict, "
        f"such as {{r'/srv/ci/checkout': '{PROJECT}'}})",
        first,
    )


def published_files(app: Sphinx) -> Iterator[tuple[Path, str]]:
    """The generated pages' output files and the downloads, as the manifest lists them.

    Each with the location a warning names: the page's docname, or the download.
    """
    gen_dir = torchtrace_config(app.config).generated_dir
    root = Path(app.srcdir) / gen_dir
    try:
        listed = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(listed, list):
        return
    suffixes = set(_source_suffixes(app))
    outfile = getattr(app.builder, "get_outfilename", None)
    for name in listed:
        if not isinstance(name, str):
            continue
        source = root / name
        if source.suffix in suffixes:
            if app.builder.format == "html" and outfile is not None:
                docname = f"{gen_dir}/{name[: -len(source.suffix)]}"
                out = Path(outfile(docname))
                if out.is_file():
                    yield out, docname
        elif source.is_file():
            yield source, f"{source}:1"  # a download: what the build copies out as it is


def _source_suffixes(app: Sphinx) -> list[str]:
    suffixes = app.config.source_suffix
    return list(suffixes) if isinstance(suffixes, (dict, list, tuple)) else [str(suffixes)]


def _read(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return f.read(MAX_SCAN_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def surviving_paths(text: str) -> list[str]:
    """The machine paths in ``text`` (HTML tags left out first), in order, each once."""
    found: list[str] = []
    for match in SURVIVING_PATH.finditer(_TAG.sub("", text)):
        path = match.group(0).rstrip("\\.,;:)]}")
        if not _HARMLESS.match(path) and path not in found:
            found.append(path)
            if len(found) > 20:
                break
    return found
