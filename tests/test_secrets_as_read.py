"""Secrets are found in what a reader sees, not in the bytes (issue 51, point 2).

Each case is planted into a copy of a real log as torch would write it (a record with its
payload md5), in the encoding a reader decodes: a token right after a JSON escape, spelled
with ``\\u`` escapes, a URL written with ``\\/``, an AWS secret key holding ``/``, a private
key as a multi-line payload and inside a JSON string, a user's home folder under every
root of Linux, macOS and Windows clusters, and tokens across the cuts a reader makes in a
line longer than its chunk.  ``check`` must name each, ``redact``'s output must hold none
of them, parse as it did (tlparse reads it without an md5 or JSON failure), pass
``check`` and come out of a second ``redact`` unchanged.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path

import pytest

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.secrets import MAX_LINE_BYTES, mask_secrets, scan_text
from sphinx_torchtrace.trace.sharing.redact import CHUNK_SIZE

from .conftest import SIMPLE_LOG
from .test_share import run, tlparse_stats

PREFIX = "V1121 11:50:49.200000 5896 torch/_dynamo/x.py:1] "
GH = "ghp_" + "Q7mX2vK9pL4nR8sT1wY6zB3cD5fG0hJ2kA4e"  # fake, 36 mixed characters
HF = "hf_" + "Wz3Kp9Lm2Qx7Rv5Ty1Nb8Hc4Jd6Fg0Sa"
SK = "sk-proj-" + "Tq4Wv8Xy2Za6Bc0De3Fg7Hi1Jk5Lm9No"
AWS_SECRET = "wJ4lrXUtnFEMI/K7MDENG/bPxRfiCYz9xMPL3K8Y"
PASSWORD = "hunter2Pw9"
PEM_LINES = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSj", "AgEAAoIBAQC7Vx9Tz2qR5mK8pL3nW0sYcF4hJ6"]
USER = "zorblaxq"  # a user name no rule or machine knows


def _record(name: str, payload: str, envelope: str = "") -> str:
    """A string artifact record, its payload lines TAB-indented, with torch's md5."""
    md5 = hashlib.md5(payload.encode()).hexdigest()
    head = (
        f'{PREFIX}{{"artifact": {{"name": "{name}", "encoding": "string"}}, '
        f'"frame_id": 0, "frame_compile_id": 0, "attempt": 0{envelope}, "has_payload": "{md5}"}}'
    )
    return head + "\n" + "".join(f"\t{line}\n" for line in payload.split("\n"))


#: (what, the record's text, the secret parts no output byte may hold)
CASES: list[tuple[str, str, list[str]]] = [
    (
        "token after a JSON escape",
        _record("a", json.dumps({"msg": f"token was:\n{HF} and\t{SK}"})),
        [HF[3:], SK[8:]],
    ),
    (
        "token spelled with escapes",
        _record("b", '{"t": "\\u0067hp_' + GH[4:] + '"}'),
        [GH[4:]],
    ),
    (
        "URL with escaped slashes",
        _record("c", '{"db": "postgresql:\\/\\/bob:' + PASSWORD + '@db.example.com\\/x"}'),
        [PASSWORD],
    ),
    (
        "AWS secret key holding /",
        _record("d", json.dumps({"aws_secret_access_key": AWS_SECRET})),
        [AWS_SECRET],
    ),
    (
        "private key, multi-line payload",
        _record(
            "e",
            "\n".join(
                ["-----BEGIN RSA PRIVATE KEY-----", *PEM_LINES, "-----END RSA PRIVATE KEY-----"]
            ),
        ),
        PEM_LINES,
    ),
    (
        "private key in a JSON string",
        _record(
            "f",
            json.dumps(
                {
                    "key": "\n".join(
                        ["-----BEGIN PRIVATE KEY-----", *PEM_LINES, "-----END PRIVATE KEY-----"]
                    )
                }
            ),
        ),
        PEM_LINES,
    ),
    (
        "token in an envelope field",
        _record("g", "x", envelope=f', "note": "ran as {json.dumps(GH)[1:-1]}"'),
        [GH[4:]],
    ),
    *(
        (
            f"home folder {home}",
            _record("h", json.dumps({"cwd": home})),
            [USER],
        )
        for home in (
            f"/private/home/{USER}/proj/m.py",
            f"/media/{USER}/disk/m.py",
            f"/export/home/{USER}/m.py",
            f"/home/{USER}",
            f"/Users/{USER}",
        )
    ),
    ("Windows home folder", _record("i", json.dumps({"cwd": f"C:\\Users\\{USER}"})), [USER]),
    (
        "home folder after an escape",
        _record("j", json.dumps({"msg": f"in\n/home/{USER}/p/m.py,\tC:\\Users\\{USER}\\x"})),
        [USER],
    ),
    (
        "home folder with escaped slashes",
        _record("k", '{"f": "\\/home\\/' + USER + '\\/m.py"}'),
        [USER],
    ),
    (
        "AWS secret key in an assignment",
        _record("l", f"export AWS_SECRET_ACCESS_KEY={AWS_SECRET}"),
        [AWS_SECRET],
    ),
]


def _plant(dest: Path, records: list[str]) -> Path:
    base = SIMPLE_LOG.read_text(encoding="utf-8")
    dest.write_text(base + "".join(records), encoding="utf-8")
    return dest


@pytest.mark.parametrize("what,record,parts", CASES, ids=[c[0] for c in CASES])
def test_check_finds_and_redact_removes_what_a_reader_sees(
    what: str, record: str, parts: list[str], tmp_path: Path
) -> None:
    log = _plant(tmp_path / "planted.log", [record])
    line = SIMPLE_LOG.read_text(encoding="utf-8").count("\n") + 1  # the record's line
    checked = run("check", log, "--json")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    [report] = json.loads(checked.stdout)["logs"]
    assert any(f["line"] >= line for f in report["findings"]), (what, report["findings"])
    if "home" not in what:  # check names the paths it finds (for the user), never a secret
        assert not [p for p in parts if p in checked.stdout + checked.stderr]

    out = tmp_path / "redacted.log"
    redacted = run("redact", log, "-o", out)
    assert redacted.returncode == 0, redacted.stdout + redacted.stderr
    data = out.read_text(encoding="utf-8")
    assert [p for p in parts if p in data] == [], what
    assert data.count("\n") == log.read_text(encoding="utf-8").count("\n")  # lines kept
    assert run("check", out).returncode == 0
    again = tmp_path / "again.log"
    assert run("redact", out, "-o", again).returncode == 0
    assert again.read_bytes() == out.read_bytes()
    load_trace(out)  # parses, every payload's md5 right
    stats = tlparse_stats(out, tmp_path / "tl")
    assert "fail_payload_md5" not in stats and "fail_json" not in stats, stats


def test_every_case_at_once_keeps_tlparse_figures(tmp_path: Path) -> None:
    log = _plant(tmp_path / "planted.log", [c[1] for c in CASES])
    out = tmp_path / "redacted.log"
    assert run("redact", log, "-o", out).returncode == 0
    assert tlparse_stats(out, tmp_path / "after") == tlparse_stats(log, tmp_path / "before")


def _long_line_of_tokens(length: int) -> tuple[str, list[str]]:
    """A JSON list of distinct GitHub tokens ``length`` characters long: whatever offset
    a reader cuts it at, a token straddles the cut unless the cut is made with care."""
    tokens = []
    parts = []
    size = 0
    i = 0
    while size < length:
        secret = f"Zz{i:08d}" + "Qm4Xv8Kp2Ln6Rt1Ys5Bw9Cd3Ef"
        token = "ghp_" + secret
        tokens.append(json.dumps(token))
        parts.append(secret)
        size += len(token) + 4
        i += 1
    return "[" + ", ".join(tokens) + "]", parts


def test_a_token_across_a_readers_cut_in_a_long_line_is_found(tmp_path: Path) -> None:
    """One payload line longer than ``redact``'s chunk and the model's scan piece: every
    token in it is found by ``check``, ``redact`` and the model's scan, none cut in two."""
    line, parts = _long_line_of_tokens(CHUNK_SIZE + (1 << 20))
    log = _plant(tmp_path / "long.log", [_record("long", line)])
    checked = run("check", log, "--json")
    [report] = json.loads(checked.stdout)["logs"]
    assert report["counts"]["secrets"] == len(parts)
    out = tmp_path / "redacted.log"
    assert run("redact", log, "-o", out).returncode == 0
    data = out.read_text(encoding="utf-8")
    assert [p for p in parts if p in data] == []
    assert data.count("ghp_…[secret masked]") == len(parts)
    assert scan_text(log.read_bytes()).count == len(parts)
    assert len(line) > MAX_LINE_BYTES


def _one_line_keys(size: int) -> tuple[str, list[str]]:
    """A JSON list about ``size`` characters long of words and, every 40,000 characters,
    a private key written on one line (its body's pieces parted by spaces), so that some
    key lies across any cut a reader makes in it."""
    import random

    rng = random.Random(7)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    items: list[str] = []
    bodies: list[str] = []
    length = 0
    while length < size:
        if len(items) % 4000 == 0:
            pieces = ["".join(rng.choice(alphabet) for _ in range(64)) for _ in range(20)]
            bodies += pieces
            key = (
                "-----BEGIN RSA PRIVATE KEY----- "
                + " ".join(pieces)
                + " -----END RSA PRIVATE KEY-----"
            )
            items.append(json.dumps(key))
        else:
            items.append(json.dumps(f"word{len(items)}"))
        length += len(items[-1]) + 2
    return "[" + ", ".join(items) + "]", bodies


def test_a_one_line_private_key_across_a_readers_cut_is_found(tmp_path: Path) -> None:
    """A private key on one line of a line longer than the readers' pieces: wherever a
    piece ends inside a key, the cut moves before the key's first line, so ``check`` finds
    every key and ``redact`` leaves no piece of any."""
    line, bodies = _one_line_keys(CHUNK_SIZE + (1 << 20))
    assert len(line) > MAX_LINE_BYTES
    log = _plant(tmp_path / "keys.log", [_record("keys", line)])
    keys = line.count("-----BEGIN RSA PRIVATE KEY-----")
    checked = run("check", log, "--json")
    [report] = json.loads(checked.stdout)["logs"]
    assert report["counts"]["secrets"] >= keys
    out = tmp_path / "redacted.log"
    assert run("redact", log, "-o", out).returncode == 0
    data = out.read_text(encoding="utf-8")
    assert [b for b in bodies if b in data] == []
    again = run("check", out, "--json")
    [clean] = json.loads(again.stdout)["logs"]
    assert clean["counts"].get("secrets", 0) == 0


def test_masking_published_text_decodes_escapes() -> None:
    """The same rules mask text a page or a download publishes (JSON dumped for a
    metrics table, a chromium event's arguments)."""
    text = json.dumps({"a": f"x\n{HF}", "b": f"\t{SK}", "c": "\\u0067hp_" + GH[4:]})
    masked = mask_secrets(text)
    assert HF[3:] not in masked and SK[8:] not in masked and GH[4:] not in masked
    assert json.loads(masked)  # still JSON


# -- what a build publishes ---------------------------------------------------------------

TEXT_LOG = Path(__file__).parent / "data" / "captured" / "torch_logs" / "plus_dynamo.log"


def _published(folder: Path) -> bytes:
    """Every byte a site publishes, compressed files (``objects.inv``, ``.gz``) read as
    their readers decompress them."""
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "objects.inv":
            head = data.split(b"\n", 4)
            data = b"\n".join(head[:4]) + zlib.decompress(head[4])
        elif data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        out.append(data)
    return b"\n".join(out)


def test_a_built_site_publishes_none_of_it(tmp_path: Path) -> None:
    """A default build of a trace log holding every case (and the token and home folder in
    a compile's metrics and a chromium event), and of a TORCH_LOGS text log whose graph
    break reason holds them (shown as a link's ``title`` and in ``objects.inv``)."""
    text = SIMPLE_LOG.read_text(encoding="utf-8")
    text = text.replace(
        '"compilation_metrics": {',
        '"compilation_metrics": {"leak": "x\\n' + HF + " /home/" + USER + '", ',
        1,
    )
    log = _plant(tmp_path / "planted.log", [])
    log.write_text(text + "".join(c[1] for c in CASES), encoding="utf-8")
    text_log = tmp_path / "text.log"
    text_log.write_text(
        TEXT_LOG.read_text(encoding="utf-8").replace(
            "Failed to trace builtin operator",
            f"Failed to trace builtin operator {HF} /Users/{USER} C:\\Users\\{USER}",
        ),
        encoding="utf-8",
    )
    parts = [HF[3:], SK[8:], GH[4:], AWS_SECRET, PASSWORD, USER, *PEM_LINES]
    for source in (log, text_log):
        site = tmp_path / f"site-{source.stem}"
        built = run("build", source, "-o", site, "-q")
        assert built.returncode == 0, built.stdout + built.stderr
        published = _published(site)
        assert [p for p in parts if p.encode() in published] == [], source.name
        assert b"[secret masked]" in published


def test_no_console_line_shows_a_secret(tmp_path: Path) -> None:
    """``summary`` and ``diff`` (text and JSON) of a log whose graph break reason and
    records hold tokens: a terminal's scrollback and a CI log are published too."""
    text_log = tmp_path / "text.log"
    text_log.write_text(
        TEXT_LOG.read_text(encoding="utf-8").replace(
            "Failed to trace builtin operator", f"Failed to trace builtin operator {HF} x\\n{GH}"
        ),
        encoding="utf-8",
    )
    log = _plant(tmp_path / "planted.log", [c[1] for c in CASES])
    named = tmp_path / "named"  # a log named with a token, as the build names what it reads
    named.mkdir()
    _plant(named / f"dedicated_log_torch_trace.{GH}.log", [])
    parts = [HF[3:], SK[8:], GH[4:], AWS_SECRET, PASSWORD, *PEM_LINES]
    for args in (
        ("build", named, "-o", tmp_path / "site"),
        ("summary", log),
        ("summary", "--json", log),
        ("summary", text_log),
        ("diff", SIMPLE_LOG, log),
        ("diff", SIMPLE_LOG, log, "--format", "json"),
        ("diff", SIMPLE_LOG, log, "--format", "github"),
    ):
        result = run(*args)
        shown = result.stdout + result.stderr
        assert result.returncode in (0, 1), (args, shown)
        assert [p for p in parts if p in shown] == [], args
