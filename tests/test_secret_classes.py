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

from sphinx_torchtrace.trace.secrets import AWS_SECRET, MASK, mask_secrets, scan_text

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
    kinds = {s.kind for s in scan_text(_field(SURVIVORS[0], 1).encode()).found}
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
