#!/usr/bin/env python3
"""Pin reference values produced by the Rust ``tlparse`` (0.4.3) for our test logs.

For every log this runs::

    tlparse LOG -o TMP --no-browser --overwrite
    tlparse LOG -o TMP --no-browser --overwrite --inductor-provenance   # if the log has
                                              # inductor_provenance_tracking_node_mappings

and, for directories holding ``dedicated_log_torch_trace_rank_<N>[_suffix].log`` files::

    tlparse DIR --all-ranks-html -o TMP --no-browser --overwrite

and extracts a small, JSON-able, deterministic summary (compile ids + artifact names from
``compile_directory.json``, stack-trie statuses from ``index.html``, the ``Stats { .. }`` line,
failures_and_restarts rows, provenance line maps and panes).

CLI::

    python tests/tools/tlparse_reference.py [LOG_OR_DIR ...]

With no argument every ``*.log`` / ``*.txt`` under ``tests/data`` (except ``tests/data/expected``)
is processed, plus every directory holding rank logs.  Results go to
``tests/data/expected/tlparse/<path relative to tests/data>.json``.

Importable: :func:`summarize_log`, :func:`summarize_rank_dir`, :func:`summarize`,
:func:`expected_path`, :func:`discover_inputs`.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "tests" / "data"
EXPECTED_DIR = DATA_DIR / "expected" / "tlparse"
TLPARSE = "tlparse"
TIMEOUT_S = 300

RANK_LOG_RE = re.compile(r"^dedicated_log_torch_trace_rank_(\d+)(?:_[^/]*)?\.log(?:\.gz)?$")
PROVENANCE_TRIGGER = b"inductor_provenance_tracking_node_mappings"
MAP_KEYS = (
    "preToPost",
    "postToPre",
    "pyCodeToPost",
    "postToPyCode",
    "cppCodeToPost",
    "postToCppCode",
)
PANE_IDS = ("preGradGraph", "postGradGraph", "generatedCode")

PROVENANCE_NOTE = (
    "Pane texts ('panes.<id>.lines') are what provenance.js shows: "
    "document.querySelector('#<id> pre').textContent.split('\\n'), i.e. HTML-unescaped, tags "
    "stripped, and -- as an HTML5 parser does -- a newline right after a <pre> start tag dropped. "
    "Line N of a pane is lines[N-1]; all six maps use these 1-based pane numbers (keys are "
    "strings, values int lists as tlparse wrote them). 'panes.<id>.alignment.offset' is "
    "pane_line - payload_line, where payload lines are the '\\t'-stripped payload lines of the "
    "log entry tlparse used (1-based). Verified on the pinned logs: graph panes "
    "(before_pre_grad_graph / inductor_pre_grad_graph, after_post_grad_graph / "
    "inductor_post_grad_graph) embed the payload verbatim, offset 0. JIT python code "
    "(inductor_output_code) is embedded as syntect HTML '<pre><pre style=..>\\n<span>..'; the "
    "browser drops that '\\n', the payload's first line is already '# AOT ID: [...]' (no "
    "leading empty lines in any pinned log), so pane line 1 = payload line 1 (offset 0; the pane "
    "has one extra trailing empty line). tlparse computes pyCodeToPost on the text with leading "
    "empty lines dropped and line numbers shifted by the index of the '# AOT ID:' line, i.e. "
    "1 = the '# AOT ID:' line; a payload with k leading empty lines would give offset -k. "
    "AOTInductor C++ wrapper (graph_dump inductor_aot_wrapper_code) is embedded as plain "
    "'<pre>\\n' + payload; the payload starts with one empty line which the browser drops "
    "(HTML <pre> rule), and cppCodeToPost/postToCppCode are numbered on that stripped text: "
    "offset -1 (pane line N = payload line N+1)."
)


# --------------------------------------------------------------------------------------------
# running tlparse
# --------------------------------------------------------------------------------------------


def tlparse_available() -> bool:
    return shutil.which(TLPARSE) is not None


def tlparse_version() -> str:
    out = subprocess.run([TLPARSE, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip()


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TLPARSE, *args],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TIMEOUT_S,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def _tail(text: str, n: int = 15) -> list[str]:
    return [ln.rstrip() for ln in text.strip().splitlines()[-n:]]


STATS_RE = re.compile(r"^Stats \{(.*)\}\s*$")
UNKNOWN_RE = re.compile(
    r"^Unknown fields: \{(.*)\} \(consider updating tlparse to render these\)\s*$"
)


def parse_console(stdout: str, stderr: str) -> dict[str, Any]:
    """Parse ``Stats { a: 1, b: 2 }`` and ``Unknown fields: {..}`` from tlparse's output."""
    res: dict[str, Any] = {"stats": None}
    other: list[str] = []
    for line in (stderr + "\n" + stdout).splitlines():
        line = line.rstrip()
        if not line.strip():
            continue
        m = STATS_RE.match(line)
        if m:
            stats: dict[str, int] = {}
            for part in m.group(1).split(","):
                part = part.strip()
                if part:
                    k, v = part.split(":")
                    stats[k.strip()] = int(v.strip())
            res["stats"] = dict(sorted(stats.items()))
            continue
        m = UNKNOWN_RE.match(line)
        if m:
            names = [json.loads(f'"{s}"') for s in re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))]
            res["unknown_fields"] = sorted(names)
            continue
        other.append(line)
    if other:
        res["console_other"] = other
    return res


# --------------------------------------------------------------------------------------------
# HTML parsing helpers
# --------------------------------------------------------------------------------------------


class _IndexParser(HTMLParser):
    """Collects status links of the stack tries, keyed by the current <h2> section."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.section = ""
        self._in_h2 = False
        self._h2_text: list[str] = []
        self._link: dict[str, str] | None = None
        self._link_text: list[str] = []
        self.links: list[tuple[str, str, str, str]] = []  # section, cid text, href, status
        self._li_depth = 0
        self._li_text: list[list[str]] = []
        self.li_texts: list[tuple[str, str]] = []  # section, text of <li> (own text only)
        self.build_product_ids: list[str] = []
        self._anchor_id: str | None = None
        self.hrefs: list[tuple[str, str, str]] = []  # section, href, text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "h2":
            self._in_h2 = True
            self._h2_text = []
        elif tag == "a":
            cls = a.get("class", "")
            if cls.startswith("status-") and a.get("href", "").startswith("#"):
                self._link = {"href": a["href"], "status": cls[len("status-") :]}
                self._link_text = []
            elif "id" in a and "href" not in a:
                self._anchor_id = a["id"]
            elif "href" in a:
                self._link = {"href": a["href"], "status": ""}
                self._link_text = []
        elif tag == "li":
            self._li_text.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._in_h2 = False
            self.section = " ".join("".join(self._h2_text).split())
        elif tag == "a":
            if self._link is not None:
                text = "".join(self._link_text).strip()
                if self._link["status"]:
                    self.links.append(
                        (self.section, text, self._link["href"], self._link["status"])
                    )
                else:
                    self.hrefs.append((self.section, self._link["href"], text))
                self._link = None
            if self._anchor_id is not None:
                self.build_product_ids.append(self._anchor_id)
                self._anchor_id = None
        elif tag == "li":
            if self._li_text:
                self.li_texts.append((self.section, "".join(self._li_text.pop()).strip()))

    def handle_data(self, data: str) -> None:
        if self._in_h2:
            self._h2_text.append(data)
        if self._link is not None:
            self._link_text.append(data)
        if self._li_text:
            self._li_text[-1].append(data)


STACK_SECTION = "Stack trie"
UNKNOWN_SECTION = "Unknown stacks"


def _status_map(links: list[tuple[str, str, str, str]], section: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for sec, cid, _href, status in links:
        if sec != section:
            continue
        if cid in out and out[cid] != status:
            prev = out[cid] if isinstance(out[cid], list) else [out[cid]]
            out[cid] = sorted(set(prev) | {status})
        else:
            out.setdefault(cid, status)
    return dict(sorted(out.items()))


def parse_index(index_html: str) -> dict[str, Any]:
    p = _IndexParser()
    p.feed(index_html)
    p.close()
    res: dict[str, Any] = {}
    res["statuses"] = _status_map(p.links, STACK_SECTION)
    res["stack_trie_order"] = [cid for sec, cid, _h, _s in p.links if sec == STACK_SECTION]
    bad_href = [(cid, href) for sec, cid, href, _s in p.links if href != f"#{cid}"]
    if bad_href:
        res["status_links_with_other_href"] = [list(x) for x in bad_href]
    sections = sorted({sec for sec, *_ in p.links} - {STACK_SECTION, UNKNOWN_SECTION})
    if sections:
        res["status_links_in_other_sections"] = sections
    if f"<h2>{UNKNOWN_SECTION}</h2>" in index_html:
        unk_items = [t for sec, t in p.li_texts if sec == UNKNOWN_SECTION]
        res["unknown_stacks"] = {
            "statuses": _status_map(p.links, UNKNOWN_SECTION),
            "unknown_terminals": sum(1 for t in unk_items if t.startswith("(unknown)")),
        }
    else:
        res["unknown_stacks"] = None
    m = re.search(
        r"This run had <strong><a href=\"failures_and_restarts.html\">(\d+) restart", index_html
    )
    res["failures_count"] = int(m.group(1)) if m else None
    res["build_product_ids"] = p.build_product_ids
    prov = [href for sec, href, _t in p.hrefs if href.startswith("provenance_tracking_")]
    if prov:
        res["provenance_links"] = prov
    return res


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[dict[str, str]]] = []
        self._row: list[dict[str, str]] | None = None
        self._cell: dict[str, str] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"tag": tag}
            self._text = []
        elif tag == "a" and self._cell is not None:
            self._cell["href"] = dict(attrs).get("href") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._cell["text"] = "".join(self._text).strip()
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._text.append(data)


def parse_failures(page: str) -> list[dict[str, str]]:
    p = _TableParser()
    p.feed(page)
    p.close()
    out = []
    for row in p.rows:
        if not row or row[0]["tag"] == "th":
            continue
        cells = row + [{"text": ""}] * (4 - len(row))
        out.append(
            {
                "compile_id": cells[0]["text"],
                "href": cells[0].get("href", ""),
                "failure_type": cells[1]["text"],
                "reason": cells[2]["text"],
                "source": cells[3]["text"],
            }
        )
    return out


class _PaneParser(HTMLParser):
    """textContent of ``#<id> pre`` (outer <pre>), HTML5-style (LF after <pre> dropped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.panes: dict[str, str] = {}
        self._div_stack: list[str | None] = []
        self._pane: str | None = None
        self._pre_depth = 0
        self._buf: list[str] = []
        self._drop_lf = False
        self.line_mappings_raw: str | None = None
        self._in_lm = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "div":
            self._div_stack.append(a.get("id"))
            if a.get("id") in PANE_IDS and self._pane is None:
                self._pane = a.get("id")
                self._pre_depth = 0
                self._buf = []
        elif tag == "pre" and self._pane is not None:
            self._pre_depth += 1
            self._drop_lf = True
        elif tag == "script" and a.get("id") == "lineMappings":
            self._in_lm = True
            self.line_mappings_raw = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._div_stack:
            did = self._div_stack.pop()
            if did is not None and did == self._pane:
                self.panes[did] = "".join(self._buf)
                self._pane = None
        elif tag == "pre" and self._pane is not None:
            self._pre_depth -= 1
            self._drop_lf = False
        elif tag == "script" and self._in_lm:
            self._in_lm = False

    def handle_data(self, data: str) -> None:
        if self._in_lm:
            self.line_mappings_raw = (self.line_mappings_raw or "") + data
            return
        if self._pane is not None and self._pre_depth > 0:
            if self._drop_lf:
                if data.startswith("\n"):
                    data = data[1:]
                self._drop_lf = False
            self._buf.append(data)


def parse_provenance_page(page: str) -> dict[str, Any]:
    p = _PaneParser()
    p.feed(page)
    p.close()
    maps_raw = json.loads(p.line_mappings_raw) if p.line_mappings_raw else {}
    maps: dict[str, dict[str, list[int]]] = {}
    for key in MAP_KEYS:
        m = maps_raw.get(key, {}) or {}
        maps[key] = {k: m[k] for k in sorted(m, key=lambda s: (len(s), s))}
    extra = sorted(set(maps_raw) - set(MAP_KEYS))
    res: dict[str, Any] = {"maps": maps, "panes": {k: p.panes.get(k) for k in PANE_IDS}}
    if extra:
        res["extra_map_keys"] = extra
    return res


# --------------------------------------------------------------------------------------------
# reading the raw log (for the provenance pane alignment)
# --------------------------------------------------------------------------------------------

GLOG_RE = re.compile(r"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} \d+ ?[^:]+:\d+\] (\{.*)$")


def iter_log_entries(path: Path) -> list[tuple[dict[str, Any], str | None]]:
    """Very small TORCH_TRACE reader: (envelope, payload or None)."""
    entries: list[tuple[dict[str, Any], str | None]] = []
    cur: tuple[dict[str, Any], list[str]] | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            line = raw.rstrip("\n")
            if line.startswith("\t"):
                if cur is not None:
                    cur[1].append(line[1:])
                continue
            if cur is not None:
                entries.append((cur[0], "\n".join(cur[1]) if "has_payload" in cur[0] else None))
                cur = None
            m = GLOG_RE.match(line)
            if not m:
                continue
            try:
                env = json.loads(m.group(1))
            except json.JSONDecodeError:
                continue
            if isinstance(env, dict):
                cur = (env, [])
    if cur is not None:
        entries.append((cur[0], "\n".join(cur[1]) if "has_payload" in cur[0] else None))
    return entries


def _dir_name(env: dict[str, Any]) -> str:
    def f(k: str) -> str:
        v = env.get(k)
        return "-" if v is None else str(v)

    attempt = env.get("attempt")
    if attempt is None and env.get("frame_compile_id") is not None:
        attempt = 0
    return "_".join(
        [
            f("compiled_autograd_id"),
            f("frame_id"),
            f("frame_compile_id"),
            "-" if attempt is None else str(attempt),
        ]
    )


PANE_SOURCES = {
    "preGradGraph": ("before_pre_grad_graph", "inductor_pre_grad_graph"),
    "postGradGraph": ("after_post_grad_graph", "inductor_post_grad_graph"),
    "generatedCode": ("inductor_output_code", "inductor_aot_wrapper_code"),
}


def _entry_kind(env: dict[str, Any]) -> str | None:
    if "artifact" in env and isinstance(env["artifact"], dict):
        return env["artifact"].get("name")
    if "graph_dump" in env and isinstance(env["graph_dump"], dict):
        return env["graph_dump"].get("name")
    for k in ("inductor_pre_grad_graph", "inductor_post_grad_graph", "inductor_output_code"):
        if k in env:
            return k
    return None


def _align(pane_lines: list[str], payload_lines: list[str]) -> dict[str, Any]:
    positions: dict[str, list[int]] = {}
    for j, pl in enumerate(pane_lines):
        positions.setdefault(pl, []).append(j)
    counts: dict[int, int] = {}
    for i, pl in enumerate(payload_lines):
        for j in positions.get(pl, ()):
            counts[j - i] = counts.get(j - i, 0) + 1
    n = len(payload_lines)
    # most matches; ties -> offset closest to 0, then smaller
    off = min(counts, key=lambda o: (-counts[o], abs(o), o)) if counts else 0
    matches = counts.get(off, 0)
    missing = [
        i + 1
        for i in range(n)
        if not (0 <= i + off < len(pane_lines) and pane_lines[i + off] == payload_lines[i])
    ]
    return {
        "offset": off,
        "payload_lines": n,
        "pane_lines": len(pane_lines),
        "matched_lines": matches,
        "unmatched_payload_lines": missing[:20],
        "leading_empty_payload_lines": next(
            (i for i, s in enumerate(payload_lines) if s.strip()), n
        ),
        "aot_id_payload_line": next(
            (i + 1 for i, s in enumerate(payload_lines) if "# AOT ID:" in s), None
        ),
    }


def _pane_alignment(
    entries: list[tuple[dict[str, Any], str | None]], dirname: str, pane_id: str, text: str | None
) -> dict[str, Any] | None:
    if text is None:
        return None
    pane_lines = text.split("\n")
    for kind in PANE_SOURCES[pane_id]:
        cands = [
            (env, payload)
            for env, payload in entries
            if payload is not None and _entry_kind(env) == kind and _dir_name(env) == dirname
        ]
        if not cands:
            continue
        # tlparse takes the last output for the directory; prefer the last candidate that
        # aligns fully, else the best one.
        scored = []
        for idx, (_env, payload) in enumerate(cands):
            al = _align(pane_lines, payload.split("\n"))
            scored.append((al["matched_lines"] - len(al["unmatched_payload_lines"]), idx, al))
        _score, idx, al = max(scored, key=lambda t: (t[0], t[1]))
        al["source"] = kind
        al["candidates"] = len(cands)
        al["candidate_index"] = idx
        return al
    return {"source": None}


# --------------------------------------------------------------------------------------------
# summaries
# --------------------------------------------------------------------------------------------


def _read(p: Path) -> str:
    return p.read_text(encoding="utf-8", errors="replace")


def _compile_directory(out: Path) -> dict[str, Any] | None:
    cd = out / "compile_directory.json"
    if not cd.exists():
        return None
    data = json.loads(_read(cd))
    res: dict[str, Any] = {}
    for cid, entry in data.items():
        arts = entry.get("artifacts", []) if isinstance(entry, dict) else []
        item: dict[str, Any] = {"artifacts": [a.get("name") for a in arts]}
        suffixes = {a["name"]: a["suffix"] for a in arts if a.get("suffix")}
        if suffixes:
            item["suffixes"] = suffixes
        readable = [a["name"] for a in arts if a.get("readable_url")]
        if readable:
            item["readable"] = readable
        extra_keys = sorted(set(entry) - {"artifacts"}) if isinstance(entry, dict) else []
        if extra_keys:
            item["extra_keys"] = extra_keys
        res[cid] = item
    return res


def _output_listing(out: Path) -> list[str]:
    return sorted(p.name + ("/" if p.is_dir() else "") for p in out.iterdir())


def summarize_log(log: Path) -> dict[str, Any]:
    """tlparse's view of one log; a ``.log.gz`` is given to tlparse decompressed (it reads
    plain files only), its bytes and md5 those of the file in the repository."""
    log = Path(log)
    stored = log.read_bytes()
    raw = gzip.decompress(stored) if log.name.endswith(".gz") else stored
    res: dict[str, Any] = {
        "input": _rel(log),
        "input_bytes": len(stored),
        "input_md5": hashlib.md5(stored).hexdigest(),
        "tlparse_version": tlparse_version(),
    }
    with tempfile.TemporaryDirectory(prefix="tlref_") as tmp:
        if log.name.endswith(".gz"):
            log = Path(tmp) / log.name[: -len(".gz")]
            log.write_bytes(raw)
        out = Path(tmp) / "out"
        proc = _run([str(log), "-o", str(out), "--no-browser", "--overwrite"])
        res["exit_code"] = proc.returncode
        res.update(parse_console(proc.stdout, proc.stderr))
        if proc.returncode != 0:
            res["stderr_tail"] = _tail(proc.stderr)
            res["stdout_tail"] = _tail(proc.stdout)
            return res
        res["outputs"] = _output_listing(out)
        cd = _compile_directory(out)
        res["compile_ids"] = cd
        idx = out / "index.html"
        if idx.exists():
            res.update(parse_index(_read(idx)))
        fr = out / "failures_and_restarts.html"
        res["failures"] = parse_failures(_read(fr)) if fr.exists() else None

        if PROVENANCE_TRIGGER in raw:
            res["provenance"] = _provenance(log, Path(tmp) / "prov")
            res["provenance_note"] = PROVENANCE_NOTE
        else:
            res["provenance"] = None
    return res


def _provenance(log: Path, out: Path) -> dict[str, Any]:
    proc = _run([str(log), "-o", str(out), "--no-browser", "--overwrite", "--inductor-provenance"])
    res: dict[str, Any] = {"exit_code": proc.returncode}
    if proc.returncode != 0:
        res["stderr_tail"] = _tail(proc.stderr)
        return res
    pages = sorted(p.name for p in out.glob("provenance_tracking_*.html"))
    res["pages"] = pages
    idx = out / "index.html"
    if idx.exists():
        res["index_links"] = parse_index(_read(idx)).get("provenance_links", [])
    entries = iter_log_entries(log)
    maps_by_dir: dict[str, Any] = {}
    for name in pages:
        dirname = name[len("provenance_tracking_") : -len(".html")]
        parsed = parse_provenance_page(_read(out / name))
        if not any(parsed["maps"][k] for k in MAP_KEYS):
            continue
        panes = {}
        for pid in PANE_IDS:
            text = parsed["panes"][pid]
            panes[pid] = {
                "lines": None if text is None else text.split("\n"),
                "alignment": _pane_alignment(entries, dirname, pid, text),
            }
        item: dict[str, Any] = {"maps": parsed["maps"], "panes": panes}
        if "extra_map_keys" in parsed:
            item["extra_map_keys"] = parsed["extra_map_keys"]
        maps_by_dir[dirname] = item
    res["maps"] = maps_by_dir
    return res


def _landing_flags(page: str) -> dict[str, Any]:
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    m = re.search(r"Multi-Rank TLParse Report \((\d+) ranks?\)", text)
    return {
        "diverging_compile_ids": "Diverging Compilation IDs" in text,
        "diverging_cache": "Diverging Cache hit/miss patterns" in text,
        "diverging_collectives": "Diverging collective operation sequences"
        in text.replace("Diverging Collective", "Diverging collective"),
        "runtime_analysis_not_available": "Runtime analysis not available" in text,
        "execution_order_differs": "Graph execution order differs across ranks" in text,
        "report_rank_count": int(m.group(1)) if m else None,
    }


def summarize_rank_dir(d: Path) -> dict[str, Any]:
    d = Path(d)
    files = sorted(p.name for p in d.iterdir() if p.is_file() and RANK_LOG_RE.match(p.name))
    res: dict[str, Any] = {
        "input": _rel(d),
        "rank_files": files,
        "ignored_files": sorted(
            p.name for p in d.iterdir() if p.is_file() and not RANK_LOG_RE.match(p.name)
        ),
        "tlparse_version": tlparse_version(),
    }
    with tempfile.TemporaryDirectory(prefix="tlref_") as tmp:
        out = Path(tmp) / "out"
        if any(name.endswith(".gz") for name in files):  # tlparse reads plain files only
            plain = Path(tmp) / "ranks"
            plain.mkdir()
            for name in files:
                data = (d / name).read_bytes()
                if name.endswith(".gz"):
                    name, data = name[: -len(".gz")], gzip.decompress(data)
                (plain / name).write_bytes(data)
            d = plain
        proc = _run([str(d), "--all-ranks-html", "-o", str(out), "--no-browser", "--overwrite"])
        res["exit_code"] = proc.returncode
        con = parse_console(proc.stdout, proc.stderr)
        res["stats_per_rank_in_order"] = [
            ln for ln in (proc.stderr + "\n" + proc.stdout).splitlines() if ln.startswith("Stats {")
        ]
        if "unknown_fields" in con:
            res["unknown_fields"] = con["unknown_fields"]
        if proc.returncode != 0:
            res["stderr_tail"] = _tail(proc.stderr)
            res["stdout_tail"] = _tail(proc.stdout)
            return res
        res["ranks"] = sorted(
            int(p.name[len("rank_") :])
            for p in out.iterdir()
            if p.is_dir() and re.fullmatch(r"rank_\d+", p.name)
        )
        res["outputs"] = _output_listing(out)
        page = _read(out / "index.html") if (out / "index.html").exists() else ""
        res.update(_landing_flags(page))
        per_rank = {}
        for r in res["ranks"]:
            cd = _compile_directory(out / f"rank_{r}")
            per_rank[str(r)] = sorted(cd) if cd is not None else None
        res["compile_ids_per_rank"] = per_rank
    return res


def summarize(path: Path) -> dict[str, Any]:
    path = Path(path)
    return summarize_rank_dir(path) if path.is_dir() else summarize_log(path)


# --------------------------------------------------------------------------------------------
# discovery / output
# --------------------------------------------------------------------------------------------


def _rel(p: Path) -> str:
    p = Path(p).resolve()
    try:
        return p.relative_to(DATA_DIR).as_posix()
    except ValueError:
        return p.as_posix()


def expected_path(path: Path) -> Path:
    rel = Path(path).resolve().relative_to(DATA_DIR)
    return EXPECTED_DIR / (rel.as_posix() + ".json")


def discover_inputs(root: Path = DATA_DIR) -> list[Path]:
    exp = EXPECTED_DIR.parent.resolve()
    logs = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and (p.suffix in (".log", ".txt") or p.name.endswith(".log.gz"))
        and p.name != "program-output.txt"  # a capture program's output, not a log
        and exp not in p.resolve().parents
    )
    dirs = sorted({p.parent for p in logs if RANK_LOG_RE.match(p.name)})
    return logs + dirs


def dumps(summary: dict[str, Any]) -> str:
    return json.dumps(summary, indent=2, ensure_ascii=False) + "\n"


def write_expected(path: Path) -> Path:
    summary = summarize(path)
    dest = expected_path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(dumps(summary), encoding="utf-8")
    return dest


def main(argv: list[str]) -> int:
    if not tlparse_available():
        print("tlparse binary not found on PATH", file=sys.stderr)
        return 2
    targets = [Path(a) for a in argv] if argv else discover_inputs()
    for t in targets:
        dest = write_expected(t)
        print(f"{_rel(t)} -> {dest.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
