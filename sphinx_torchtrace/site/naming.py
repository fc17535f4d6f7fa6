"""Names of generated pages and domain objects: stable, unambiguous, safe on every OS.

A name says *what* a page shows, never *where* its record sits in the log, so
an old URL or cross-reference keeps pointing at the same graph after the
program is traced again.

**Object names** (the ``torchtrace`` domain, ``objects.inv``):

* frame: ``<label>/[<rank>/]<compile id>[#<occurrence>]``, e.g. ``train/[0/0]``,
  ``train/rank1/[1/0_1]``, ``train/[!0/2/0]``, ``train/[0/0]#2`` (the same id
  again after ``torch._dynamo.reset()``);
* graph or kernel: ``<frame>/<name>[#<occurrence>]``, e.g.
  ``train/[0/0]/inductor_output_code#2``.  A ``#`` of the logged name itself is
  doubled (``q#2`` is written ``q##2``), so a logged name never equals a
  numbered one; each character a name cannot hold (see below) is written
  ``#u`` and four hex digits (``a b`` is ``a#u0020b``), one-to-one;
* distinct graph break: ``<label>/GB0025`` (PyTorch's registry id), else
  ``<label>/gb/<slug>--h<digest of the exact type>``;
* the label itself: each character a name cannot hold as ``_`` (labels whose
  folders clash are refused, so this keeps them apart).

A name is a token of ``objects.inv`` (whose fields whitespace separates, and
where ``$`` in a URI stands for the name) and the target of a role: it holds no
whitespace of any kind, no ``$``, ``<``, ``>``, backquote or backslash, no
control, format (bidirectional, invisible) or XML-illegal character, and ``/``
and ``#`` only as written here.

**File names** (docnames; raw downloads mirror them under ``_raw/``):
``<label>/[<rank>/]<frame>[/<graph or kernel>]``, every segment lower-case
``[a-z0-9-]`` and at most :data:`MAX_SEGMENT` characters:

* frame: ``frame-0-0``, ``frame-ca0-2-0``, ``frame-1-0-attempt1``,
  ``frame-0-0-occurrence2``, ``frame-none`` for ``[-/-]``, ``frame-x-3`` for
  ``[-/3]`` (negative numbers as ``m1``);
* rank (traces of several logs only): ``rank1``, ``rank1-2`` for a second log
  claiming rank 1, ``rank-none`` for a log that names no rank (object names
  use the same text, unbounded);
* graph or kernel: ``graph-dynamo-output-graph``, ``graph-inductor-output-code--2``.
  A name of lower-case words joined by single underscores is written with
  dashes; any other name (upper case, dots, ``__``, too long) is written as
  its truncated slug plus ``--h`` and a digest of the exact name, so names
  that differ only in case or punctuation get different files.
* A segment too long to fit is cut and ends in ``--h<digest of the whole>``.

``--`` never occurs in a written name or a plain segment, so the occurrence
and digest suffixes cannot be mistaken for part of a name.

**Stability.**  A page's names depend only on: the trace's label; for
multi-log traces, the rank its log claims and how many earlier logs of the
trace claim the same rank; its compile id and occurrence; and the graph's or
kernel's name and its occurrence among same-named ones *of that frame*.  So
records added, removed or reordered anywhere else (other compiles, other
artifact names, line numbers, the log-wide artifact order) change no other
page's names (occurrences count every same-named artifact of the frame, with
a page or not, so an artifact losing its payload renumbers nothing).  What
does renumber: adding or removing an earlier same-named
artifact (kernel) of the same frame, an earlier occurrence of the same compile
id, or an earlier log claiming the same rank; and a trace going from one log
to several (or back) gains (loses) its rank folders.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable

from ..trace import Compile, RankTrace, Trace
from ..trace.secrets import mask_secrets
from ..trace.sharing.private import mask_homes
from .characters import FORMAT_CHARACTERS, LINE_BREAKS, UNPRINTABLE

_UNSAFE = re.compile(r"[^a-z0-9]+")
# Lower-case words joined by single underscores: written with dashes, the mapping stays one-to-one.
_PLAIN = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*\Z")

#: Where generated pages go when ``torchtrace_generated_dir`` names no usable folder.
DEFAULT_GENERATED_DIR = "torchtrace"

#: The longest path segment written (before the file suffix).
MAX_SEGMENT = 64
_DIGEST_CHARS = 10
_DIGEST_SUFFIX = 3 + _DIGEST_CHARS  # "--h" + digest
#: The longest graph or kernel name written as is, before its occurrence suffix.
_MAX_PLAIN_STEM = 44


def generated_folder(value: object) -> str | None:
    """``torchtrace_generated_dir`` as a folder of docnames, or None if it names none.

    The extension empties that folder of anything it did not generate, so it must
    be a sub-folder of the sources, never the sources themselves.
    """
    folder = str(value or "").replace("\\", "/").strip("/")
    parts = folder.split("/")
    if not folder or any(p in ("", ".", "..") for p in parts) or os.path.isabs(folder):
        return None
    return folder


def generated_prefix(value: object) -> str:
    """The docname prefix of every generated page (``torchtrace/``)."""
    return (generated_folder(value) or DEFAULT_GENERATED_DIR) + "/"


def slugify(text: str) -> str:
    """Lower-case letters, digits and single dashes (lossy: for labels and readable prefixes)."""
    return _UNSAFE.sub("-", text.lower()).strip("-") or "x"


def digest(text: str) -> str:
    """A short, stable fingerprint of the exact text (lone surrogates from JSON included)."""
    data = text.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=8).hexdigest()[:_DIGEST_CHARS]


def fit(segment: str, limit: int = MAX_SEGMENT) -> str:
    """``segment`` if short enough, else its head and ``--h`` plus a digest of all of it.

    The digest keeps segments that share a long head apart.
    """
    if len(segment) <= limit:
        return segment
    head = segment[: limit - _DIGEST_SUFFIX].rstrip("-")
    return f"{head}--h{digest(segment)}"


def label_name(label: str) -> str:
    """A trace's label as the head of its object names: each character a name cannot
    hold (:data:`_NOT_IN_NAME`, and ``#``) as ``_``, one for one.

    Lossy, but only where :func:`label_segment` is: labels whose folders clash are
    refused, so distinct labels keep distinct names.
    """
    return _NOT_IN_LABEL.sub("_", label)


def label_segment(label: str) -> str:
    """The folder of a trace: its label slugified, bounded (the directive rejects clashes)."""
    return fit(slugify(label))


def name_stem(name: str) -> str:
    """A logged name as file-name text: one-to-one, lower case, bounded.

    ``dynamo_output_graph`` → ``dynamo-output-graph``; ``Q``, ``a.b``, ``a__b`` or a
    300-character name → slug head + ``--h`` + digest of the exact name.
    """
    if len(name) <= _MAX_PLAIN_STEM and _PLAIN.match(name):
        return name.replace("_", "-")
    head = slugify(private_masked(name))[: _MAX_PLAIN_STEM - _DIGEST_SUFFIX].rstrip("-")
    return f"{head}--h{digest(name)}"


def item_segment(kind: str, name: str, occurrence: int) -> str:
    """``graph-inductor-output-code``, ``graph-inductor-output-code--2``: a page within a frame."""
    suffix = f"--{occurrence}" if occurrence > 1 else ""
    return fit(f"{kind}-{name_stem(name)}{suffix}")


# What an object name cannot hold.  It is one line of objects.inv and of the search index,
# and must encode as UTF-8 (C0 and C1 controls, line and paragraph separators, lone
# surrogates); one field of that line, which intersphinx splits at any whitespace (so a
# name with a space could write entries of its own); never the "$" that stands for the
# name in an objects.inv URI; the target of a role (no "<...>" title syntax, backquote or
# backslash); text a reader sees as it is (no format character) and XML can hold.  "/"
# separates a name's parts, so a logged name holds none either.
_NOT_IN_NAME_CHARS = f"\\s${UNPRINTABLE}{LINE_BREAKS}{FORMAT_CHARACTERS}\ufffe\uffff/<>`\\\\"
_NOT_IN_NAME = re.compile(f"[{_NOT_IN_NAME_CHARS}]")
_NOT_IN_LABEL = re.compile(f"[{_NOT_IN_NAME_CHARS}#]")


def private_masked(text: str) -> str:
    """A logged string with what looks secret masked and home folders written ``~``: a
    name is published (``objects.inv``, the search index, a page's file name), and no
    page's rewrite reaches it."""
    return mask_homes(mask_secrets(text))


def name_text(text: str) -> str:
    """A logged string as part of an object name: one-to-one but for what it holds that
    is private (:func:`private_masked`), one token of printable text.

    ``#`` is doubled, so a single ``#`` only ever starts what we add: ``#2`` (an
    occurrence) or ``#u0020`` (a character a name cannot hold, always four hex digits:
    each is in the Basic Multilingual Plane).
    """
    escaped = private_masked(text).replace("#", "##")
    return _NOT_IN_NAME.sub(lambda m: f"#u{ord(m.group()):04x}", escaped)


# Escaped in a name and on pages alike: what no page shows raw (controls, line breaks, tab,
# format characters).  The rest a name escapes only for objects.inv's and roles' sake.
_SHOWN_ESCAPED = re.compile(f"[{UNPRINTABLE}{LINE_BREAKS}\t{FORMAT_CHARACTERS}]")
_NAME_ESCAPE = re.compile(r"##|#u([0-9a-f]{4})")


def shown_name(name: str) -> str:
    """An object name (or its tail) as a page shows it: spaces, ``$``, ``/`` ... as logged;
    controls, line breaks and format characters still escaped; ``##`` kept (``#2`` is an
    occurrence)."""

    def shown(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group()
        char = chr(int(match.group(1), 16))
        return match.group() if _SHOWN_ESCAPED.match(char) else char

    return _NAME_ESCAPE.sub(shown, name)


def is_object_name(name: str) -> bool:
    """Whether ``name`` holds none of the characters a name cannot hold."""
    return _NOT_IN_NAME.search(name.replace("/", "")) is None


def item_name(name: str, occurrence: int) -> str:
    """``inductor_output_code``, ``inductor_output_code#2``, ``q##2`` (logged ``q#2``)."""
    escaped = name_text(name)
    return escaped if occurrence <= 1 else f"{escaped}#{occurrence}"


def occurrences(names: Iterable[str]) -> list[int]:
    """1 for the first of each name, 2 for its second, ...: a numbering of equals only."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(seen[name])
    return out


def _number(value: int) -> str:
    """An integer as file-name text: ``12``, ``m3`` for -3."""
    return str(value) if value >= 0 else f"m{-value}"


def _number_or_x(value: int | None) -> str:
    return "x" if value is None else _number(value)


def rank_names(trace: Trace) -> list[str]:
    """Per log of the trace, in order: the rank part of its names (``rank1``, ``rank1-2``).

    Empty for a trace of one log.  A later log claiming an earlier one's rank
    (copied logs, a restarted job) gets ``-2``, ``-3`` so its pages stay apart.
    """
    if not trace.is_multi_rank:
        return ["" for _ in trace.ranks]
    bases = [_rank_base(rank) for rank in trace.ranks]
    return [
        base if n == 1 else f"{base}-{n}" for base, n in zip(bases, occurrences(bases), strict=True)
    ]


def _rank_base(rank: RankTrace) -> str:
    return "rank-none" if rank.rank is None else f"rank{_number(rank.rank)}"


def rank_segment(rank_name: str) -> str:
    """The folder of a rank's pages: its name, bounded (a 400-digit rank stays short)."""
    return fit(rank_name) if rank_name else ""


def frame_name(label: str, rank_name: str, compile_: Compile) -> str:
    """The object name of a compile: ``<label>/[<rank>/][0/0]`` (+ ``#2`` for repeats)."""
    suffix = f"#{compile_.occurrence}" if compile_.occurrence > 1 else ""
    rank = f"{rank_name}/" if rank_name else ""
    return f"{label_name(label)}/{rank}{compile_.id}{suffix}"


def frame_segment(compile_: Compile) -> str:
    """The file name of a compile: ``frame-0-0``, ``frame-1-0-attempt1``, ``frame-ca0-2-0``."""
    cid = compile_.id
    parts = [] if cid.compiled_autograd_id is None else [f"ca{_number(cid.compiled_autograd_id)}"]
    if cid.frame_id is not None or cid.frame_compile_id is not None:
        parts += [_number_or_x(cid.frame_id), _number_or_x(cid.frame_compile_id)]
    base = "frame-" + ("-".join(parts) or "none")
    if cid.attempt:
        base += f"-attempt{_number(cid.attempt)}"
    if compile_.occurrence > 1:
        base += f"-occurrence{compile_.occurrence}"
    return fit(base)


def break_object_name(label: str, key: str) -> str:
    """The ``torchtrace`` object of a distinct graph break of a trace: ``run/GB0025`` for
    a break of PyTorch's registry, ``run/gb/<type slug>--h<digest>`` for one without an id
    (older torch).  The digest is of the exact type: two types the slug alone would merge
    (``Unsupported call`` and ``unsupported: call``) stay two objects."""
    if re.fullmatch(r"GB\d{4}", key):
        return f"{label_name(label)}/{key}"
    head = slugify(private_masked(key))[: MAX_SEGMENT - _DIGEST_SUFFIX].rstrip("-")
    return f"{label_name(label)}/gb/{head}--h{digest(key)}"
