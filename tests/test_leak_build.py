"""What the leak campaign found in default builds, one class per test, on real logs with
the campaign's shapes planted as torch writes them, each built into a real site.

A page masks what it shows only if the masking sees the value as the log held it: pages
cut a metrics field to a table cell, cut a function's name for a title, link an address,
split a graph into the lines of a side-by-side view, make an artifact's name an object
name.  Each test plants a secret where one of these happens and looks for any piece of it
(12 letters and digits running) in every byte the build wrote: pages, downloads, the
search index, ``objects.inv`` (decompressed), the generated sources.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import string
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from sphinx.testing.util import SphinxTestApp

from .conftest import DATA, SIMPLE_LOG, SiteMaker, copy_testroot, warnings_of, write_page

#: A real log whose frame page has the side-by-side provenance view (graphs split in lines).
PROVENANCE_LOG = (
    DATA / "captured" / "single_op_provenance" / "dedicated_log_torch_trace_aui929la.log"
)
#: A real TORCH_LOGS text log (guards and recompiles).
TEXT_LOG = DATA / "captured" / "torch_logs" / "env_secrets.log"
_PREFIX = re.compile(r"^(?:\[rank\d+\]:)?[VIWEC]\d{4} [\d:.]+ +\d+ [^\]]+\] ")
_MD5 = re.compile(r'"has_payload": "[0-9a-f]{32}"')
_RUN = re.compile(r"[a-z0-9]{12,}")
NEEDLE = 12


# -- secrets of the campaign's shapes (fake, made for the tests) ------------------------------


def private_key(seed: int) -> str:
    """A PEM private key: its header, base64 lines and a shorter last one, its end."""
    r = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "+/"
    lines = ["".join(r.choice(alphabet) for _ in range(60)) for _ in range(5)]
    lines.append("".join(r.choice(alphabet) for _ in range(22)) + "==")
    return "\n".join(["-----BEGIN PRIVATE KEY-----", *lines, "-----END PRIVATE KEY-----"])


def web_token(seed: int) -> str:
    """A JSON Web Token (header, claims, signature), longer than a table cell shows."""
    r = random.Random(seed)
    claims = "eyJzdWIiOiAi" + "".join(r.choice(string.ascii_letters) for _ in range(60))
    signature = "".join(r.choice(string.ascii_letters + string.digits) for _ in range(43))
    return f"eyJhbGciOiAiSFMyNTYiLCAidHlwIjogIkpXVCJ9.{claims}.{signature}"


AWS_SECRET = "zf3USyeq0h9k/kO15o9NEiPuRP+qYIsy6nlsjRNw"
AWS_PAIR = '{"AccessKeyId": "ASIAFUN5FT1WIRS166GR", "SecretAccessKey": "' + AWS_SECRET + '"}'
URL_PASSWORD = "Y65yqOGZq00002do"
DATABASE_URL = f"DATABASE_URL=https://deploy:{URL_PASSWORD}@db.internal:5432/data?ssl=true"
ENV_VALUE = "pq00000xDzXWW-2pdq0d2l35xh"


def guard(name: str, value: str) -> str:
    """A guard on an environment variable's value, as dynamo logs it."""
    return f"G['os'].environ._data[b'{name}'] == b'{value}'  #   # <frozen os>:761 in decode"


# -- planting in a real log ----------------------------------------------------------------


def _records(text: str) -> list[list[str]]:
    """A log's records: each its line and its payload lines."""
    out: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith("\t") and out:
            out[-1].append(line)
        else:
            out.append([line])
    return out


def _joined(records: list[list[str]]) -> str:
    return "\n".join(line for record in records for line in record)


def _envelope(line: str) -> tuple[str, dict[str, object]]:
    prefix = _PREFIX.match(line)
    assert prefix is not None, line
    return prefix.group(), json.loads(line[prefix.end() :])


def with_metrics(text: str, **fields: str) -> str:
    """The log with ``fields`` set in its first compilation_metrics record."""
    records = _records(text)
    for record in records:
        if '{"compilation_metrics": ' in record[0]:
            prefix, envelope = _envelope(record[0])
            metrics = envelope["compilation_metrics"]
            assert isinstance(metrics, dict)
            metrics.update(fields)
            record[0] = prefix + json.dumps(envelope)
            return _joined(records)
    raise AssertionError("no compilation_metrics record")


def with_payload_lines(text: str, artifact: str, lines: list[str], after: int = 1) -> str:
    """The log with ``lines`` among the payload lines of its artifact ``artifact`` (its
    md5 written again, as torch would)."""
    records = _records(text)
    for record in records:
        if f'"name": "{artifact}"' in record[0] and len(record) > after:
            record[1 + after : 1 + after] = ["\t" + line for line in lines]
            body = "\n".join(line[1:] for line in record[1:])
            md5 = hashlib.md5(body.encode()).hexdigest()
            record[0] = _MD5.sub(f'"has_payload": "{md5}"', record[0])
            return _joined(records)
    raise AssertionError(f"no {artifact} record")


def with_records(text: str, lines: list[str], at: int = 1) -> str:
    """The log with record ``lines`` after its record ``at`` (a prefix of the log's own)."""
    records = _records(text)
    prefix = _PREFIX.match(records[0][0])
    assert prefix is not None
    new = [[prefix.group() + line] for line in lines]
    return _joined(records[:at] + new + records[at:])


def artifact(name: str, payload: str, frame: int = 0) -> str:
    """A string artifact's record line, its payload lines after it (joined by newlines)."""
    md5 = hashlib.md5(payload.encode()).hexdigest()
    head = json.dumps(
        {
            "artifact": {"name": name, "encoding": "string"},
            "frame_id": frame,
            "frame_compile_id": 0,
            "attempt": 0,
            "has_payload": md5,
        }
    )
    return head + "\n" + "\n".join("\t" + line for line in payload.split("\n"))


# -- building and looking -------------------------------------------------------------------


def build(make_site: SiteMaker, tmp_path: Path, logs: dict[str, str], target: str) -> SphinxTestApp:
    """A project whose page shows ``target`` (under ``logs/``), the ``logs`` written."""
    srcdir = copy_testroot("simple", tmp_path / "project")
    for name, text in logs.items():
        path = srcdir / "logs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    write_page(
        srcdir, "index.rst", f"Leaks\n=====\n\n.. torchtrace:: logs/{target}\n   :name: run\n"
    )
    return make_site("simple", "html", srcdir=srcdir)


def _published(app: SphinxTestApp) -> Iterator[tuple[str, bytes]]:
    """Every file the build wrote (the output, the generated sources), ``objects.inv``
    decompressed; the inputs and the doctree folder (the model's cache) left out."""
    srcdir, outdir, doctrees = Path(app.srcdir), Path(app.outdir), Path(app.doctreedir)
    for root in (outdir, srcdir):
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.is_relative_to(srcdir / "logs"):
                continue
            if path.is_relative_to(doctrees) or (root == srcdir and path.is_relative_to(outdir)):
                continue
            data = path.read_bytes()
            if path.name == "objects.inv":
                data = zlib.decompress(data.split(b"\n", 4)[4])
            yield str(path.relative_to(root)), data


def needles(secret: str) -> set[str]:
    """Every 12 letters and digits running in a secret (lower case, as a search index)."""
    out = set()
    for run in _RUN.findall(secret.lower()):
        out.update(run[i : i + NEEDLE] for i in range(len(run) - NEEDLE + 1))
    return out


def left(app: SphinxTestApp, secret: str) -> list[str]:
    """The published files holding a piece of ``secret`` (and the piece)."""
    wanted = needles(secret)
    assert wanted, secret
    found = []
    for where, data in _published(app):
        text = data.decode("utf-8", "replace").lower()
        hits = sorted(n for n in wanted if n in text)
        if hits:
            found.append(f"{where}: {hits[0]}")
    assert all(n not in warnings_of(app).lower() for n in wanted)
    return found


def _inventory_names(app: SphinxTestApp) -> list[str]:
    data = (Path(app.outdir) / "objects.inv").read_bytes()
    lines = zlib.decompress(data.split(b"\n", 4)[4]).decode().splitlines()
    return [line.split(" ", 1)[0] for line in lines]


def key_body(key: str) -> str:
    return "\n".join(key.split("\n")[1:-1])


def shown(app: SphinxTestApp, pattern: str) -> bool:
    """Whether some page shows ``pattern`` (a regular expression over its HTML)."""
    pages = Path(app.outdir).rglob("*.html")
    return any(re.search(pattern, p.read_text("utf-8")) is not None for p in pages)


# -- 1. a private key's lines, shown apart from its header ------------------------------------


def test_a_private_key_in_a_metrics_field_is_masked_whole_where_a_cell_cuts_it(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The table cell of a field shows its first characters: the key's header and lines
    cut before its end.  Masked as the record holds it, every line is masked."""
    key = private_key(1)
    log = with_metrics(SIMPLE_LOG.read_text(encoding="utf-8"), fail_user_frame_filename=key)
    app = build(make_site, tmp_path, {"run.log": log}, "run.log")
    assert left(app, key_body(key)) == []
    assert shown(app, r"-----BEGIN</span> <span class=\"pre\">PRIVATE</span>")  # the cell
    assert shown(app, r"\[secret masked\]")


def test_a_private_key_in_a_graph_is_masked_in_the_side_by_side_lines(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The provenance view shows a graph line by line: each of the key's lines there is
    masked, as in the graph's own page and download."""
    key = private_key(2)
    lines = ['_key = """' + key.split("\n")[0], *key.split("\n")[1:-1], key.split("\n")[-1] + '"""']
    log = with_payload_lines(
        PROVENANCE_LOG.read_text(encoding="utf-8"), "inductor_post_grad_graph", lines
    )
    app = build(make_site, tmp_path, {"run.log": log}, "run.log")
    assert "[torchtrace.md5]" not in warnings_of(app)
    assert shown(app, r'class="torchtrace-line"')  # the side-by-side view is drawn
    assert left(app, key_body(key)) == []


# -- 2. an environment value: names, another rank's guard, a guard past the scan's findings --


def test_an_environment_value_in_an_artifact_name_its_guard_in_another_rank(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """Rank 0 compares HF_TOKEN's value; rank 1 names a graph after it: the graph's page
    title, object name (``objects.inv``, the search index) and file name mask it."""
    text = SIMPLE_LOG.read_text(encoding="utf-8")
    rank0 = with_records(text, [artifact("leak_note", guard("HF_TOKEN", ENV_VALUE))])
    name = f"arg {ENV_VALUE} changed_graph"
    graph = "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = x + 1"
    rank1 = with_records(text, [artifact(name, graph + "\n        return (y,)")])
    logs = {
        "folder/dedicated_log_torch_trace_rank_0_aaaa1111.log": rank0,
        "folder/dedicated_log_torch_trace_rank_1_bbbb2222.log": rank1,
    }
    app = build(make_site, tmp_path, logs, "folder")
    assert left(app, ENV_VALUE) == []
    names = [n for n in _inventory_names(app) if n.endswith("changed_graph")]
    assert names == ["run/rank1/[0/0]/arg#u0020[secret#u0020masked]#u0020changed_graph"]


def test_an_environment_value_quoted_before_its_guard_past_a_thousand_findings(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A log holding more findings than its scan keeps (1000): the value of a guard past
    them is masked where the log quoted it before the guard."""
    tokens = "\n".join(f"hf_{i:04d}" + "Ab1" * 10 for i in range(1000))
    echo = f"arg {ENV_VALUE} changed"
    text = with_records(
        SIMPLE_LOG.read_text(encoding="utf-8"),
        [
            artifact("leak_tokens", tokens),
            artifact("leak_echo", echo),
            artifact("leak_guard", guard("DB_PASSWORD", ENV_VALUE)),
        ],
    )
    app = build(make_site, tmp_path, {"run.log": text}, "run.log")
    assert "a Hugging Face token is masked" in warnings_of(app)
    assert "and 1001 more values that look secret" in warnings_of(app)
    assert left(app, ENV_VALUE) == []


# -- 3. tokens a page cuts, links or titles ---------------------------------------------------


def test_tokens_in_metrics_fields_cut_linked_or_titled_are_masked(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """A JSON Web Token cut in a table cell, an AWS secret after its name in a function's
    name cut for a title, a URL's password that a page links: none is published."""
    token = web_token(3)
    log = with_metrics(
        SIMPLE_LOG.read_text(encoding="utf-8"),
        co_name=AWS_PAIR,
        fail_type="login with " + token + " failed",
        fail_reason=DATABASE_URL,
    )
    app = build(make_site, tmp_path, {"run.log": log}, "run.log")
    assert left(app, token) == []
    assert left(app, AWS_SECRET) == []
    assert left(app, URL_PASSWORD) == []
    assert shown(app, r"deploy:\[secret masked\]&#64;db\.internal")


# -- 4. a TORCH_LOGS text log ---------------------------------------------------------------

#: A line of a campaign key that no rule finds alone (it reads as words to the rule for a
#: key's line away from its header).
WORDY_LINE = "dyJgLhaboftq0d3jvtbg+l6OYWHjrpav9JZr2AIYf+neL5y1C8WvkfVJAiO0"
_GLOG = "V1127 21:04:54.696000 24679 torch/_dynamo/guards.py:2025] "
_WARN = "W1127 21:04:55.285000 24679 torch/_dynamo/convert_frame.py:2415] "


def text_log(key: str, before: Sequence[str] = ()) -> str:
    """The text log with lines as a program prints them: a guard line whose text is a
    private key (its lines without a prefix), a token in a failure, an address."""
    lines = TEXT_LOG.read_text(encoding="utf-8").split("\n")
    header, *rest = key.split("\n")
    planted = [
        f"{_GLOG}[0/0] [__guards]     {header}",
        *rest,
        f"{_WARN}    login with {web_token(4)} failed",
        f"{_WARN}RuntimeError: {DATABASE_URL}",
    ]
    return "\n".join([*before, *lines[:20], *planted, *lines[20:]])


def _key_with_a_wordy_line(seed: int) -> str:
    key = private_key(seed).split("\n")
    return "\n".join([key[0], WORDY_LINE, *key[1:]])


def test_a_text_logs_private_key_its_lines_apart_from_its_header(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """The reader puts the key's header (a guard line) and its lines (no prefix) in
    different messages, each shown on its own: every line is masked, as are a token a
    failure's excerpt cuts and an address a page would link."""
    key = _key_with_a_wordy_line(5)
    app = build(make_site, tmp_path, {"torch_logs.log": text_log(key)}, "torch_logs.log")
    assert left(app, key_body(key)) == []
    assert left(app, web_token(4)) == []
    assert left(app, URL_PASSWORD) == []


def test_a_text_logs_private_key_past_a_thousand_findings(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """Past the findings a scan keeps, the log is read again: the key's lines are masked."""
    key = _key_with_a_wordy_line(6)
    tokens = [f"{_WARN}token hf_{i:04d}" + "Ab1" * 10 for i in range(1000)]
    log = text_log(key, tokens)
    app = build(make_site, tmp_path, {"torch_logs.log": log}, "torch_logs.log")
    assert "and 100" in warnings_of(app)  # a thousand tokens and more
    assert left(app, key_body(key)) == []
