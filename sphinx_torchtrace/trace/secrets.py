"""Values a trace must not publish: what the program read from its environment, and
credentials by their shape.

A compiled function that reads ``os.environ["HF_TOKEN"]`` gets a guard on its value, and
torch logs it: ``G['os'].environ._data[b'HF_TOKEN'] == b'hf_…'`` in the guards, again in
recompile reasons and ``compilation_metrics``; its repro scripts (``fx_graph_runnable``)
set torch's own variables (``os.environ['TORCH_…'] = '…'``); a string argument is guarded
by value (``L['t'] == '…'``).  A trace captured in CI (``torchtrace-capture``) holds
whatever the build's environment held.

Found here, on a log's bytes as they are read (:class:`SecretScanner`, kept in the model)
and on any text before it is published (:class:`SecretMasker`), by one set of rules:

* the value compared with an environment variable (``environ[…] == …``, the bytes
  ``environ._data[b'…']`` form torch writes), whatever its name; a value assigned to a
  variable whose name looks secret (``TOKEN``, ``KEY``, ``PASSWORD`` …: torch's repro
  scripts set only its own variables, paths and flags, which stay);
* tokens by their documented prefixes (GitHub, Hugging Face, OpenAI and Anthropic, Slack,
  AWS key ids, Google API keys, GitLab, npm, PyPI), JSON Web Tokens, PEM private keys (and
  a key's lines a reader shows apart from its header), an AWS secret access key after its
  name or its key id, the password of a ``scheme://user:password@host`` URL;
* a quoted string of 32 to 256 characters that looks random (every letter case and
  digits mixed, high entropy, no words): torch's cache keys (base32), hashes (hex),
  kernel and variable names never do (checked over the whole test corpus); a quoted
  string shaped like an AWS secret access key (40 characters of base64 with ``/`` or
  ``+``) held to a looser test that every random key passes;
* a value found by the environment rule, wherever else the trace quotes it.

Each rule looks at the text as it stands and, where a JSON escape spells a character
(``\\u0067hp_…``, ``:\\/\\/``), at the text a reader decodes (two levels: JSON in a
JSON string); a line break or TAB escaped right before a value ends a word.  A finding
is masked in the encoding it was found in, and a text is masked again until nothing more
is found (a value masked can leave another standing alone): masking is idempotent, and a
scan lists what masking removes.

A masked value keeps its quotes and a token its public prefix:
``b'hf_…[secret masked]'``; nothing is added or removed but the value, so line numbers
stay.  Every expression starts with a literal (the scan jumps between them) and is
bounded: linear in the text.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

#: What stands for a masked value.
MASK = "[secret masked]"
#: What a token's public prefix is followed by when its secret part is masked.
ELLIPSIS = "…"
#: Findings of one log kept in the model with their values; the rest are only counted …
MAX_FOUND = 1000
#: … but for those a masker learns from (an environment value to mask wherever else it is
#: quoted, a private key's lines): as many more, each value once.
MAX_KEPT = 1024
#: Values found by the environment rule masked wherever else a trace quotes them, at most
#: (each of 8 to 1024 characters: a megabyte); past it a value is listed and masked where
#: its variable is named, and :attr:`LearnedValues.unlearned` says how many were.
MAX_LEARNED = 1024
#: Characters of one environment value looked at (a longer one is masked to its line's end).
MAX_VALUE_CHARS = 4096
#: The kind of a value found by the environment rule.
ENVIRONMENT = "the value of an environment variable"

#: Parts of a variable's name that say it holds a secret: ``HF_TOKEN``, ``DB_PASSWORD``,
#: ``AWS_SECRET_ACCESS_KEY`` …  A part of the name (between ``_``) matches when it is one of
#: these, one plus ``S``, or ends with one (``HFTOKEN``, ``OAUTH``, ``GITHUBAPIKEY``) …
SECRET_NAME_PARTS = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "AUTH",
    "AUTHORIZATION",
    "COOKIE",
    "PRIVATE",
    "APIKEY",
    "SIGNATURE",
)
#: … and these only as a whole part (``OPENAI_API_KEY``, ``GITHUB_PAT``, ``SMTP_PASS``; not
#: ``MONKEY``, ``BYPASS``).
SECRET_NAME_WORDS = ("KEY", "PAT", "PASS")
_NAME_PARTS = re.compile(r"[A-Z0-9]+")


def secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (``HF_TOKEN``)."""
    for part in _NAME_PARTS.findall(name.upper()[:256]):
        if part.removesuffix("S") in SECRET_NAME_WORDS or part in SECRET_NAME_WORDS:
            return True
        if any(part.endswith(word) or part == word + "S" for word in SECRET_NAME_PARTS):
            return True
    return False


@dataclass(slots=True)
class Secret:
    """One value that looks secret, where a log holds it (its value is never shown)."""

    line: int  # 1-based line of the log; 0 where not read from a log
    looks_like: str  # ENVIRONMENT, "a GitHub token" …
    name: str = ""  # the environment variable it is the value of ("" when found by shape)
    value: str = ""  # the value itself: to mask it wherever else it is quoted, and to keep

    def describe(self) -> str:
        """``the value of environment variable HF_TOKEN``, ``a GitHub token``."""
        if self.name:
            return f"the value of environment variable {self.name}"
        return self.looks_like


@dataclass
class SecretScan:
    """What a log holds that looks secret: the first :data:`MAX_FOUND` findings, in log
    order, then those a masker learns from (:func:`teaches`, up to :data:`MAX_KEPT` more:
    no value a page must mask is lost past the first ones), and how many more."""

    found: list[Secret] = field(default_factory=list)
    more: int = 0

    @property
    def count(self) -> int:
        return len(self.found) + self.more

    def add(self, secret: Secret) -> None:
        if len(self.found) < MAX_FOUND or (
            teaches(secret) and len(self.found) < MAX_FOUND + MAX_KEPT
        ):
            self.found.append(secret)
        else:
            self.more += 1


def teaches(secret: Secret) -> bool:
    """Whether a masker learns from a finding to mask it wherever else it is quoted: an
    environment value (:func:`learnable`), a private key (its lines)."""
    return secret.looks_like == PRIVATE_KEY or learnable(secret)


# -- what looks random ----------------------------------------------------------------------

_MIXED = re.compile(r"(?=(?:[^A-Z]*[A-Z]){2})(?=(?:[^a-z]*[a-z]){2})(?=(?:[^0-9]*[0-9]){2})")
_WORD = re.compile(r"[a-z]{4,}|[A-Z]{4,}|[A-Z][a-z]{3,}")


def _class(ch: str) -> int:
    return 0 if ch.isupper() else 1 if ch.islower() else 2 if ch.isdigit() else 3


def high_entropy(value: str) -> bool:
    """Whether a string of 32 to 256 characters looks random, not written or derived.

    Each part between ``/`` must have two capitals, two small letters and two digits,
    Shannon entropy near that of a random string of its length (the 1st percentile of
    random base-62 strings), character classes that change often, and less than half
    of it in words: camel-case and snake-case names, hex hashes, base32 cache keys and
    paths fail; of random tokens, 92 % of 32 base-62 characters pass, 98 % of
    ``secrets.token_urlsafe(32)``, 70 % of 32 bytes in base64 (cut at ``/``), no hex.
    """
    if not 32 <= len(value) <= 256:
        return False
    parts = value.split("/")
    return any(_random(part) for part in parts) or (len(parts) <= 4 and _random(value))


def _random(part: str) -> bool:
    n = len(part)
    if n < 32 or not _MIXED.match(part):
        return False
    counts = Counter(part)
    entropy = -sum(c / n * math.log2(c / n) for c in counts.values())
    if entropy < 4.1 + (min(n, 64) - 32) * 0.025:
        return False
    changes = sum(_class(a) != _class(b) for a, b in zip(part, part[1:], strict=False))
    if changes < 0.35 * (n - 1):
        return False
    return sum(len(w) for w in _WORD.findall(part)) < 0.5 * n


def _mixed(body: str) -> bool:
    """At least two of capitals, small letters and digits: a random token, not a word."""
    return sum(any(f(c) for c in body) for f in (str.isupper, str.islower, str.isdigit)) >= 2


# -- the rules ------------------------------------------------------------------------------

#: ``environ['NAME'] == 'value'``, ``environ._data[b'NAME'] == b'value'`` (a guard, its
#: failure), ``os.environ['NAME'] = 'value'`` (a repro script); the value's opening quote
#: may be escaped (a guard quoted inside JSON).
_ENV = re.compile(
    r"environ(?:\._data)?\[b?\\{0,3}(?P<q>['\"])(?P<name>[^'\"\\\n]{1,256})\\{0,3}(?P=q)\]"
    r"[ \t]{0,8}(?P<op>==|!=|=)[ \t]{0,8}b?(?P<vq>\\{0,3}['\"])"
)
_ESCAPED = {"'": re.compile(r"\\.|['\n]"), '"': re.compile(r'\\.|["\n]')}

#: (what it is, the public prefix, the secret part, whether it mixes letter cases or
#: digits).  The character before a token must not continue a word.
TOKENS: tuple[tuple[str, str, str, bool], ...] = (
    ("a GitHub token", r"gh[pousr]_", r"[A-Za-z0-9]{36,255}", True),
    ("a GitHub token", r"github_pat_", r"[A-Za-z0-9_]{22,255}", True),
    ("a GitLab token", r"glpat-", r"[0-9A-Za-z_-]{20,255}", True),
    ("a Hugging Face token", r"hf_", r"[A-Za-z0-9]{30,255}", True),
    (
        "an OpenAI or Anthropic key",
        r"sk-",
        r"(?:proj-|svcacct-|admin-|ant-[a-z]{1,8}\d{0,4}-)?[A-Za-z0-9_-]{20,255}",
        True,
    ),
    ("a Slack token", r"xox[abposr]-", r"[A-Za-z0-9-]{10,255}", True),
    ("an AWS access key id", r"A[KS]IA", r"[A-Z0-9]{16}", True),
    ("a Google API key", r"AIza", r"[0-9A-Za-z_-]{35}", True),
    ("an npm token", r"npm_", r"[A-Za-z0-9]{36}", True),
    ("a PyPI token", r"pypi-", r"[A-Za-z0-9_-]{50,4096}", True),
)


def _token_patterns() -> list[re.Pattern[str]]:
    """One expression per first letter of the prefixes (``g`` for ``ghp_``, ``github_pat_``
    and ``glpat-``): an expression that starts with a literal is scanned for at C speed,
    one that starts with an alternation is tried at every character (70 times slower)."""
    by_letter: dict[str, list[int]] = {}
    for i, (_, prefix, _, _) in enumerate(TOKENS):
        by_letter.setdefault(prefix[0], []).append(i)
    out = []
    for letter, members in by_letter.items():
        if len(members) == 1:  # the whole prefix is the literal scanned for
            i = members[0]
            out.append(re.compile(f"(?P<p{i}>{TOKENS[i][1]})(?P<b{i}>{TOKENS[i][2]})"))
            continue
        alts = "|".join(f"(?P<p{i}>{TOKENS[i][1][1:]})(?P<b{i}>{TOKENS[i][2]})" for i in members)
        out.append(re.compile(f"{letter}(?:{alts})"))
    return out


_TOKEN_PATTERNS = _token_patterns()
_TOKEN_FULL = [re.compile(f"(?P<p>{prefix})(?P<b>{body})") for _, prefix, body, _ in TOKENS]
_WORD_CHAR = re.compile(r"[A-Za-z0-9_]")
_TOKEN_BEFORE = re.compile(r"[A-Za-z0-9_-]")

_PEM = re.compile(r"-----BEGIN (?P<label>[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?)-----")
#: The body of a private key whose end marker is not in the text: base64 lines (real or
#: escaped line breaks, a payload's tab).
_PEM_LINES = re.compile(
    r"(?:[\t ]{0,8}(?:\\n|\r?\n)[\t ]{0,8}[A-Za-z0-9+/=]{4,128}[\t ]{0,8}(?=\\n|\r?\n|$|\"))+"
)
#: The line breaks of a key's body, real or escaped (kept when the lines are masked).
_BREAKS = re.compile(r"(\\n|\r?\n)")
MAX_PEM_CHARS = 1 << 16
#: The kind of a private key's body.
PRIVATE_KEY = "a private key"

#: ``scheme://user:password@host``: the password.
_URL = re.compile(r"://(?P<user>[^\s:/@'\"<>\\]{0,200}):(?P<v>[^\s@/'\"<>\\]{1,200})@")

#: An AWS secret access key after its name (``aws_secret_access_key = …``, JSON's
#: ``"SecretAccessKey": "…"``): 40 characters of base64, ``/`` and ``+`` among them.
_AWS_SECRET = [
    re.compile(
        name + r"['\"\\]{0,3}[ \t]{0,8}[=:][ \t]{0,8}"
        r"b?['\"\\]{0,3}(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
    )
    for name in ("ccess_?[Kk]ey", "CCESS_?KEY")
]
#: An AWS secret access key right after its key id (``AKIA…:secret``, ``AKIA…,secret`` as a
#: credentials file's line or a CSV of them has it).
_AWS_PAIR = re.compile(
    r"A[KS]IA[A-Z0-9]{16}['\"]?[ \t]{0,4}[:=,][ \t]{0,4}['\"]?"
    r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)
#: What must come before ``ccess_key`` (scanned for from its literal: a case-insensitive
#: expression is tried at every character, a hundred times slower over a log).
_AWS_NAME = re.compile(r"secret_?a$")
AWS_SECRET = "an AWS secret access key"

#: A quoted string of token characters (the closing quote may be escaped: JSON in JSON).
_QUOTED = [re.compile(q + r"(?P<v>[A-Za-z0-9+/=_-]{32,256})\\{0,3}['\"]") for q in ("'", '"')]


class _Found(NamedTuple):
    start: int
    end: int
    replacement: str
    secret: Secret
    rank: int  # which rule, for overlaps: the environment rule first


def _closing(text: str, start: int, quote: str) -> int:
    """Where a quoted value that starts at ``start`` ends (its closing quote, else its
    line's end), at most :data:`MAX_VALUE_CHARS` on."""
    limit = min(len(text), start + MAX_VALUE_CHARS)
    line_end = text.find("\n", start, limit)
    limit = limit if line_end < 0 else line_end
    if len(quote) > 1:  # an escaped quote: the same sequence closes it
        end = text.find(quote, start, limit)
        return limit if end < 0 else end
    stops = _ESCAPED[quote]
    pos = start
    while True:
        m = stops.search(text, pos, limit)
        if m is None:
            return limit
        if m.group() == quote:
            return m.start()
        if m.group() == "\n":
            return m.start()
        pos = m.end()


def _environment(text: str) -> Iterator[_Found]:
    for m in _ENV.finditer(text):
        name = m["name"]
        if m["op"] == "=" and not secret_name(name):
            continue  # torch's repro scripts set its own variables: paths, flags
        start = m.end()
        end = _closing(text, start, m["vq"])
        value = text[start:end]
        if value and MASK not in value:
            masked = _token_prefix(value) + MASK
            yield _Found(start, end, masked, Secret(0, ENVIRONMENT, name, value), 0)


def environment_values(text: str) -> list[Secret]:
    """The values of environment variables ``text`` compares or sets (the environment
    rule alone: cheap, its expression starts with a literal), to learn them before a
    pass that meets a quote of one ahead of its guard."""
    return [f.secret for f in _environment(text)]


def _token_prefix(value: str) -> str:
    """``hf_…`` when a value is a token of a known kind (its prefix is public), else ""."""
    for pattern in _TOKEN_FULL:
        m = pattern.fullmatch(value)
        if m is not None:
            return m["p"] + ELLIPSIS
    return ""


def after_escape(text: str, start: int) -> bool:
    """Whether ``start`` follows an escape of a JSON string that a reader sees as a line
    break or a TAB (``was:\\nhf_…``, ``\\tsk-…``): a word ends there."""
    return start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrtbf"


def _tokens(text: str) -> Iterator[_Found]:
    for pattern in _TOKEN_PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.span()
            if start and _TOKEN_BEFORE.match(text, start - 1) and not after_escape(text, start):
                continue  # inside a word: ``mask-…``, ``self_hf_…``
            if end < len(text) and _WORD_CHAR.match(text, end):
                continue  # longer than the token: a name
            i = int((m.lastgroup or "b0")[1:])
            kind, _, _, mixed = TOKENS[i]
            if mixed and not _mixed(m[f"b{i}"]):
                continue
            prefix = text[start : m.end(f"p{i}")]  # with the letter factored out
            yield _Found(start, end, prefix + ELLIPSIS + MASK, Secret(0, kind, "", m.group()), 2)


#: A JSON Web Token: ``eyJ…`` (a JSON header, base64url), ``.eyJ…`` (its claims), ``.…``
#: (the signature).  Found in Python: a token's runs are looked at once, not again from
#: each ``eyJ`` inside them (a regex would, thousands of times in ``eyJeyJeyJ…``).
_JWT = re.compile(r"eyJ")
_JWT_RUN = re.compile(r"[A-Za-z0-9_-]{0,4096}")


def _web_tokens(text: str) -> Iterator[_Found]:
    done = 0
    for m in _JWT.finditer(text):
        start = m.start()
        if start < done or (
            start and _TOKEN_BEFORE.match(text, start - 1) and not after_escape(text, start)
        ):
            continue
        ends, pos = [], start
        for _ in range(3):
            run = _JWT_RUN.match(text, pos)
            end = run.end() if run else pos
            ends.append(end)
            if end - pos < 11 or text[end : end + 1] != ".":
                break
            pos = end + 1
        done = ends[-1]
        if len(ends) == 3 and ends[2] - ends[1] > 8 and text.startswith("eyJ", ends[0] + 1):
            end = ends[2]
            if end == len(text) or not _WORD_CHAR.match(text, end):
                yield _Found(
                    start,
                    end,
                    "eyJ" + ELLIPSIS + MASK,
                    Secret(0, "a JSON Web Token", "", text[start:end]),
                    2,
                )


def _private_keys(text: str) -> Iterator[_Found]:
    ends: dict[str, int] = {}  # end marker -> where it was found last (-1: nowhere after)
    covered = 0  # a header inside a body already masked is part of it
    for m in _PEM.finditer(text):
        start = m.end()
        if start <= covered:
            continue
        marker = f"-----END {m['label']}-----"
        end = ends.get(marker, 0)
        if 0 <= end < start:  # each marker is looked for once per place: linear
            end = ends[marker] = text.find(marker, start)
        if not 0 <= end - start <= MAX_PEM_CHARS:
            lines = _PEM_LINES.match(text, start)
            end = lines.end() if lines else start
        covered = end
        body = text[start:end]
        if _BREAKS.sub("", body).replace(MASK, "").strip():  # not masked already
            yield _Found(start, end, _mask_lines(body), Secret(0, PRIVATE_KEY, "", body), 1)


def _mask_lines(body: str) -> str:
    """A private key's body with each line's text masked, its line breaks (real or
    escaped) and the whitespace around each line (a payload line's TAB) kept."""
    parts = _BREAKS.split(body)
    for i in range(0, len(parts), 2):
        part = parts[i]
        text = part.strip()
        if text and text != MASK:
            lead = part[: len(part) - len(part.lstrip())]
            trail = part[len(part.rstrip()) :]
            parts[i] = lead + MASK + trail
    return "".join(parts)


#: A line that is nothing but 40 to 76 characters of base64: a private key's line away
#: from its header (a text log keeps a key's lines as lines of their own, and a reader may
#: show them apart from the record that holds the header).
_LINE_OF_KEY = r"[\t ]{0,16}(?P<v>[A-Za-z0-9+/]{40,76}={0,2})[\t ]{0,16}(?=\r?\n|$)"
#: Such a line after a line break (the break is the literal the scan jumps to) …
_KEY_LINE = re.compile(r"\n" + _LINE_OF_KEY)
#: … or the text's first line: a text starts a line (a piece of a log the scan reads, a
#: line a page shows alone, a log's last line without its break).
_FIRST_KEY_LINE = re.compile(_LINE_OF_KEY)


#: The line after a key's line: the key's last, shorter one.
_KEY_TAIL = re.compile(
    r"[\t ]{0,16}\r?\n[\t ]{0,16}(?P<v>[A-Za-z0-9+/]{4,76}={0,2})[\t ]{0,16}(?=\r?\n|$)"
)


def _key_lines(text: str) -> Iterator[_Found]:
    first = _FIRST_KEY_LINE.match(text)
    for m in [*([first] if first else []), *_KEY_LINE.finditer(text)]:
        value = m["v"]
        plain = value.rstrip("=").replace("/", "").replace("+", "")
        if len(plain) >= 32 and _MIXED.match(plain) and _random(plain):
            start, end = m.span("v")
            yield _Found(start, end, MASK, Secret(0, PRIVATE_KEY, "", value), 1)
            tail = _KEY_TAIL.match(text, end)  # a key's last line is shorter
            if tail is not None:
                yield _Found(
                    tail.start("v"), tail.end("v"), MASK, Secret(0, PRIVATE_KEY, "", tail["v"]), 1
                )


def _url_passwords(text: str) -> Iterator[_Found]:
    for m in _URL.finditer(text):
        if not m.start() or not text[m.start() - 1].isalnum():
            continue  # no scheme before ``://`` (``s3://`` ends in a digit)
        password = m["v"]
        if password.isdigit():
            continue  # ``host:8080@``: a port
        yield _Found(
            m.start("v"), m.end("v"), MASK, Secret(0, "a password in a URL", "", password), 3
        )


def _aws_secrets(text: str) -> Iterator[_Found]:
    for m in _AWS_PAIR.finditer(text):
        if _mixed(m["v"]):
            yield _Found(m.start("v"), m.end("v"), MASK, Secret(0, AWS_SECRET, "", m["v"]), 3)
    for m in (m for pattern in _AWS_SECRET for m in pattern.finditer(text)):
        if not _AWS_NAME.search(text[max(0, m.start() - 8) : m.start()].lower()):
            continue
        value = m["v"]
        if _mixed(value):
            yield _Found(m.start("v"), m.end("v"), MASK, Secret(0, AWS_SECRET, "", value), 3)


#: An AWS secret access key's shape: 40 characters of base64 (30 random bytes).
_AWS_BODY = re.compile(r"[A-Za-z0-9/+]{40}")


def aws_secret_shape(value: str) -> bool:
    """Whether a value quoted alone is shaped like an AWS secret access key: 40 characters
    of base64 with ``/`` or ``+`` (a key has one 72 % of the time) that look random.

    :func:`high_entropy` weighs words and the parts between ``/``, and misses 3 % of
    real keys (a run of small letters reads as a word); 40 characters of base64 are held
    to what all of 200,000 random keys pass: two of capitals, small letters and digits,
    entropy over 4.0 bits and a change of character class at a fifth of the characters.
    A path of names this long holds ``_`` or ``.``, or is words (none in the test corpus).
    """
    if not _AWS_BODY.fullmatch(value) or ("/" not in value and "+" not in value):
        return False
    if not _mixed(value):
        return False
    n = len(value)
    counts = Counter(value)
    if -sum(c / n * math.log2(c / n) for c in counts.values()) < 4.0:
        return False
    changes = sum(_class(a) != _class(b) for a, b in zip(value, value[1:], strict=False))
    if changes < 0.2 * (n - 1):
        return False
    return sum(len(w) for w in _WORD.findall(value)) < 0.9 * n


def _random_strings(text: str) -> Iterator[_Found]:
    for pattern in _QUOTED:
        for m in pattern.finditer(text):
            value = m["v"]
            if _MIXED.match(value) and high_entropy(value):  # most fail the first test
                kind = "a long random string"
            elif aws_secret_shape(value):
                kind = AWS_SECRET
            else:
                continue
            yield _Found(m.start("v"), m.end("v"), MASK, Secret(0, kind, "", value), 5)


#: Values learned that are looked for one by one (each a literal: C speed); past them, by
#: their first 8 characters, all in one expression (a trie: one scan of the text).
_ONE_BY_ONE = 32
_HEAD = 8


class LearnedValues:
    """Values found by the environment rule, to find wherever else a text quotes them:
    as many as :data:`MAX_LEARNED` (the first :data:`_ONE_BY_ONE` each by its own
    literal expression, all of them once more by their heads); one scan of a text
    whatever their number."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # value -> its variable's name
        self.unlearned = 0  # values past MAX_LEARNED (listed, masked where named)
        self._literal: list[tuple[re.Pattern[str], str]] = []
        self._by_head: dict[str, list[str]] = {}  # head -> values, longest first
        self._heads: re.Pattern[str] | None = None
        self._stale = False

    def __len__(self) -> int:
        return len(self.names)

    def __iter__(self) -> Iterator[tuple[re.Pattern[str], str]]:
        """Each value as a literal expression, with its variable's name."""
        return ((re.compile(re.escape(v)), n) for v, n in self.names.items())

    def add(self, value: str, name: str) -> bool:
        """Learn ``value``; whether it was new (and there was room)."""
        if value in self.names:
            return False
        if len(self.names) >= MAX_LEARNED:
            self.unlearned += 1
            return False
        self.names[value] = name
        if len(self._literal) < _ONE_BY_ONE:
            self._literal.append((re.compile(re.escape(value)), name))
            self._literal.sort(key=lambda learned: -len(learned[0].pattern))
        else:
            self._by_head.setdefault(value[:_HEAD], []).append(value)
            self._by_head[value[:_HEAD]].sort(key=len, reverse=True)
            self._stale = True
        return True

    def search(self, text: str) -> bool:
        """Whether ``text`` may quote one of the values (a gate before the rules)."""
        return any(p.search(text) for p, _ in self._literal) or (
            bool(self._by_head) and self._head_pattern().search(text) is not None
        )

    def _head_pattern(self) -> re.Pattern[str]:
        if self._heads is None or self._stale:
            self._heads = re.compile(_trie(self._by_head))
            self._stale = False
        return self._heads

    def spans(self, text: str) -> Iterator[tuple[int, int, str]]:
        """Each place a value is quoted as a whole word: (start, end, its variable)."""
        for pattern, name in self._literal:
            for m in pattern.finditer(text):
                if _whole(text, *m.span()):
                    yield m.start(), m.end(), name
        if not self._by_head:
            return
        heads, pos = self._head_pattern(), 0
        while (hit := heads.search(text, pos)) is not None:
            start = hit.start()
            pos = start + 1
            for value in self._by_head[hit.group()]:
                end = start + len(value)
                if text.startswith(value, start) and _whole(text, start, end):
                    yield start, end, self.names[value]
                    pos = end
                    break


def _whole(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is no part of a longer word."""
    return not (start and text[start - 1].isalnum()) and not (
        end < len(text) and text[end].isalnum()
    )


#: A node of a trie: each next character's node ("" where a word ends).
_Node = dict[str, "_Node"]


def _trie(words: Iterable[str]) -> str:
    """One expression matching any of ``words`` (of :data:`_HEAD` characters at most):
    a trie, so that a scan follows one branch at each character, however many."""
    root: _Node = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def pattern(node: _Node) -> str:
        alts = [re.escape(ch) + pattern(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return pattern(root)


def _learned(text: str, values: LearnedValues | None) -> Iterator[_Found]:
    if not values:
        return
    for start, end, name in values.spans(text):
        yield _Found(start, end, MASK, Secret(0, ENVIRONMENT, name, text[start:end]), 4)


def _anonymous(pattern: str) -> str:
    """``pattern`` with its groups unnamed, to be one alternative of a larger expression: a
    back-reference (``(?P=q)``) becomes what its group matches (a character class), so the
    expression matches wherever ``pattern`` does."""
    for name in re.findall(r"\(\?P=(\w+)\)", pattern):
        group = re.search(rf"\(\?P<{name}>(\[[^\]]+\])\)", pattern)
        if group is None:
            raise ValueError(f"the gate cannot stand for back-reference {name!r}")
        pattern = pattern.replace(f"(?P={name})", group[1])
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


#: Every expression a rule's scan starts from: no finding without a match of one of them.
_RULE_EXPRESSIONS = (
    _ENV,
    _PEM,
    *_TOKEN_PATTERNS,
    _JWT,
    _URL,
    *_AWS_SECRET,
    _AWS_PAIR,
    _KEY_LINE,
    *_QUOTED,
)
#: All of them at once.  Most published strings are short (a name, a table cell), and one
#: scan of a short string costs a seventh of the rules' scans, each set up for itself; a
#: long string is faster scanned rule by rule (each expression starts with a literal).
_GATE = re.compile("|".join(f"(?:{_anonymous(e.pattern)})" for e in _RULE_EXPRESSIONS))
_GATED_CHARS = 128


def _plain_findings(text: str, learned: LearnedValues | None = None) -> list[_Found]:
    """Every value of ``text`` as it stands that looks secret (overlaps not removed)."""
    if (
        len(text) <= _GATED_CHARS
        and _GATE.search(text) is None
        and _FIRST_KEY_LINE.match(text) is None
        and not (learned and learned.search(text))
    ):
        return []
    return [
        *_environment(text),
        *_private_keys(text),
        *_key_lines(text),
        *_tokens(text),
        *_web_tokens(text),
        *_url_passwords(text),
        *_aws_secrets(text),
        *_learned(text, learned),
        *_random_strings(text),
    ]


#: A JSON string's escapes, decoded to find what a reader sees: ``\\n`` before a token
#: (``was:\\nhf_…``), a token spelled with ``\\u`` escapes, ``:\\/\\/`` in a URL.
_JSON_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[\"\\/bfnrt])")
#: An escape that spells an ASCII character a value can hold.
_SPELLING = re.compile(r"\\(?:u00[2-7][0-9a-fA-F]|/)")
_UNESCAPED = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
#: Levels of escaping decoded, at most (JSON in a JSON string: a guard's repr in a record).
ESCAPE_LEVELS = 2


@dataclass(frozen=True, slots=True)
class _Decoded:
    """A text with its JSON escapes decoded, and where each decoded offset was in the
    text: ``decoded`` and ``raw`` are anchors, one pair at each escape's start and end
    (between two of them the offsets move together); ``outer``: the view this one decodes
    further (JSON in a JSON string), whose text the offsets are in."""

    text: str
    decoded: list[int]
    raw: list[int]
    outer: _Decoded | None = None

    def where(self, offset: int) -> int:
        """The offset in the original text of a decoded offset (an escape's start for its
        decoded character, its end for the offset after it)."""
        i = bisect.bisect_right(self.decoded, offset) - 1
        here = offset if i < 0 else self.raw[i] + (offset - self.decoded[i])
        return here if self.outer is None else self.outer.where(here)


def _decode(text: str, outer: _Decoded | None = None) -> _Decoded | None:
    """``text`` with its JSON escapes decoded, or None when it has none."""
    if "\\" not in text:
        return None
    pieces: list[str] = []
    decoded: list[int] = []
    raw: list[int] = []
    pos = out = 0
    for m in _JSON_ESCAPE.finditer(text):
        start, end = m.span()
        pieces.append(text[pos:start])
        out += start - pos
        esc = m.group()
        c = esc[1]
        pieces.append(chr(int(esc[2:], 16)) if c == "u" else _UNESCAPED.get(c, c))
        decoded += (out, out + 1)
        raw += (start, end)
        out += 1
        pos = end
    if not raw:
        return None
    pieces.append(text[pos:])
    return _Decoded("".join(pieces), decoded, raw, outer)


def json_views(text: str, levels: int = ESCAPE_LEVELS) -> Iterator[_Decoded]:
    """``text`` as a reader decodes its JSON escapes, one level after another (JSON in a
    JSON string), each view's ``where`` taking its offsets back to ``text``; none when it
    holds no escape.  For other finders (machine paths) that must read what a reader
    reads, as the rules here do."""
    view = _decode(text)
    for _ in range(levels):
        if view is None:
            return
        yield view
        view = _decode(view.text, view)


def _raw_replacement(f: _Found, raw: str) -> str:
    """A finding's replacement in the text's own encoding: a private key's lines masked
    where they stand (its line breaks, real or escaped, kept); another finding's
    replacement holds no character a JSON string escapes."""
    if f.secret.looks_like == PRIVATE_KEY:
        return _mask_lines(raw)
    return f.replacement


def _findings(text: str, learned: LearnedValues | None = None) -> list[_Found]:
    """Every value of ``text`` that looks secret, in order, none overlapping another: found
    in the text and in what it reads as once its JSON escapes are decoded (up to
    :data:`ESCAPE_LEVELS` levels), each masked in the encoding it was found in (the
    environment rule's findings first: they name their variable)."""
    found = _plain_findings(text, learned)
    # A line break or TAB escape before a value ends a word in the text as it stands
    # (:func:`after_escape`); only an escaped ASCII character (``\\u0067``, ``\\/``) can
    # spell part of a value: the text is decoded where it holds one.
    view = _decode(text) if _SPELLING.search(text) else None
    for _ in range(ESCAPE_LEVELS):
        if view is None:
            break
        for f in _plain_findings(view.text, learned):
            start, end = view.where(f.start), view.where(f.end)
            if end > start:
                raw = _raw_replacement(f, text[start:end])
                found.append(f._replace(start=start, end=end, replacement=raw))
        view = _decode(view.text, view) if _SPELLING.search(view.text) else None
    if len(found) < 2:
        return found
    found.sort(key=lambda f: (f.start, f.rank, -f.end))
    kept: list[_Found] = []
    for f in found:
        if kept and f.start < kept[-1].end:
            continue
        kept.append(f)
    return kept


#: Passes of masking, at most: a value masked can make another one (the closing quote of a
#: value masked opens the next quoted value, a token beside an overlapping finding stands
#: alone); on generated texts of overlapping pieces two or three passes are the most seen.
MAX_PASSES = 8


def _to_the_end(
    text: str, find: Callable[[str], list[_Found]]
) -> tuple[str, list[tuple[int, Secret]]]:
    """``text`` masked until masking it again changes nothing (at most :data:`MAX_PASSES`
    passes), and each value masked with its place in ``text``: what one pass leaves
    beside a finding the next finds, so masking twice masks no more than once, and
    ``check`` lists what a second ``redact`` would have masked."""
    out: list[tuple[int, Secret]] = []
    passes: list[tuple[list[int], list[tuple[int, int, int]]]] = []
    for _ in range(MAX_PASSES):
        found = find(text)
        if not found:
            break
        pieces: list[str] = []
        starts: list[int] = []
        spans: list[tuple[int, int, int]] = []  # (new end, old start, old end)
        pos = size = 0
        for f in found:
            out.append((_back(passes, f.start), f.secret))
            size += f.start - pos
            pieces += (text[pos : f.start], f.replacement)
            starts.append(size)
            size += len(f.replacement)
            spans.append((size, f.start, f.end))
            pos = f.end
        pieces.append(text[pos:])
        text = "".join(pieces)
        passes.append((starts, spans))
    return text, out


def _back(passes: list[tuple[list[int], list[tuple[int, int, int]]]], offset: int) -> int:
    """The offset in the text first masked of an offset in the text after ``passes``."""
    for starts, spans in reversed(passes):
        i = bisect.bisect_right(starts, offset) - 1
        if i >= 0:
            new_end, old_start, old_end = spans[i]
            offset = old_start if offset < new_end else old_end + (offset - new_end)
    return offset


def looks_secret(value: str) -> bool:
    """Whether a value, alone, looks like a credential: a token of a known kind, a private
    key, a URL with a password, or a random string of 32 characters or more."""
    return bool(_findings(value)) or high_entropy(value)


# -- masking --------------------------------------------------------------------------------


def learnable(secret: Secret) -> bool:
    """Whether a value found by the environment rule is masked wherever else it is quoted:
    8 characters or more, with a letter (``3.75`` or ``1`` is found in graphs by chance)."""
    value = secret.value
    return (
        bool(secret.name)
        and 8 <= len(value) <= 1024
        and "\n" not in value
        and any(c.isalpha() for c in value)
        and MASK not in value
    )


class SecretMasker:
    """Masks what looks secret in published text (callable: text in, text out).

    ``keep``: regular expressions a user vouches for; a finding is published as logged
    when one of them matches its variable's name or its whole value.  ``secrets``: the
    findings of the trace's logs (:class:`SecretScan`), whose environment values are
    masked wherever else they are quoted.
    """

    def __init__(self, keep: Iterable[str] = (), secrets: Iterable[Secret] = ()) -> None:
        self.keep = [re.compile(k) for k in keep]
        self._kept: set[str] = set()  # values of variables kept: kept wherever quoted
        self._learned = LearnedValues()
        for secret in secrets:
            if self.keeps(secret):
                if secret.name:
                    self._kept.add(secret.value)
            elif learnable(secret):
                self._learned.add(secret.value, secret.name)

    @property
    def unlearned(self) -> int:
        """Environment values past :data:`MAX_LEARNED`: masked where their variable is
        named, not wherever else quoted (a caller says so)."""
        return self._learned.unlearned

    def keeps(self, secret: Secret) -> bool:
        """Whether the user vouches for this finding: ``keep`` matches its variable's name
        or its whole value, or it is the value of a variable kept."""
        return secret.value in self._kept or any(
            (secret.name and k.fullmatch(secret.name)) or k.fullmatch(secret.value)
            for k in self.keep
        )

    def findings(self, text: str) -> list[Secret]:
        """What this masker masks in ``text``."""
        return [secret for _, secret in self.masked(text)[1]]

    def _masked(self, text: str) -> list[_Found]:
        return [f for f in _findings(text, self._learned) if not self.keeps(f.secret)]

    def learn(self, secret: Secret) -> bool:
        """Mask a value found by the environment rule wherever else a text quotes it from
        now on (``redact`` meets it again further down a log); whether it was new."""
        if self.keeps(secret) or not learnable(secret):
            return False
        return self._learned.add(secret.value, secret.name)

    def masked(self, text: str) -> tuple[str, list[tuple[int, Secret]]]:
        """``text`` masked, and each value masked with its place in ``text``."""
        if len(text) < 8:
            return text, []
        return _to_the_end(text, self._masked)

    def __call__(self, text: str) -> str:
        return self.masked(text)[0]


#: The masker with no values kept: for text no configuration reaches (warnings, the CLI).
mask_secrets = SecretMasker()


#: Where a token may start inside a file name: after ``_``, ``.`` or ``-`` (a job names its
#: log ``…_rank_0_hf_….log``), which in other text continue a word.
_NAME_PREFIXES = r"(?:hf|gh[pousr]|github_pat|glpat|sk|xox[abposr]|npm|pypi|AIza|A[KS]IA|eyJ)"
_IN_A_NAME = re.compile(rf"[_.-](?={_NAME_PREFIXES}[_-])")
_OPENED = re.compile(rf"(?<=[_.-]) (?={_NAME_PREFIXES}[_-])")


def masked_name(name: str) -> str:
    """A file's name with what looks secret in it masked, in characters a file name keeps
    (``…_hf__masked.log``)."""
    opened = _IN_A_NAME.sub(lambda m: m.group() + " ", name)
    masked = mask_secrets(opened).replace(ELLIPSIS + MASK, "_masked").replace(MASK, "masked")
    return _OPENED.sub("", masked) if masked != opened else name


def name_findings(name: str, masker: SecretMasker | None = None) -> list[Secret]:
    """What a file's name holds that looks secret, a token right after ``_`` included."""
    masker = masker or mask_secrets
    return masker.findings(_IN_A_NAME.sub(lambda m: m.group() + " ", name))


# -- scanning a log -------------------------------------------------------------------------

#: Bytes of one line scanned whole; a longer line is scanned in pieces of this size.
MAX_LINE_BYTES = 1 << 20


def safe_cut(data: bytes) -> int:
    """Where a piece of one long line may be cut without cutting a secret in two: before
    its last quote within the last :data:`MAX_PEM_CHARS` bytes (no rule's value holds
    one, and a quote may open one), else after its last space, comma or TAB, moved back
    before a rule's match or a value's name across it (:func:`_clear_cut`); else at its
    end (a run of that many bytes without any is no value a rule finds)."""
    low = max(0, len(data) - MAX_PEM_CHARS)
    for stops in (_QUOTES, _SPACES):
        at = max(data.rfind(c, low) for c in stops)
        if at > 0:
            # before a quote (it may open a value), after a space
            cut = _clear_cut(data, at if stops is _QUOTES else at + 1, low)
            return _before_open_key(data, cut, low)
    return len(data)


#: A private key's first line in a log's bytes (its end marker: ``-----END``).
_PEM_BYTES = re.compile(rb"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")


def _before_open_key(data: bytes, cut: int, low: int) -> int:
    """``cut``, moved before a private key's first line whose end marker is not before
    it: a key written on one line (its body parted by spaces) is then read whole by the
    next piece, which holds it all (a key is at most :data:`MAX_PEM_CHARS`)."""
    headers = list(_PEM_BYTES.finditer(data, low, cut))
    last = headers[-1] if headers else None
    if last is None or data.find(b"-----END", last.end(), cut) >= 0:
        return cut
    return last.start() if last.start() > low else cut


_QUOTES = (b'"', b"'")
_SPACES = (b" ", b",", b"\t")
#: Bytes before a cut looked at for a rule's match across it.
_CUT_REACH = 4096
#: What introduces a value a rule finds only with it (an AWS secret's name or key id):
#: a cut this close after one would part them.
_INTRO = re.compile(r"ccess_?[Kk]ey|CCESS_?KEY|A[KS]IA[A-Z0-9]{16}")
_INTRO_REACH = 24


def _clear_cut(data: bytes, cut: int, low: int) -> int:
    """``cut``, moved back before any rule's match that runs across it or ends at it (a
    name and its value: ``"SecretAccessKey": "`` and the key, ``environ[…] == '`` and the
    value), in the bytes as they stand or as a reader decodes their JSON escapes; a quote
    alone is no safe place (it may open the value)."""
    for _ in range(8):
        start = max(0, cut - _CUT_REACH)
        text = data[start:].decode("latin-1")  # one character a byte: offsets kept
        here = cut - start
        hit = here
        for view in (None, *json_views(text)):
            seen = text if view is None else view.text
            for m in _GATE.finditer(seen):
                a, b = (m.start(), m.end()) if view is None else map(view.where, m.span())
                if a < here <= b:
                    hit = min(hit, a)
            for m in _INTRO.finditer(seen):
                a, b = (m.start(), m.end()) if view is None else map(view.where, m.span())
                if a < here <= b + _INTRO_REACH:
                    hit = min(hit, a)
        if hit == here:
            return cut
        before = max(data.rfind(c, low, start + hit) for c in (*_QUOTES, *_SPACES))
        if before <= low:
            return cut
        cut = before + 1 if data[before : before + 1] not in _QUOTES else before
    return cut


class SecretScanner:
    """Finds what looks secret in a log as its bytes are read, piece by piece.

    :meth:`feed` takes the log's bytes in order, cut anywhere; whole lines are scanned
    (a line longer than :data:`MAX_LINE_BYTES` in pieces), each finding with its line.
    """

    def __init__(self) -> None:
        self.scan = SecretScan()
        self._carry = b""
        self._line = 1  # the line the carried bytes start on
        self._learned = LearnedValues()  # environment values found
        self._taught: set[str] = set()  # values kept past MAX_FOUND: each once

    def feed(self, data: bytes) -> None:
        data = self._carry + data if self._carry else data
        cut = data.rfind(b"\n") + 1
        if cut == 0 and len(data) < MAX_LINE_BYTES:
            self._carry = data
            return
        if cut == 0:
            cut = safe_cut(data)
        self._carry = data[cut:]
        self._scan(data[:cut])

    def close(self) -> SecretScan:
        """The findings, once every byte was fed."""
        if self._carry:
            self._scan(self._carry)
            self._carry = b""
        return self.scan

    def _scan(self, data: bytes) -> None:
        text = data.decode("utf-8", "replace")
        find = partial(_findings, learned=self._learned)
        _, found = _to_the_end(text, find)
        if self._learn(found):  # where this piece quotes them again
            _, found = _to_the_end(text, find)
        pos, line = 0, self._line
        for at, secret in sorted(found, key=lambda found: found[0]):
            line += text.count("\n", pos, at)
            pos = at
            secret.line = line
            if len(self.scan.found) >= MAX_FOUND and teaches(secret):
                if secret.value in self._taught or len(self._taught) >= MAX_KEPT:
                    self.scan.more += 1
                    continue
                self._taught.add(secret.value)
            self.scan.add(secret)
        self._line += data.count(b"\n")

    def _learn(self, found: list[tuple[int, Secret]]) -> bool:
        """Keep the environment values first found here (to find them quoted elsewhere in
        the log); whether there were any."""
        added = False
        for _, secret in found:
            if learnable(secret) and self._learned.add(secret.value, secret.name):
                added = True
        return added


def scan_text(data: bytes) -> SecretScan:
    """The findings of a whole file's bytes (a text log, a debug folder's file)."""
    scanner = SecretScanner()
    for start in range(0, len(data), MAX_LINE_BYTES):
        scanner.feed(data[start : start + MAX_LINE_BYTES])
    return scanner.close()


def unkept(scan: SecretScan, masker: SecretMasker) -> tuple[list[Secret], int]:
    """A log's findings the user does not vouch for, and how many more were counted."""
    return [s for s in scan.found if not masker.keeps(s)], scan.more
