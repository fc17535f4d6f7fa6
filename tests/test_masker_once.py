"""The trace's masker masks a long text once (a payload is read by its page, by the plan
and by its download): the same text gets the same answer, and what the masker learns
later is masked in texts it had answered before."""

from __future__ import annotations

import gzip
from pathlib import Path

from sphinx_torchtrace.sphinxext.masker import CACHED_FROM, TraceMasker
from sphinx_torchtrace.trace.secrets import MASK, scan_text

DATA = Path(__file__).parent / "data"
ENV_VALUE = "pq00000xDzXWW-2pdq0d2l35xh"
KEY_LINE = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"


def _log_text() -> str:
    """A real trace log's first 8 KB: what a long payload's text is like."""
    log = next((DATA / "corpus" / "aoti_mlp").glob("*.log*"))
    raw = gzip.open(log).read() if log.suffix == ".gz" else log.read_bytes()
    text = raw[:8192].decode("utf-8", "replace")
    assert len(text) >= CACHED_FROM
    return text


def test_a_value_learned_later_is_masked_in_a_text_masked_before() -> None:
    text = _log_text() + f"\n    x = '{ENV_VALUE}'\n"
    short = f"x = '{ENV_VALUE}'"  # a table cell's text
    masker = TraceMasker()
    assert ENV_VALUE in masker(text)  # a value alone: not secret by its shape
    assert masker(short) == short
    guard = f"G['os'].environ._data[b'HF_TOKEN'] == b'{ENV_VALUE}'"
    (secret,) = [s for s in scan_text(guard.encode()).found if s.name == "HF_TOKEN"]
    assert masker.learn(secret)
    shown = masker(text)
    assert ENV_VALUE not in shown and MASK in shown
    assert masker(text) == shown and masker(shown) == shown
    assert masker(short) == f"x = '{MASK}'"


def test_a_private_keys_line_learned_later_is_masked_in_a_text_masked_before() -> None:
    text = _log_text() + f"\nkey part: {KEY_LINE}\n"
    masker = TraceMasker()
    assert KEY_LINE in masker(text)
    pem = f"-----BEGIN PRIVATE KEY-----\n{KEY_LINE}\nAAAA\n-----END PRIVATE KEY-----\n"
    for secret in scan_text(pem.encode()).found:
        masker.learn_key(secret)
    assert KEY_LINE not in masker(text)
