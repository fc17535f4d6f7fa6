"""What the leak campaign found in ``check`` and ``redact``, one class per test, on a real
log with the campaign's shapes planted as torch would write them.

* a home folder written with JSON escapes: after an escaped backslash (``\\\\/home/…``,
  ``\\\\C:\\\\Users\\\\…``), spelled with escapes inside JSON in a JSON string, a user's name
  with a ``\\u`` escape in a bare value; in a record line and in a payload line longer
  than the readers' chunk;
* the file name in the header of a gzip log's second member;
* a line of the user's code after a frame, on a record whose line a secret shortened:
  ``redact`` removes it the first time (redacting twice changes nothing).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path

import pytest

from sphinx_torchtrace.trace.sharing import redact as redact_module
from sphinx_torchtrace.trace.sharing.redact import redact_log, scan_log
from sphinx_torchtrace.trace.sharing.redact_text import Options, TextRedactor

from .conftest import SIMPLE_LOG
from .test_share import TOKEN, run

PREFIX = "V1121 11:50:48.850000 5896 torch/_dynamo/utils.py:2350] "
#: (the user's name, the value of a JSON string field as written in the log's bytes).
ESCAPED_HOMES = [
    # an escaped backslash right before the path: read ``\/home/…``
    ("ahmadq1", r"\\/home/ahmadq1/proj/train.py"),
    ("bettyq2", r"lorem \\/Users/bettyq2/work/run.py:42 ipsum"),
    ("carlq03", r"\\/private/var/home/carlq03/.cache/huggingface/hub"),
    ("dinaq04", r"\\/data/users/dinaq04/proj/train.py"),
    ("elifq05", r"\\C:\\Users\\elifq05\\proj\\train.py"),
    ("faroq06", r"HOME=\\/export/home/faroq06"),
    # JSON in a JSON string: slashes escaped twice
    ("gretaq7", r"{\"cwd\": \"\\/media\\/gretaq7\\/code\\/x.py\"}"),
    ("hugoq08", r"{\"f\": \"\\u002fvar\\u002fhome\\u002fhugoq08\\u002fproj\"}"),
    # a bare home value whose name a \\u escape cuts
    ("ines\u00e9q9", r"'HOME': '/private/home/ines\u00e9q9'"),
]


def _plant_records(lines: list[str]) -> str:
    """The simple log with ``lines`` (record lines) after its first record."""
    head, rest = SIMPLE_LOG.read_text(encoding="utf-8").split("\n", 1)
    return "\n".join([head, *lines, rest])


def _escaped_log(tmp_path: Path) -> Path:
    lines = [
        PREFIX + '{"artifact": {"name": "note", "encoding": "string"}, "note": "' + v + '"}'
        for _, v in ESCAPED_HOMES
    ]
    log = tmp_path / "escaped.log"
    log.write_text(_plant_records(lines), encoding="utf-8")
    # the log is what the test says: each line is JSON, the user's name in a reader's view
    for line, (name, _) in zip(lines, ESCAPED_HOMES, strict=True):
        value = json.loads(line[len(PREFIX) :])["note"]
        assert name in value or name in json.dumps(json.loads(value) if "{" in value else "")
    return log


def _names_left(lines: list[str]) -> list[str]:
    """The planted names a reader of record ``lines`` sees: as written, or decoded (a JSON
    string, and JSON in it)."""
    views = list(lines)
    for line in lines:
        value = json.loads(line[len(PREFIX) :])["note"]
        views.append(value)
        if value.startswith("{"):
            views += [str(v) for v in json.loads(value).values()]
    return [n for n, _ in ESCAPED_HOMES if any(n in v for v in views)]


def test_check_lists_every_home_folder_written_with_escapes(tmp_path: Path) -> None:
    log = _escaped_log(tmp_path)
    done = run("check", "--json", log)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["logs"][0]["findings"]
    planted = range(2, 2 + len(ESCAPED_HOMES))
    lines = {f["line"] for f in findings if f["class"] == "paths" and f["line"] in planted}
    assert lines == set(planted), findings


def test_redact_leaves_no_escaped_home_folder_and_its_json_parses(tmp_path: Path) -> None:
    log = _escaped_log(tmp_path)
    out = tmp_path / "out.log"
    done = run("redact", log, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    text = out.read_text(encoding="utf-8")
    # each masked in its own encoding: every line still parses, no name in any view of it
    assert _names_left(text.split("\n")[1 : 1 + len(ESCAPED_HOMES)]) == []
    assert not any(n in text for n, _ in ESCAPED_HOMES)
    assert "~/project" in text and r"~\\project" in text  # the folders renamed, not cut
    again = tmp_path / "again.log"
    assert run("redact", out, "-o", again).returncode == 0
    assert again.read_bytes() == out.read_bytes()


def test_a_home_folder_with_escapes_in_a_payload_line_longer_than_a_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chunk of 64 KiB stands for the readers' 4 MiB: the same cuts, a smaller log."""
    monkeypatch.setattr(redact_module, "CHUNK_SIZE", 1 << 16)
    words = "lorem ipsum dolor graph node relu " * 6000  # 200 KB: several chunks
    canary = r"File \"\/home\/ahmadq\u00311\/proj\/train.py\", line 7, in forward"
    body = "".join(f"{words[i * 50_000 : (i + 1) * 50_000]} {canary} " for i in range(4))
    payload = json.dumps({"blob": "X"}).replace("X", body)
    md5 = hashlib.md5(payload.encode()).hexdigest()
    head = PREFIX + json.dumps(
        {"artifact": {"name": "big", "encoding": "json"}, "has_payload": md5}
    )
    log = tmp_path / "long.log"
    log.write_text(head + "\n\t" + payload + "\n", encoding="utf-8")
    report = scan_log(log, TextRedactor(Options(local_names=False)))
    assert [c.kind for c in report.changes] == ["paths"] * 4
    out = tmp_path / "out.log"
    report = redact_log(log, out, TextRedactor(Options(local_names=False)))
    assert report.remaining == []
    text = out.read_text(encoding="utf-8")
    assert "ahmadq" not in text and "\\u0031" not in text
    assert text.count(r"File \"~/project/train.py\"") == 4
    json.loads(text.split("\n")[1][1:])


def _member(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(filename=name, mode="wb", fileobj=buf, mtime=0) as z:
        z.write(data)
    return buf.getvalue()


def test_check_reads_the_file_name_of_every_gzip_member(tmp_path: Path) -> None:
    """``cat a.gz b.gz`` is one gzip log of two members, each header with its name."""
    data = SIMPLE_LOG.read_bytes()
    cut = data.index(b"\nV", len(data) // 2) + 1
    log = tmp_path / "joined.log.gz"
    log.write_bytes(_member("part1.log", data[:cut]) + _member(f"{TOKEN}.log", data[cut:]))
    assert gzip.decompress(log.read_bytes()) == data  # one log, as every reader reads it
    done = run("check", log)
    assert done.returncode == 1
    assert "gzip member 2's file name holds a Hugging Face token" in done.stdout
    assert TOKEN[3:] not in done.stdout


def test_a_users_line_after_a_frame_goes_the_first_time(tmp_path: Path) -> None:
    """A token masked in the record line moves the payload's text: the line after the
    frame is still the user's code, and a second redact finds nothing more."""
    record = PREFIX + json.dumps(
        {"artifact": {"name": f"key: {TOKEN}.", "encoding": "string"}, "has_payload": "0" * 32}
    )
    code = "mm = secret_sauce(arg0_1, arg1_1)"
    payload = ['\t    File "/var/home/aliceq/proj/train.py", line 7, in forward', f"\t    {code}"]
    log = tmp_path / "frame.log"
    log.write_text(_plant_records([record, *payload]), encoding="utf-8")
    out = tmp_path / "out.log"
    done = run("redact", log, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    text = out.read_text(encoding="utf-8")
    assert "secret_sauce" not in text and "aliceq" not in text
    again = tmp_path / "again.log"
    assert run("redact", out, "-o", again).returncode == 0
    assert again.read_bytes() == out.read_bytes()


def test_a_path_in_a_removed_line_of_source_is_listed_and_its_user_masked(
    tmp_path: Path,
) -> None:
    """The user's code under a frame names a file in another user's home: the line goes as
    source, check lists the path at its line too, and the name goes wherever else it is."""
    record = PREFIX + json.dumps(
        {"artifact": {"name": "note", "encoding": "string"}, "has_payload": "0" * 32}
    )
    payload = [
        '\t  File "/home/aliceq/proj/train.py", line 7, in forward',
        '\t    data = open("/home/bobq11/data/x.csv")',
    ]
    later = PREFIX + json.dumps({"artifact": {"name": "owner bobq11", "encoding": "string"}})
    log = tmp_path / "code.log"
    log.write_text(_plant_records([record, *payload, later]), encoding="utf-8")
    done = run("check", "--json", log)
    findings = json.loads(done.stdout)["logs"][0]["findings"]
    at_code = {(f["class"], f["what"]) for f in findings if f["line"] == 4}
    assert ("paths", "/home/bobq11/data/x.csv") in at_code, findings
    out = tmp_path / "out.log"
    assert run("redact", log, "-o", out).returncode == 0
    text = out.read_text(encoding="utf-8")
    assert "bobq11" not in text and "aliceq" not in text


@pytest.mark.parametrize(
    "value",
    [
        # an AWS secret after its name, a letter of it and its slash escaped (JSON in JSON)
        r"{\"AccessKeyId\": \"ASIAWGKE097XTROGNJ7J\", "
        r"\"SecretAccessKey\": \"gq02dqQO\u00426Um\/ZoND0nakUZOuw+pECFpM2qldSdT\"}",
        r"\"api\": \"Zq8Xv2Lm4Np6Rt1Yw3Ks5Bd7Fg9Hj0Ac2UeAb12\"",  # a random quoted string
    ],
)
def test_a_secret_at_every_cut_of_a_long_line_is_found_and_masked(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wherever the reader's chunk ends inside the value or between it and its name, check
    finds it and redact masks it the first time."""
    chunk = 1 << 12
    monkeypatch.setattr(redact_module, "CHUNK_SIZE", chunk)
    head = PREFIX + '{"artifact": {"name": "big", "encoding": "string"}, "note": "'
    pad = "lorem ipsum " * 1000
    log = tmp_path / "long.log"
    missed = []
    for k in range(len(value) + 1):  # the first chunk ends k bytes into the value
        line = head + pad[: chunk - k - len(head)] + value + pad[:3000] + '"}\n'
        log.write_text(line, encoding="utf-8")
        if scan_log(log, TextRedactor(Options(local_names=False))).counts["secrets"] < 1:
            missed.append(k)
    assert missed == []


def test_two_logs_whose_names_mask_alike_stay_two_redacted_logs(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    for token in (TOKEN, TOKEN[:-4] + "Zz9Q"):
        (folder / f"{token}.log").write_bytes(SIMPLE_LOG.read_bytes())
    out = tmp_path / "out"
    done = run("redact", folder, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    written = sorted(p.name for p in out.iterdir())
    assert len(written) == 2 and not any(TOKEN[3:12] in n for n in written), written
