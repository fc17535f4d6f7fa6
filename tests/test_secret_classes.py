"""Classes of secrets the leak campaign found masked only by chance, each tested over
many generated values on a real log (``check`` lists each, ``redact`` leaves none):

* an AWS secret access key quoted alone (no name, no key id before it): 40 characters of
  base64 with ``/`` or ``+``, which the random-string rule missed 3 times in 100 (a run of
  small letters reads as a word, ``/`` cuts it into short parts), in a record's field as
  it stands, with its ``/`` escaped (``\\/``), and right after an escape.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

from sphinx_torchtrace.trace import load_trace
from sphinx_torchtrace.trace.secrets import AWS_SECRET, MASK, SecretMasker, mask_secrets, scan_text

from .conftest import SIMPLE_LOG
from .test_share import run

PREFIX = "V1121 11:50:48.850000 5896 torch/_dynamo/utils.py:2350] "
BASE64 = string.ascii_letters + string.digits + "+/"
#: The campaign's two survivors of seed 2 (a metrics field, an artifact's name).
SURVIVORS = ("iXY9q016vugt/hyaejncv7FODu+rmV9ruyyeucpe", "8iQq05ycq0Rc/JF3Uj5sQiFjUO+G80qQFcJJAkeJ")


def _aws_keys(n: int, seed: int = 51) -> list[str]:
    """``n`` keys as AWS writes them (30 random bytes in base64), each with ``/`` or ``+``."""
    r = random.Random(seed)
    keys = list(SURVIVORS)
    while len(keys) < n:
        key = "".join(r.choice(BASE64) for _ in range(40))
        if "/" in key or "+" in key:
            keys.append(key)
    return keys


def _field(key: str, form: int) -> str:
    """A record line quoting ``key`` alone in a JSON string: as it stands, its ``/``
    escaped, right after an escaped backslash (a repr in a repr)."""
    quoted = json.dumps(f"'{key}'")
    if form == 1:
        quoted = quoted.replace("/", "\\/")
    elif form == 2:
        quoted = json.dumps(f"\\'{key}'")
    return PREFIX + '{"compilation_metrics": {"co_name": ' + quoted + ', "frame_key": "1"}}'


def test_a_lone_aws_secret_key_is_masked_in_every_encoding() -> None:
    keys = _aws_keys(3000)
    left = []
    for i, key in enumerate(keys):
        masked = mask_secrets(_field(key, i % 3))
        value = json.loads(masked[len(PREFIX) :])["compilation_metrics"]["co_name"]
        if value.lstrip("\\") != f"'{MASK}'":
            left.append(value)
    assert left == []
    kinds = {s.looks_like for s in scan_text(_field(SURVIVORS[0], 1).encode()).found}
    assert kinds == {AWS_SECRET}


def test_check_lists_and_redact_removes_a_lone_aws_secret_key(tmp_path: Path) -> None:
    keys = _aws_keys(60, seed=3)
    lines = [_field(key, i % 3) for i, key in enumerate(keys)]
    head, rest = SIMPLE_LOG.read_text(encoding="utf-8").split("\n", 1)
    log = tmp_path / "aws.log"
    log.write_text("\n".join([head, *lines, rest]), encoding="utf-8")
    done = run("check", "--json", log)
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["logs"][0]["findings"]
    planted = set(range(2, 2 + len(keys)))
    assert {f["line"] for f in findings if f["class"] == "secrets"} >= planted
    out = tmp_path / "out.log"
    done = run("redact", log, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    text = out.read_text(encoding="utf-8")
    assert [k for k in keys if k[:12] in text or k[-12:] in text] == []
    for line in text.split("\n")[1 : 1 + len(keys)]:
        json.loads(line[len(PREFIX) :])  # masked in its own encoding: still JSON


# -- masking twice masks no more than once ----------------------------------------------------

ALNUM = string.ascii_letters + string.digits


def _piece(r: random.Random) -> str:
    """A piece of text a rule reads: a token, a quote, a key's line, an escape, an
    environment guard, a run of token characters that may join a neighbour."""

    def rnd(n: int, alphabet: str = ALNUM) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    return r.choice(
        (
            lambda: "ghp_" + rnd(36),
            lambda: "hf_" + rnd(34),
            lambda: "sk-" + rnd(48, ALNUM + "-_"),
            lambda: "glpat-" + rnd(22),
            lambda: "xoxb-" + rnd(24, ALNUM + "-"),
            lambda: "AKIA" + rnd(16, string.ascii_uppercase + string.digits),
            lambda: rnd(12) + "/" + rnd(13) + "+" + rnd(13),
            lambda: "eyJ" + rnd(20) + ".eyJ" + rnd(20) + "." + rnd(20),
            lambda: "environ['HF_TOKEN'] == '",
            lambda: "https://user:" + rnd(10) + "@",
            lambda: "aws_secret_access_key = ",
            lambda: "-----BEGIN RSA PRIVATE KEY-----\n" + rnd(64, ALNUM + "+/") + "\n",
            lambda: "\n" + rnd(64, ALNUM + "+/") + "\n",
            lambda: rnd(r.randrange(20, 50), ALNUM + "+/=_-"),
            lambda: r.choice("'\"") + rnd(r.randrange(32, 48)) + r.choice("'\""),
            lambda: r.choice("'\""),
            lambda: r.choice(("\\n", "\\t", "\\/", "\\\\", "\\u0067", "\n", " ", ":", "=", ",")),
            lambda: r.choice(("glpat-", "npm_", "pypi-", "AIza", "github_pat_", "eyJ")),
        )
    )()


def _texts(n: int, seed: int) -> list[str]:
    r = random.Random(seed)
    return ["".join(_piece(r) for _ in range(r.randrange(2, 9))) for _ in range(n)]


def test_masking_twice_masks_no_more_than_once() -> None:
    """A value masked can make another: the closing quote of a random string masked opens
    the next quoted string, a token stands alone beside an overlapping finding.  Masking
    goes on until nothing is left (a second pass masked 73 of 20,000 such texts more)."""
    changed = []
    for text in _texts(4000, seed=57):
        once = mask_secrets(text)
        if mask_secrets(once) != once:
            changed.append(text)
    assert changed == []


def test_check_lists_what_a_second_pass_would_mask() -> None:
    """The scan of a log (``check``) finds every value masking removes, those a first
    pass left beside an overlapping finding included."""
    text = "x = '" + "2yW4Acq9GFz6Y1t9EwL56nGisiWgNZq6ITZM5jtg'Ue52RvEJgwBuNO6n9JEC_glpat-"
    text += "3HqdZ6J6afU1zT0YQOaNF0'"
    masked, found = mask_secrets.masked(text)
    assert masked == f"x = '{MASK}'{MASK}'"
    assert [at for at, _ in found] == [5, 46]
    assert len(scan_text(text.encode() + b"\n").found) == 2


# -- a private key's line at the start of a text ----------------------------------------------


def _key_line(seed: int) -> str:
    r = random.Random(seed)
    return "".join(r.choice(BASE64) for _ in range(64))


def test_a_key_line_alone_is_masked_where_a_text_starts_with_it() -> None:
    """A page shows a text log's lines one by one: a key's line away from its header is
    a text of its own, which no line break comes before."""
    lines = [_key_line(seed) for seed in range(40)]
    # the lines the rule finds after a line break (most: some read as words, not random)
    found = [line for line in lines if line not in mask_secrets("a line\n" + line)]
    assert len(found) > 30
    for line in found:
        for text in (line, "  " + line, line + "\n", line + "\r\nnext line"):
            assert line not in mask_secrets(text), text


def test_check_and_redact_find_a_key_line_that_ends_a_log(tmp_path: Path) -> None:
    """A log's last line without its line break is read alone: a key's line there."""
    line = _key_line(1)
    log = tmp_path / "key.log"
    log.write_text(SIMPLE_LOG.read_text(encoding="utf-8").rstrip("\n") + "\n" + line)
    done = run("check", "--json", log)
    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["logs"][0]["findings"]
    last = len(log.read_text().split("\n"))
    assert [f["line"] for f in findings if f["class"] == "secrets"] == [last]
    out = tmp_path / "out.log"
    done = run("redact", log, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert line not in out.read_text(encoding="utf-8")


# -- limits lose no value a page must mask ----------------------------------------------------


def _guard(i: int) -> str:
    value = f"value-{i:04d}-Zq8wT"
    return PREFIX + json.dumps(
        {
            "artifact": {"name": "guard", "encoding": "string"},
            "note": f"environ['DB_PASS_{i}'] == '{value}'",
        }
    )


def _quote(i: int) -> str:
    return PREFIX + json.dumps(
        {"artifact": {"name": "note", "encoding": "string"}, "note": f"arg = value-{i:04d}-Zq8wT"}
    )


def _limits_log(tmp_path: Path, tokens: int, values: int) -> Path:
    """The simple log with ``tokens`` GitHub tokens first (findings nothing learns from),
    then ``values`` environment guards, then each value quoted again without its name."""
    r = random.Random(5)
    lines = [
        PREFIX
        + json.dumps(
            {
                "artifact": {"name": "t", "encoding": "string"},
                "note": "ghp_" + "".join(r.choice(ALNUM) for _ in range(36)),
            }
        )
        for _ in range(tokens)
    ]
    lines += [_guard(i) for i in range(values)] + [_quote(i) for i in range(values)]
    head, rest = SIMPLE_LOG.read_text(encoding="utf-8").split("\n", 1)
    log = tmp_path / "limits.log"
    log.write_text("\n".join([head, *lines, rest]), encoding="utf-8")
    return log


def test_redact_masks_every_environment_value_quoted_again(tmp_path: Path) -> None:
    """More environment values than a masker learned (32): each quoted again is masked."""
    log = _limits_log(tmp_path, tokens=0, values=60)
    out = tmp_path / "out.log"
    done = run("redact", log, "-o", out)
    assert done.returncode == 0, done.stdout + done.stderr
    text = out.read_text(encoding="utf-8")
    assert [i for i in range(60) if f"value-{i:04d}" in text] == []


def test_a_trace_masker_learns_the_values_past_the_first_findings(tmp_path: Path) -> None:
    """A log with more findings than the model keeps (1,000 tokens first): the environment
    values after them are kept, and the masker made from the model (a diff, a build)
    masks each where it is quoted without its name."""
    log = _limits_log(tmp_path, tokens=1005, values=30)
    scan = load_trace(log).ranks[0].secrets
    assert scan.count >= 1005 + 60
    masker = SecretMasker(secrets=scan.found)
    quotes = [mask_secrets(_quote(i)) for i in range(30)]
    assert all(f"value-{i:04d}" in q for i, q in enumerate(quotes))  # no rule finds them alone
    left = [i for i in range(30) if f"value-{i:04d}" in masker(_quote(i))]
    assert left == []
