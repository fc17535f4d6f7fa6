"""After the build, a last look for machine paths that the rewrites did not hide.

Path rewrites (:mod:`..render.paths`) know home directories, site-packages, Python's
prefix, inductor's cache and the project's root; a trace can still hold others (a
cluster's ``/scratch/alice/...``, a Windows checkout).  What the extension publishes
is scanned as it is written: the body of each generated HTML page, what the
directives put on the user's own pages (nodes marked ``OUTPUT_MARK``; the user's text
around them is theirs), and at ``build-finished`` the downloads it wrote in this
build, found through the generated folder's manifest, so nothing else of the project
is read.  Paths are found by :mod:`..trace.sharing.private`, the finder ``sphinx-torchtrace check``
and ``redact`` use on logs.  Surviving absolute paths
give one ``torchtrace.path`` warning that names a few and the setting that hides them, at
the line of the user's directive whose pages or downloads hold the first (the generated
file is named in the message: a generated page is no page the user wrote).
The same scan looks for the values of the build's own environment variables that would
be a leak (:func:`environment_secrets`: a name that looks secret, or a value that looks
like a credential): a hit is one ``torchtrace.secret`` warning naming the variables and
the first file, never a value.  The scan is bounded (bytes per file) and its patterns are
linear.
"""

from __future__ import annotations

import html
import json
import os
import re
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from docutils import nodes
from sphinx.application import Sphinx

from ..render.paths import PROJECT
from ..site.naming import generated_prefix
from ..trace.diagnostics import quote
from ..trace.secrets import Secret, SecretMasker, looks_secret, secret_name
from ..trace.sharing.private import SHOWN_MAX, surviving_paths
from . import downloads
from .built import built
from .config import torchtrace_config
from .doctree import OUTPUT_MARK
from .warnings import PATH, SECRET, warn

#: Bytes of one file scanned, at most.
MAX_SCAN_BYTES = 64 << 20
#: Paths named in the warning, at most.
SHOWN = 3
#: Bytes read from a file at a time, and the longest line read whole.
SCAN_PIECE = 1 << 20
MAX_LINE_BYTES = 8 << 20


#: Characters a value of the build's environment needs to be looked for: a shorter one
#: (``1``, ``true``, ``x11``) is on pages by chance.
MIN_SECRET_CHARS = 6
#: Variables whose names sound secret but that hold none: the desktop session's names and
#: sockets, which no trace quotes.
_NOT_SECRET = re.compile(
    r"XDG_\w*|DESKTOP_SESSION|DBUS_SESSION_BUS_ADDRESS|SESSION_MANAGER|SSH_AUTH_SOCK|XAUTHORITY"
    r"|GPG_AGENT_INFO|GNOME_KEYRING_\w*|KEYTIMEOUT"
)
_FLAGS = frozenset(("true", "false", "none", "null", "enabled", "disabled", "default"))


def environment_secrets(environ: Mapping[str, str], masker: SecretMasker) -> dict[str, str]:
    """{value: variable} of the build's environment that no page may hold.

    A variable counts when its name looks secret (``HF_TOKEN``, ``DB_PASSWORD``: see
    :func:`~..trace.secrets.secret_name`) or its value looks like a credential whatever
    its name (a token, a URL with a password, a random string); never ``HOME``, ``USER``,
    ``PATH`` and the like.  Its value must be :data:`MIN_SECRET_CHARS` long, hold a
    letter and not be a path (the path check's) or a flag; one the user keeps
    (``torchtrace_secrets_keep``) is not looked for.
    """
    found: dict[str, str] = {}
    for name, value in sorted(environ.items()):
        if not MIN_SECRET_CHARS <= len(value) <= 4096 or _NOT_SECRET.fullmatch(name):
            continue
        if value.lower() in _FLAGS or not any(c.isalpha() for c in value):
            continue
        if value.startswith(("/", "~", ".")) or re.match(r"[A-Za-z]:[\\/]", value):
            continue
        if not (secret_name(name) or looks_secret(value)):
            continue
        if masker.keeps(Secret(0, "", name, value)):
            continue
        found.setdefault(value, name)
    return found


def _forms(value: str) -> set[str]:
    """How a value is written in a page or a download: as is, HTML-escaped (``'`` as
    Python and as docutils write it), in JSON."""
    escaped = html.escape(value)
    return {
        value,
        escaped,
        escaped.replace("&#x27;", "&#39;"),
        html.escape(value, quote=False),
        json.dumps(value, ensure_ascii=False)[1:-1],
    }


def environment_values(text: str, secrets: Mapping[str, set[str]]) -> list[str]:
    """The variables (of :func:`environment_secrets`, by name: their forms) whose value
    ``text`` holds as a word of its own."""
    names = []
    for name, forms in secrets.items():
        if any(_holds(text, form) for form in forms):
            names.append(name)
    return names


def _holds(text: str, value: str) -> bool:
    start = text.find(value)
    while start >= 0:
        end = start + len(value)
        if not (start and text[start - 1].isalnum()) and not (
            end < len(text) and text[end].isalnum()
        ):
            return True
        start = text.find(value, start + 1)
    return False


class _Findings:
    """What one build's scan found: paths in order, the files holding them, the first file;
    the build's variables whose values it found, the files holding them, the first."""

    def __init__(
        self,
        secrets: Mapping[str, str] | None = None,
        origins: Mapping[str, tuple[str, int]] | None = None,
    ) -> None:
        self.paths: list[str] = []
        self.files = 0
        self.first: str | None = None  # the first file holding one, as the message names it
        #: the generated folders' directives (:attr:`.built.Built.origins`)
        self.origins = origins if origins is not None else {}
        self.started = time.time()
        self.pages: set[str] = set()  # scanned as written
        self.secrets = {name: _forms(value) for value, name in (secrets or {}).items()}
        self.variables: list[str] = []
        self.variable_files = 0
        self.variable_first: str | None = None

    def add(self, text: str, location: str) -> None:
        self.note(surviving_paths(text), location)
        self.note_variables(environment_values(text, self.secrets), location)

    def origin(self, name: str) -> tuple[str, int] | None:
        """The directive (docname, line) whose generated folder holds ``name`` (a docname,
        or a download's path relative to the sources)."""
        found = [f for f in self.origins if name.startswith(f + "/")]
        return self.origins[max(found, key=len)] if found else None

    def note(self, paths: list[str], location: str) -> None:
        if paths:
            self.files += 1
            self.first = self.first or location
            self.paths.extend(p for p in paths if p not in self.paths)

    def note_variables(self, names: list[str], location: str) -> None:
        if names:
            self.variable_files += 1
            self.variable_first = self.variable_first or location
            self.variables.extend(n for n in names if n not in self.variables)


_FINDINGS: WeakKeyDictionary[Sphinx, _Findings] = WeakKeyDictionary()


def setup_publish_check(app: Sphinx) -> None:
    app.connect("builder-inited", _start)
    app.connect("html-page-context", check_page)
    app.connect("build-finished", check_published_paths)


def _start(app: Sphinx) -> None:
    """builder-inited, before the pages are generated: the registry's origins are filled
    then, in the dict held here (it outlives the registry at build-finished)."""
    keep = SecretMasker(torchtrace_config(app.config).secrets_keep)
    _FINDINGS[app] = _Findings(environment_secrets(os.environ, keep), built(app).origins)


def check_page(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """html-page-context: scan the body of a generated page as it is written.

    Only pages written by this build are scanned (a rebuild with nothing changed
    scans nothing), and only their body: the theme's frame is not ours.
    """
    findings = _FINDINGS.get(app)
    body = context.get("body")
    if findings is None or not isinstance(body, str) or doctree is None:
        return
    if pagename.startswith(generated_prefix(torchtrace_config(app.config).generated_dir)):
        findings.add(body[:MAX_SCAN_BYTES], pagename)
        findings.pages.add(pagename)
        return
    ours = [n.astext() for n in doctree.findall(nodes.Element) if n.get(OUTPUT_MARK)]
    if ours:  # a directive's summary on the user's page
        findings.add("\n".join(ours)[:MAX_SCAN_BYTES], pagename)


def check_published_paths(app: Sphinx, exception: BaseException | None) -> None:
    """build-finished: one ``torchtrace.path`` warning if published files hold machine paths."""
    findings = _FINDINGS.pop(app, None)
    if exception is not None or findings is None:
        return
    for path, location in [
        *written_pages(app, findings),
        *written_downloads(app, since=findings.started),
    ]:
        paths, names = scan_file(path, findings.secrets)
        findings.note(paths, location)
        findings.note_variables(names, location)
    _warn_variables(findings)
    if not findings.paths:
        return
    found = findings.paths
    shown = ", ".join(quote(p, 80) for p in found[:SHOWN])
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    first = findings.first or ""
    origin = findings.origin(first)
    warn(
        PATH,
        f"{findings.files} published file(s) hold absolute paths that no rewrite hid "
        f"(the first: {first}): {shown}{more}; add a rule for them to "
        "torchtrace_path_rewrites (a {regex: replacement} dict, such as "
        f"{{r'/srv/ci/checkout': '{PROJECT}'}})",
        origin or first,
    )


def _warn_variables(findings: _Findings) -> None:
    """One ``torchtrace.secret`` warning naming the variables whose values were found."""
    names = findings.variables
    if not names:
        return
    shown = ", ".join(names[:SHOWN]) + (
        f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    )
    warn(
        SECRET,
        f"{findings.variable_files} published file(s) hold the value of the build's "
        f"environment variable(s) {shown}: the trace quotes it where no rule masked it; "
        "capture without it, or name the variable in torchtrace_secrets_keep if it may be "
        "published",
        findings.variable_first,
    )


def written_pages(app: Sphinx, findings: _Findings) -> Iterator[tuple[Path, str]]:
    """Generated pages written by this build but not seen as written: a parallel build
    (``-j``) writes pages in other processes, so their output files are read here."""
    outfile = getattr(app.builder, "get_outfilename", None)
    if app.builder.format != "html" or outfile is None:
        return
    prefix = generated_prefix(torchtrace_config(app.config).generated_dir)
    for docname in sorted(app.env.found_docs):
        if docname.startswith(prefix) and docname not in findings.pages:
            out = Path(outfile(docname))
            try:
                written = out.is_file() and out.stat().st_mtime >= findings.started - 1
            except OSError:
                continue
            if written:
                yield out, docname


def written_downloads(app: Sphinx, since: float) -> Iterator[tuple[Path, str]]:
    """The downloads the extension wrote into the output during this build, as its
    manifest lists them (:mod:`.downloads`), each with the location a warning names.

    Pages are scanned as they are written (:func:`check_page`); a download is written
    straight to the output, so it is read there.
    """
    for path in downloads.written_downloads(app):
        try:
            written = path.is_file() and path.stat().st_mtime >= since - 1
        except OSError:
            continue
        if written:
            yield path, f"{path}:1"


def scan_file(path: Path, secrets: Mapping[str, set[str]]) -> tuple[list[str], list[str]]:
    """The machine paths in the first :data:`MAX_SCAN_BYTES` of a file, and the variables
    whose values it holds (``secrets``: see :func:`environment_values`), read a piece of
    whole lines at a time (a path never spans lines): a thousand ranks' timeline is a
    gigabyte, and 64 MB of it read at once cost 200 MB."""
    found: list[str] = []
    names: list[str] = []
    try:
        with path.open("rb") as f:
            left, carry = MAX_SCAN_BYTES, b""
            while True:
                data = f.read(min(SCAN_PIECE, left)) if left > 0 else b""
                left -= len(data)
                piece, last = carry + data, not data
                cut = len(piece) if last else piece.rfind(b"\n") + 1
                if cut == 0 and not last:
                    if len(piece) < MAX_LINE_BYTES:
                        carry = piece  # a long line: read on to its end
                        continue
                    cut = len(piece)
                carry = piece[cut:]
                text = piece[:cut].decode("utf-8", "replace")
                for p in surviving_paths(text) if len(found) <= SHOWN_MAX else ():
                    if p not in found:
                        found.append(p)
                names += (n for n in environment_values(text, secrets) if n not in names)
                if last or (len(found) > SHOWN_MAX and not secrets):
                    break
    except OSError:
        pass
    return found, names
