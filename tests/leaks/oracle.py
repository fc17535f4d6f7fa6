"""The oracle: one input through check, redact, bundle and a default build, and every
canary found where it survived (a byte search through names, gzip and zip members,
markup, escapes and letter case)."""

from __future__ import annotations

import contextlib
import gzip
import html
import io
import json
import re
import shutil
import time
import zipfile
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sphinx_torchtrace.trace.secrets import mask_secrets

from .places import (
    CAPTURE,
    DEBUG,
    NOT_CHECKED,
    Canary,
    Input,
)
from .shapes import (
    NEEDLE,
    SECRETS,
)

# -- looking for survivors -----------------------------------------------------------------

_RUN = re.compile(rb"[a-z0-9]{%d,}" % NEEDLE)
_TAG = re.compile(r"<[^<>]{0,400}>")
_U_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\u00ad\ufeff"))


class Needles:
    """Every window of every canary of an input, found in bytes by one pass over their runs
    of letters and digits (lower case)."""

    def __init__(self, canaries: Sequence[Canary]) -> None:
        self.index: dict[bytes, int] = {}
        shared: set[bytes] = set()
        for c in canaries:
            for n in set(c.needles):
                key = n.encode()
                if self.index.setdefault(key, c.uid) != c.uid:
                    shared.add(key)  # a window two canaries hold names neither
        for key in shared:
            del self.index[key]

    def find(self, data: bytes) -> dict[int, int]:
        """uid -> offset of the first window found in ``data``."""
        found: dict[int, int] = {}
        index = self.index
        for m in _RUN.finditer(data.lower()):
            run = m.group()
            for i in range(len(run) - NEEDLE + 1):
                uid = index.get(run[i : i + NEEDLE])
                if uid is not None and uid not in found:
                    found[uid] = m.start() + i
        return found

    def search(self, data: bytes) -> dict[int, tuple[str, str]]:
        """uid -> (how it was found: as written / decoded, a snippet around it): in the
        bytes, and in their text without HTML tags, entities, JSON escapes and invisible
        characters."""
        out: dict[int, tuple[str, str]] = {}
        for uid, at in self.find(data).items():
            out[uid] = ("bytes", data[max(0, at - 80) : at + 60].decode("utf-8", "replace"))
        text = data.decode("utf-8", "replace")
        if any(s in text for s in ("<", "&", "\\u", "\u200b", "\u00ad", "\u2060")):
            plain = _U_ESCAPE.sub(
                lambda m: chr(int(m.group(1), 16)), html.unescape(_TAG.sub("", text))
            )
            plain = plain.translate(_INVISIBLE)
            if plain != text:
                raw = plain.encode("utf-8", "replace")
                for uid, at in self.find(raw).items():
                    if uid not in out:
                        out[uid] = (
                            "decoded",
                            raw[max(0, at - 80) : at + 60].decode("utf-8", "replace"),
                        )
        return out


def members(path: Path, label: str = "") -> Iterator[tuple[str, bytes]]:
    """Every byte a path holds, as (where, bytes): a folder's files (names too), gzip and
    zip members decompressed (their names too)."""
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            rel = child.relative_to(path).as_posix()
            yield f"{label}{rel} (name)", rel.encode("utf-8", "surrogateescape")
            if child.is_file() and not child.is_symlink():
                yield from _expand(f"{label}{rel}", child.read_bytes())
    elif path.is_file():
        yield f"{label}{path.name} (name)", path.name.encode("utf-8", "surrogateescape")
        yield from _expand(f"{label}{path.name}", path.read_bytes())


def _expand(where: str, data: bytes, depth: int = 0) -> Iterator[tuple[str, bytes]]:
    yield where, data
    if depth > 3:
        return
    if data[:2] == b"\x1f\x8b":
        with contextlib.suppress(OSError, EOFError, zlib.error):
            yield from _expand(where + "!gunzip", gzip.decompress(data), depth + 1)
        header = _gzip_names(data)
        if header:
            yield where + "!gzip header", header
    elif data[:4] == b"PK\x03\x04":
        with contextlib.suppress(zipfile.BadZipFile, OSError):
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for info in z.infolist():
                    yield (
                        f"{where}!{info.filename} (name)",
                        info.filename.encode("utf-8", "surrogateescape"),
                    )
                    yield from _expand(f"{where}!{info.filename}", z.read(info), depth + 1)


def _gzip_names(data: bytes) -> bytes:
    """The FNAME fields of a gzip file's first member (what ``gzip -N`` would restore)."""
    if len(data) < 10 or not data[3] & 0x08:
        return b""
    pos = 10
    if data[3] & 0x04:
        pos += 2 + int.from_bytes(data[10:12], "little")
    end = data.find(b"\x00", pos)
    return data[pos:end] if end > 0 else b""


# -- the commands --------------------------------------------------------------------------


def command(*argv: str) -> tuple[int, str]:
    """One ``sphinx-torchtrace`` command in process: (exit status, what it printed)."""
    from sphinx_torchtrace import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(argv))
        except SystemExit as e:  # argparse
            rc = e.code if isinstance(e.code, int) else 2
    return rc, out.getvalue() + err.getvalue()


def check_findings(
    target: Path, root: Path
) -> tuple[int, str, dict[str, Counter[tuple[int, str]]]]:
    """``check --json``: (status, output, findings by log (relative to ``root``) as
    (line, class) counts)."""
    rc, out = command("check", "--json", str(target))
    found: dict[str, Counter[tuple[int, str]]] = {}
    try:
        start = out.index("{")
        data = json.loads(out[start : out.rindex("}") + 1])
    except ValueError:
        return rc, out, found
    for log in data.get("logs", []):
        try:
            rel = Path(log["log"]).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = log["log"]
        # two names check prints masked alike are one key: their findings add up
        found.setdefault(rel, Counter()).update(
            (f["line"], f["class"]) for f in log.get("findings", [])
        )
        if log.get("more"):
            found[rel][(-1, "more")] += log["more"]
    return rc, out, found


def diagnostics_of(path: Path, kind: str) -> Counter[str] | None:
    """What the project's reader says of an input: its diagnostics by kind, its ranks."""
    from sphinx_torchtrace.trace.inputs.loading import load_input
    from sphinx_torchtrace.trace.inputs.opening import open_input

    if kind in (DEBUG, CAPTURE):
        return None
    try:
        trace = load_input(open_input(str(path))).trace
    except Exception as e:  # noqa: BLE001 - said in the report
        return Counter({f"unreadable: {type(e).__name__}": 1})
    found: Counter[str] = Counter(str(d.subtype) for d in trace.diagnostics)
    for rank in trace.ranks:
        found.update(str(d.subtype) for d in rank.diagnostics)
    found["(ranks)"] = len(trace.ranks)
    return found


def build_capture(inp_root: Path, out: Path, work: Path) -> tuple[int, str]:
    """A Sphinx project that shows the capture (``torchtrace_capture = 'never'``: the entry
    is found by its source key), built as html."""
    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace, patch_docutils

    from sphinx_torchtrace.trace.inputs.capture import RECORD, CaptureSpec, local_imports

    src = work / "capture-site"
    shutil.rmtree(src, ignore_errors=True)
    (src / "scripts").mkdir(parents=True)
    script = src / "scripts" / "prog.py"
    script.write_text("print('captured')\n", encoding="utf-8")
    spec = CaptureSpec(
        script=script.resolve(), root=src.resolve(), depends=tuple(local_imports(script, src))
    )
    cache = src / "_captures"
    shutil.copytree(inp_root / "captures", cache)
    for record in cache.glob(f"*/{RECORD}"):
        record.write_text(
            record.read_text(encoding="utf-8").replace("@SOURCE_KEY@", spec.source_key()),
            encoding="utf-8",
        )
    (src / "conf.py").write_text(
        'extensions = ["sphinx_torchtrace"]\nproject = "leak"\nshow_warning_types = True\n'
        f"torchtrace_capture = 'never'\ntorchtrace_capture_cache = {str(cache)!r}\n",
        encoding="utf-8",
    )
    (src / "index.rst").write_text(
        "Leak\n====\n\n.. torchtrace-capture:: scripts/prog.py\n   :name: run\n", encoding="utf-8"
    )
    warnings = io.StringIO()
    try:
        # docutils' globals a build registers are undone after it, as sphinx-build does:
        # a test that builds after this one in the same process sees none of them
        with patch_docutils(str(src)), docutils_namespace():
            app = Sphinx(
                str(src),
                str(src),
                str(out),
                str(work / "capture-doctrees"),
                "html",
                status=io.StringIO(),
                warning=warnings,
                freshenv=True,
            )
            app.build()
        rc = app.statuscode
    except Exception as e:  # noqa: BLE001 - a failed build is said
        return 2, warnings.getvalue() + f"\n{type(e).__name__}: {e}"
    return rc, warnings.getvalue()


# -- one input through every command --------------------------------------------------------

#: The outputs a canary may survive in.
CHECK, REDACT, BUNDLE, BUILD = "check", "redact", "bundle", "build"
OUTPUTS = (CHECK, REDACT, BUNDLE, BUILD)


@dataclass
class Survivor:
    uid: int
    output: str  # CHECK (not listed), REDACT, BUNDLE, BUILD
    where: str  # the output's file / member, or why check did not list it
    how: str = ""  # found as written or decoded
    snippet: str = ""


@dataclass
class Outcome:
    """What one input gave: the commands' exit statuses, survivors, other breaches."""

    n: int
    kind: str
    canaries: list[Canary]
    status: dict[str, int] = field(default_factory=dict)
    survivors: list[Survivor] = field(default_factory=list)
    breaches: list[str] = field(default_factory=list)  # not a canary: idempotence, parsing ...
    notes: list[str] = field(default_factory=list)  # the generator's own checks
    seconds: float = 0.0
    steps: dict[str, float] = field(default_factory=dict)  # seconds per step


def _scan(
    outcome: Outcome,
    needles: Needles,
    output: str,
    path: Path | None,
    console: str,
    label: str = "",
) -> None:
    seen = {s.uid for s in outcome.survivors if s.output == output}
    sources: list[tuple[str, bytes]] = [("console", console.encode("utf-8", "surrogateescape"))]
    if path is not None and path.exists():
        sources += list(members(path, label))
    for where, data in sources:
        for uid, (how, snippet) in needles.search(data).items():
            if uid not in seen:
                seen.add(uid)
                outcome.survivors.append(Survivor(uid, output, where, how, snippet))


def _check_listed(
    inp: Input,
    outcome: Outcome,
    live: dict[str, Counter[tuple[int, str]]],
    control: dict[str, Counter[tuple[int, str]]],
    refused: str,
    left: set[int] = frozenset(),  # type: ignore[assignment]
) -> None:
    """Each canary must be among what check found in the live input and not in the control
    (at its lines, of its class; a file-name canary: anywhere in its log)."""
    surplus: dict[str, Counter[tuple[int, str]]] = {}
    for rel, counts in live.items():
        base = control.get(inp.names.get(rel, rel), Counter())
        # check prints a name holding a secret masked, as every console line: match so
        # (two names masked alike are one key: their findings add up)
        surplus.setdefault(mask_secrets(rel), Counter()).update(
            {k: v - base.get(k, 0) for k, v in counts.items() if v > base.get(k, 0)}
        )
    in_text = {c.file for c in inp.canaries if c.line}
    # canaries in the text first; a name then takes what is left (in a log of its own: any
    # finding; in a log that holds others: one not on a line)
    order = sorted(inp.canaries, key=lambda c: (c.line == 0, c.uid in left, c.file, c.line, c.uid))
    for c in order:
        if c.place in NOT_CHECKED:
            continue
        where = mask_secrets(c.file)
        if where not in surplus:
            why = refused or "its file is not read by check"
            outcome.survivors.append(Survivor(c.uid, CHECK, f"{where}: {why}"))
            continue
        found = surplus[where]
        hit = None
        if c.line == 0:
            hit = next(
                (
                    k
                    for k in found
                    if found[k] > 0
                    and (k[1] in c.classes or k[1] == "more")
                    and (k[0] <= 0 or c.file not in in_text)
                ),
                None,
            )
        else:
            for line in range(c.line, c.last + 1):
                hit = next(
                    (k for k in ((line, cls) for cls in c.classes) if found.get(k, 0) > 0), None
                )
                if hit:
                    break
        if hit is None and found.get((-1, "more"), 0) > 0:
            hit = (-1, "more")  # past what check lists by line: counted
        if hit is None:
            outcome.survivors.append(Survivor(c.uid, CHECK, f"{where}:{c.line}: not listed"))
        else:
            found[hit] -= 1


def run_input(inp: Input, work: Path, build: bool = True) -> Outcome:
    """The input written (live and control) and given to every command."""
    started = time.monotonic()
    outcome = Outcome(inp.n, inp.kind, inp.canaries)
    clock = _Clock(outcome)
    needles = Needles(inp.canaries)
    live_root, control_root = inp.write(work / "live", True), inp.write(work / "control", False)
    check_live, check_control = live_root / inp.check_target, control_root / inp.check_target
    lost = [c for c in inp.canaries if not c.file]
    if lost:
        outcome.notes.append(f"{len(lost)} canaries in no file: {[c.uid for c in lost[:5]]}")
    # the search finds every canary in the input itself (else it could miss a survivor)
    seen: set[int] = set()
    for _, data in members(live_root):
        seen.update(needles.search(data))
    unseen = [c.uid for c in inp.canaries if c.uid not in seen]
    if unseen:
        outcome.notes.append(f"{len(unseen)} canaries the search misses in the input: {unseen[:5]}")

    # check: its findings (weighed once redact's survivors are known), no secret printed
    with clock("check"):
        check_rc, check_out, live_found = check_findings(check_live, live_root)
        outcome.status[CHECK] = check_rc
        _, _, control_found = check_findings(check_control, control_root)
        secret_needles = Needles([c for c in inp.canaries if c.classes == SECRETS])
        _scan(outcome, secret_needles, CHECK, None, check_out)

    # redact: nothing left, reads as before, check finds nothing more, idempotent
    name = Path(inp.check_target).name
    out1, out2 = work / "redacted" / name, work / "redacted-again" / name
    control_out = work / "control-redacted" / name
    for folder in (out1, out2, control_out):
        folder.parent.mkdir(parents=True, exist_ok=True)
    with clock("redact"):
        rc, out = command("redact", str(check_live), "-o", str(out1))
        outcome.status[REDACT] = rc
        _scan(outcome, needles, REDACT, out1, out)
    live_read = diagnostics_of(check_live, inp.kind)
    if out1.exists() and outcome.status[REDACT] != 2:
        with clock("redact again"):
            _redacted_again(
                inp, outcome, check_live, out1, out2, check_control, control_out, live_read
            )
    # check lists every canary: what it finds beyond the control's, at the canary's lines
    # (on a line of several, those redact left are the ones check missed: one pass, two uses)
    left = {s.uid for s in outcome.survivors if s.output == REDACT}
    refused = f"check exit {check_rc}" if check_rc == 2 else ""
    _check_listed(inp, outcome, live_found, control_found, refused, left)
    control_read = diagnostics_of(check_control, inp.kind)
    if control_read != live_read:
        outcome.notes.append(
            f"the planted input reads unlike its control: {dict(control_read or {})} "
            f"vs {dict(live_read or {})}"
        )

    # bundle: no canary in the zip (names, README, report, logs) nor printed
    with clock("bundle"):
        zip_path = work / "bundle.zip"
        rc, out = command("bundle", "-q", str(check_live), "-o", str(zip_path))
        outcome.status[BUNDLE] = rc
        _scan(outcome, needles, BUNDLE, zip_path, out)

    # the default build: no canary in any byte written or printed
    if build:
        with clock("build"):
            site = work / "site"
            if inp.kind == CAPTURE:
                rc, out = build_capture(live_root, site, work)
            else:
                target = str(live_root / inp.target)
                rc, out = command("build", "-q", "--no-browser", target, "-o", str(site))
            outcome.status[BUILD] = rc
            _scan(outcome, needles, BUILD, site, out)
    outcome.seconds = time.monotonic() - started
    return outcome


class _Clock:
    """Seconds per step of an input (``with clock("redact"): ...``)."""

    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome

    @contextlib.contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        t = time.monotonic()
        try:
            yield
        finally:
            self.outcome.steps[step] = self.outcome.steps.get(step, 0.0) + time.monotonic() - t


def _redacted_again(
    inp: Input,
    outcome: Outcome,
    live: Path,
    out1: Path,
    out2: Path,
    control: Path,
    control_out: Path,
    live_read: Counter[str] | None,
) -> None:
    """Redact's output: redacted again it is the same bytes; check finds no more in it
    than in the control's redacted; it reads as the input did."""
    command("redact", str(control), "-o", str(control_out))
    rc2, _ = command("redact", str(out1), "-o", str(out2))
    a, b = dict(members(out1)), dict(members(out2))
    differ = sorted(k for k in a if a.get(k) != b.get(k) and "(name)" not in k)
    if differ:
        outcome.breaches.append(
            f"redact twice: {len(differ)} file(s) differ ({differ[0]}, line "
            f"{_first_difference(a[differ[0]], b.get(differ[0], b''))}), second exit {rc2}"
        )
    _, _, again = check_findings(out1, out1.parent)
    _, _, again_control = check_findings(control_out, control_out.parent)
    more = []
    for rel, counts in again.items():
        base = again_control.get(rel, Counter())
        more += [(rel, k, v - base.get(k, 0)) for k, v in counts.items() if v > base.get(k, 0)]
    if more:
        outcome.breaches.append(
            f"check finds {sum(m[2] for m in more)} more in redact's output than in the "
            "control's: " + ", ".join(f"{rel}:{line} {cls}" for rel, (line, cls), _ in more[:5])
        )
        _blame(inp, outcome, more)
    # redaction replaces what is private and nothing else: the output is shorter than the
    # input by no more than the canaries' text (beyond what the control's lost)
    lost = text_bytes(live) - text_bytes(out1)
    lost_control = text_bytes(control) - text_bytes(control_out)
    budget = sum(len(c.written.encode("utf-8", "surrogateescape")) for c in inp.canaries)
    if lost - lost_control > budget:
        outcome.breaches.append(
            f"redact removed {lost - lost_control - budget} bytes more than the canaries hold "
            f"({lost} in all, the control {lost_control})"
        )
    after = diagnostics_of(out1, inp.kind)
    if live_read is not None and after is not None and live_read != after:
        outcome.breaches.append(
            f"redact's output reads differently: {dict(live_read)} -> {dict(after)}"
        )


def _first_difference(a: bytes, b: bytes) -> int:
    """The first line where two texts differ (1-based)."""
    for i, (x, y) in enumerate(zip(a.split(b"\n"), b.split(b"\n"), strict=False)):
        if x != y:
            return i + 1
    return min(a.count(b"\n"), b.count(b"\n")) + 1


def _blame(inp: Input, outcome: Outcome, more: list[tuple[str, tuple[int, str], int]]) -> None:
    """Findings of check in redact's output on a line of canaries that redact did not leave
    whole: when they are as many as its canaries of that class, each of those survived
    (masked into something check still calls secret); else only the breach says so."""
    known = {s.uid for s in outcome.survivors if s.output == REDACT}
    by_line = defaultdict(list)
    for c in inp.canaries:
        by_line[(Path(c.file).name, c.line)].append(c)
    for rel, (line, cls), count in more:
        here = [c for c in by_line.get((Path(rel).name, line), []) if cls in c.classes]
        if not here or len([c for c in here if c.uid not in known]) > count:
            continue
        for c in here:
            if c.uid not in known:
                known.add(c.uid)
                where = f"{rel}:{line}: check on redact's output: {cls}"
                outcome.survivors.append(Survivor(c.uid, REDACT, where))


def text_bytes(path: Path) -> int:
    """Bytes of text a file or folder holds (gzip members decompressed)."""
    total = 0
    for where, data in members(path):
        if where.endswith("(name)") or "!gzip header" in where:
            continue
        if data[:2] == b"\x1f\x8b" and not where.endswith("!gunzip"):
            continue  # counted decompressed
        total += len(data)
    return total
