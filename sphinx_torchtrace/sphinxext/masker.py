"""The masker of a trace's pages: what the logs' scans found, masked wherever a page shows
any of it, also where a page shows it apart from what made it a finding.

A private key is found by its header; a reader of a TORCH_LOGS text log puts the header's
line in one message and the key's lines, printed without a prefix, in another, and a page
shows each.  So the masker learns every line of every key the logs' scans found (as read,
the whole log), and masks a line's text wherever a page shows it (or a piece of it).  A
log's scan keeps its first :data:`~...trace.secrets.MAX_FOUND` findings: when one held
more, the log is read once more, whole, for the environment values and keys past them.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import zlib
from collections.abc import Iterable, Sequence

from ..trace.secrets import (
    MASK,
    MAX_PASSES,
    PRIVATE_KEY,
    Secret,
    SecretMasker,
    SecretScan,
    SecretScanner,
    learnable,
)

#: Bytes read at once when a log is read again.
_CHUNK = 1 << 20
#: Lines of private keys learned, at most (a key has 25 to 100).
MAX_KEY_LINES = 20_000
#: A line of a key's body: base64 (``/`` perhaps JSON-escaped), 16 characters or more.
_KEY_TEXT = re.compile(r"^[A-Za-z0-9+/=]{16,}$")
#: What may be a key's line (or a piece of one) in published text.
_RUN = re.compile(r"(?:[A-Za-z0-9+=]|\\?/){16,}")
_BREAK = re.compile(r"\\[nrt]|[\r\n\t]")
_U_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
#: Texts this long or longer are masked once: the same text again is answered from its
#: digest (a payload is read by its page, by the plan comparing graphs and by its download).
CACHED_FROM = 1024
#: Texts remembered at most (a digest and, where masking changed the text, what it made).
MAX_CACHED = 200_000
#: Characters of short texts remembered at most (a thousand ranks' event lines are each
#: their own: the memory they would hold buys nothing).
MAX_SHORT_CHARS = 4_000_000
#: Texts shorter than this are remembered whole, with their answer: a page's names, paths
#: and labels come again on every page that links to them.
SHORT = 256


class TraceMasker(SecretMasker):
    """A :class:`SecretMasker` that also masks the lines of the private keys it learned
    (:meth:`learn_key`), wherever a text holds one of them or 16 characters of one."""

    def __init__(self, keep: Iterable[str] = (), secrets: Iterable[Secret] = ()) -> None:
        secrets = list(secrets)
        super().__init__(keep, secrets)
        # a long text's digest: what masking made of it (None: the text as it is)
        self._done: dict[bytes, str | None] = {}
        self._short: dict[str, str] = {}  # a short text: its answer
        self._short_chars = 0
        self._lines: set[str] = set()
        self._joined = ""
        for secret in secrets:
            self.learn_key(secret)

    def learn_key(self, secret: Secret) -> None:
        """Mask each line of a private key's body found by a scan (unless kept)."""
        if secret.looks_like != PRIVATE_KEY or self.keeps(secret):
            return
        new = [line for line in key_lines(secret.value) if line not in self._lines]
        room = MAX_KEY_LINES - len(self._lines)
        if new and room > 0:
            self._lines.update(new[:room])
            self._joined = "\n".join(sorted(self._lines))
            self._forget()

    def learn(self, secret: Secret) -> bool:
        """As :meth:`SecretMasker.learn`; texts masked before are masked anew."""
        self._forget()
        return super().learn(secret)

    def _forget(self) -> None:
        self._done.clear()
        self._short.clear()
        self._short_chars = 0

    def __call__(self, text: str) -> str:
        """``text`` masked until masking it again changes nothing: a key's line masked can
        leave a value beside it that the rules find alone.  A long text is masked once
        (:data:`CACHED_FROM`): the same text again gets the same answer from its digest,
        and so does a text this masking made, where masking it again changed nothing; a
        short one (:data:`SHORT`) is remembered with its answer."""
        if len(text) < CACHED_FROM:
            if len(text) >= SHORT:
                return self._settled(text)[0]
            shown = self._short.get(text)
            if shown is None:
                shown = self._settled(text)[0]
                if self._short_chars < MAX_SHORT_CHARS:
                    self._short[text] = shown
                    self._short_chars += len(text)
            return shown
        key = _digest(text)
        if key in self._done:
            return self._done[key] or text
        masked, settled = self._settled(text)
        if len(self._done) < MAX_CACHED:
            self._done[key] = None if masked == text else masked
            if settled and masked != text:
                self._done[_digest(masked)] = None
        return masked

    def _settled(self, text: str) -> tuple[str, bool]:
        """``text`` masked, and whether masking it again changed nothing (or the passes
        ran out: :data:`~...trace.secrets.MAX_PASSES`)."""
        for _ in range(MAX_PASSES):
            masked = super().__call__(text)
            if self._joined and len(masked) >= 16:
                masked = _RUN.sub(self._line, masked)
            if masked == text:
                return text, True
            text = masked
        return text, False

    def _line(self, m: re.Match[str]) -> str:
        run = m.group()
        return MASK if run.replace("\\/", "/") in self._joined else run


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def key_lines(body: str) -> list[str]:
    """The lines of a private key's body (as a scan found it: real or escaped line
    breaks, ``\\/``, ``\\u`` escapes), each as a reader reads it."""
    out = []
    for part in _BREAK.split(body):
        text = _U_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), part.replace("\\/", "/"))
        text = text.strip(" \"'")
        if _KEY_TEXT.match(text) and MASK not in text:
            out.append(text)
    return out


class _Kept(SecretScan):
    """A scan's findings a masker learns from, every one (the model keeps the first
    :data:`~...trace.secrets.MAX_FOUND` of all kinds): environment values and keys."""

    def add(self, secret: Secret) -> None:
        if secret.looks_like == PRIVATE_KEY or learnable(secret):
            self.found.append(secret)
        else:
            self.more += 1


def read_again(masker: TraceMasker, logs: Sequence[str | os.PathLike[str]], limit: int) -> None:
    """Teach ``masker`` the environment values and private keys of ``logs`` (plain or gzip),
    each read whole again, at most ``limit`` bytes of it, as the model read it."""
    for log in logs:
        scanner = SecretScanner()
        scanner.scan = _Kept()
        try:
            with open(log, "rb") as raw:
                compressed = raw.read(2) == b"\x1f\x8b"
                raw.seek(0)
                stream = gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw
                left = limit
                while left > 0 and (data := stream.read(min(_CHUNK, left))):
                    scanner.feed(data)
                    left -= len(data)
        except (OSError, EOFError, zlib.error):
            pass  # what was read is learned: the model said why the rest was not read
        for secret in scanner.close().found:
            masker.learn(secret)
            masker.learn_key(secret)
