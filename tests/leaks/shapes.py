"""Canaries: one secret of a known shape each, and how a place writes it (raw, or
inside a JSON string: plainly, right after an escape, spelled with escapes)."""

from __future__ import annotations

import base64
import json
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sphinx_torchtrace.trace.secrets import high_entropy

# -- canaries: one secret of a known shape each -------------------------------------------

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
B64URL = ALNUM + "-_"
#: A surviving canary is found by windows of its secret this long (letters and digits).
NEEDLE = 12
#: Windows start this far apart: a piece of a secret NEEDLE + STRIDE - 1 long is found.
STRIDE = 4

LIT, TRIGGER, SECRET = "lit", "trigger", "secret"
#: Classes ``check`` names a canary with: a secret, or a home folder's user name.
SECRETS, HOMES = ("secrets",), ("paths", "names")


@dataclass(frozen=True)
class Seg:
    """A piece of a canary's text: ``lit`` stays in the control input; ``trigger`` (what
    makes a rule look: a prefix, ``environ``, a home root) becomes ``x`` there; ``secret``
    (what must not survive) has its letters and digits made ``x`` there."""

    text: str
    role: str = LIT


@dataclass
class Plant:
    """A canary's text as segments, what ``check`` calls it, and whether it is more than one
    line or holds a path separator (no file name can hold it)."""

    segs: list[Seg]
    classes: tuple[str, ...] = SECRETS
    companion: list[Seg] | None = None  # planted elsewhere in the same log (env-echo)

    def text(self, live: bool = True) -> str:
        return "".join(seg_text(s, live) for s in self.segs)

    @property
    def multiline(self) -> bool:
        return "\n" in self.text()

    @property
    def nameable(self) -> bool:
        t = self.text()
        return not any(c in t for c in "/\\\n\t'\"<>:*?|") and len(t) < 200


def seg_text(seg: Seg, live: bool) -> str:
    if live or seg.role == LIT:
        return seg.text
    if seg.role == TRIGGER:
        return "".join(c if c == "\n" else "x" for c in seg.text)
    return "".join("x" if c.isalnum() else c for c in seg.text)


def tag_of(uid: int) -> str:
    """A canary's name inside its secret: ``q`` and its number in base 36 (7 characters)."""
    digits = ""
    n = uid
    while True:
        n, d = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[d] + digits
        if n == 0:
            return "q" + digits.rjust(6, "0")


def rand(r: random.Random, n: int, alphabet: str = ALNUM, tag: str = "") -> str:
    """``n`` random characters with ``tag`` inside, mixing capitals, small letters and
    digits when the alphabet has them (every token rule asks for two of the three)."""
    while True:
        body = [r.choice(alphabet) for _ in range(n - len(tag))]
        if tag:
            at = r.randrange(len(body) + 1)
            body[at:at] = list(tag)
        out = "".join(body)
        kinds = sum(any(f(c) for c in out) for f in (str.isupper, str.islower, str.isdigit))
        wanted = sum(any(f(c) for c in alphabet) for f in (str.isupper, str.islower, str.isdigit))
        if kinds >= min(wanted, 3):
            return out


def needles(plant: Plant) -> list[str]:
    """Windows of a canary's secret (lower case, letters and digits, each with a letter):
    any piece of it NEEDLE + STRIDE - 1 long that survives holds one."""
    found: list[str] = []
    for seg in plant.segs:
        if seg.role != SECRET:
            continue
        for run in re.findall(rf"[A-Za-z0-9]{{{NEEDLE},}}", seg.text):
            starts = list(range(0, len(run) - NEEDLE + 1, STRIDE))
            if starts[-1] != len(run) - NEEDLE:
                starts.append(len(run) - NEEDLE)
            for s in starts:
                window = run[s : s + NEEDLE].lower()
                if any(c.isalpha() for c in window):
                    found.append(window)
    return found


def _ctx(r: random.Random, options: Sequence[tuple[str, str]]) -> tuple[Seg, Seg]:
    before, after = r.choice(options)
    return Seg(before), Seg(after)


TOKEN_CONTEXTS = (
    ("", ""),
    ("token=", ""),
    ("Authorization: Bearer ", ""),
    ("HF_TOKEN=", " "),
    ("'", "'"),
    ('"', '"'),
    ("key: ", "."),
    ("(", ")"),
    ("login with ", " failed"),
)


def _token(prefix: str, body: Callable[[random.Random, str], str]) -> Callable[..., Plant]:
    def make(r: random.Random, tag: str) -> Plant:
        before, after = _ctx(r, TOKEN_CONTEXTS)
        return Plant([before, Seg(prefix, TRIGGER), Seg(body(r, tag), SECRET), after])

    return make


def _github(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS)
    return Plant(
        [
            before,
            Seg("gh" + r.choice("pousr") + "_", TRIGGER),
            Seg(rand(r, 36, tag=tag), SECRET),
            after,
        ]
    )


def _github_pat(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS)
    body = rand(r, 22, tag=tag) + "_" + rand(r, 59)
    return Plant([before, Seg("github_pat_", TRIGGER), Seg(body, SECRET), after])


def _aws_id(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS + (("aws_access_key_id = ", ""),))
    prefix = r.choice(("AKIA", "ASIA"))
    return Plant(
        [before, Seg(prefix, TRIGGER), Seg(rand(r, 16, UPPER_DIGITS, tag.upper()), SECRET), after]
    )


def _aws_secret(r: random.Random, tag: str) -> Plant:
    """40 characters of base64 holding ``/`` and ``+`` (as AWS writes them), in the places
    a secret access key is written."""
    secret = rand(r, 12, tag=tag[:5]) + "/" + rand(r, 13) + "+" + rand(r, 13)
    form = r.randrange(5)
    if form == 0:
        return Plant([Seg("aws_secret_access_key = "), Seg(secret, SECRET)])
    if form == 1:
        return Plant([Seg("AWS_SECRET_ACCESS_KEY='"), Seg(secret, SECRET), Seg("'")])
    if form == 2:
        key = "AKIA" + rand(r, 16, UPPER_DIGITS)
        return Plant([Seg(key + ":", TRIGGER), Seg(secret, SECRET)])
    if form == 3:
        return Plant(
            [
                Seg(
                    '{"AccessKeyId": "ASIA' + rand(r, 16, UPPER_DIGITS) + '", "SecretAccessKey": "'
                ),
                Seg(secret, SECRET),
                Seg('"}'),
            ]
        )
    return Plant([Seg("'"), Seg(secret, SECRET), Seg("'")])


def _openai(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS + (("OPENAI_API_KEY=", ""),))
    return Plant([before, Seg("sk-", TRIGGER), Seg(rand(r, 48, tag=tag), SECRET), after])


def _openai_proj(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS)
    body = "-".join(rand(r, 24, tag=tag if i == 0 else "") for i in range(3)) + "_" + rand(r, 60)
    return Plant([before, Seg("sk-proj-", TRIGGER), Seg(body, SECRET), after])


def _anthropic(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS + (("ANTHROPIC_API_KEY=", ""),))
    body = rand(r, 40, tag=tag) + "-" + rand(r, 30) + "_" + rand(r, 21) + "AA"
    return Plant([before, Seg("sk-ant-api03-", TRIGGER), Seg(body, SECRET), after])


def _slack(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS)
    digits = "".join(r.choice(string.digits) for _ in range(12))
    body = (
        digits
        + "-"
        + "".join(r.choice(string.digits) for _ in range(13))
        + "-"
        + rand(r, 24, tag=tag)
    )
    return Plant([before, Seg("xox" + r.choice("bpa") + "-", TRIGGER), Seg(body, SECRET), after])


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt(r: random.Random, tag: str) -> Plant:
    before, after = _ctx(r, TOKEN_CONTEXTS)
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = _b64url(
        json.dumps(
            {"sub": tag + rand(r, 12), "name": "svc", "iat": r.randrange(10**9, 2 * 10**9)}
        ).encode()
    )
    signature = rand(r, 43, B64URL)
    return Plant(
        [
            before,
            Seg(header, TRIGGER),
            Seg("."),
            Seg(claims, SECRET),
            Seg("."),
            Seg(signature, SECRET),
            after,
        ]
    )


PEM_LABELS = (
    "RSA PRIVATE KEY",
    "PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "EC PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
)


def _pem(r: random.Random, tag: str) -> Plant:
    label = r.choice(PEM_LABELS)
    lines = []
    for i in range(r.randrange(3, 9)):
        # base64 of a key: letters, digits, + and /; the + and / far enough apart that each
        # run of it is a window long
        parts = [rand(r, 20, tag=tag if i == 0 and j == 0 else "") for j in range(3)]
        lines.append(parts[0] + r.choice("+/") + parts[1] + r.choice("+/") + parts[2][:18])
    lines.append(rand(r, 24) + "==")
    body = "\n".join(lines)
    words = label.split(" ")
    head = [Seg("-----BEGIN ")] + [Seg(" ".join(words[:-2]) + " " if len(words) > 2 else "")]
    return Plant(
        [
            *head,
            Seg("PRIVATE", TRIGGER),
            Seg(" KEY-----\n"),
            Seg(body, SECRET),
            Seg("\n-----END " + label + "-----"),
        ]
    )


URL_SCHEMES = ("postgresql", "mysql", "https", "redis", "mongodb+srv", "amqp", "ftp", "s3")


def _url(r: random.Random, tag: str) -> Plant:
    scheme = r.choice(URL_SCHEMES)
    user = r.choice(("admin", "svc", "deploy", "u" + rand(r, 5, LOWER_DIGITS)))
    password = rand(r, 16, tag=tag)
    host = r.choice(
        ("db.internal:5432", "cache.example.com", "10.0.0.7", "bucket.s3.amazonaws.com")
    )
    path = r.choice(("/prod", "/", "", "/data?ssl=true"))
    before, after = _ctx(
        r, (("", ""), ("DATABASE_URL=", ""), ("connecting to ", " ..."), ("'", "'"))
    )
    return Plant(
        [
            before,
            Seg(scheme),
            Seg("://", TRIGGER),
            Seg(user + ":"),
            Seg(password, SECRET),
            Seg("@" + host + path),
            after,
        ]
    )


SECRET_NAMES = (
    "HF_TOKEN",
    "DB_PASSWORD",
    "WANDB_API_KEY",
    "OPENAI_API_KEY",
    "MY_SERVICE_SECRET",
    "GITHUB_PAT",
)
OTHER_NAMES = ("DATA_DIR", "MODEL_ID", "RUN_LABEL")


def _env_value(r: random.Random, tag: str) -> str:
    return rand(r, 13, tag=tag) + "-" + rand(r, 12, string.ascii_lowercase + string.digits)


def _guard(name: str, value: str, form: int) -> list[Seg]:
    if form == 0:
        return [
            Seg("EQUALS_MATCH: G['os'].", LIT),
            Seg("environ", TRIGGER),
            Seg(f"._data[b'{name}'] == b'"),
            Seg(value, SECRET),
            Seg("'  #   # <frozen os>:761 in decode"),
        ]
    if form == 1:
        return [
            Seg("os.", LIT),
            Seg("environ", TRIGGER),
            Seg(f"['{name}'] = '"),
            Seg(value, SECRET),
            Seg("'"),
        ]
    return [
        Seg("___check_obj_id(G['os']) and G['os'].", LIT),
        Seg("environ", TRIGGER),
        Seg(f"['{name}'] == '"),
        Seg(value, SECRET),
        Seg("'"),
    ]


def _env_guard(r: random.Random, tag: str) -> Plant:
    form = r.randrange(3)
    name = r.choice(SECRET_NAMES + (OTHER_NAMES if form != 1 else ()))
    return Plant(_guard(name, _env_value(r, tag), form))


def _env_echo(r: random.Random, tag: str) -> Plant:
    """A value an environment guard compares, quoted again where no rule of its own finds
    it (a guarded argument): masked only because the guard was seen (before or after)."""
    value = _env_value(r, tag)
    name = r.choice(SECRET_NAMES + OTHER_NAMES)
    text = r.choice(
        (
            ("L['token'] == '", "'"),
            ("recompile: L['key'] == '", "'  # f.py:3"),
            ("arg ", " changed"),
        )
    )
    return Plant([Seg(text[0]), Seg(value, SECRET), Seg(text[1])], companion=_guard(name, value, 0))


def _random_string(r: random.Random, tag: str) -> Plant:
    """A quoted random string of 40 letters and digits (no tag: the rule weighs randomness),
    drawn until it is one the documented rule promises to find (``high_entropy``: about 8 %
    of random strings of this length are not, as the security page says)."""
    q = r.choice("'\"")
    before = r.choice(("", "secret = ", "key=", "{'api': "))
    value = rand(r, 40)
    while not high_entropy(value):
        value = rand(r, 40)
    return Plant(
        [
            Seg(before + q),
            Seg(value, SECRET),
            Seg(q + ("}" if before.startswith("{") else "")),
        ]
    )


def user_name(r: random.Random, tag: str) -> str:
    """A user name found by a byte search: letters and digits, NEEDLE long."""
    return (
        r.choice(("jdoe", "alice", "bob", "mkim", "svc")) + tag + rand(r, NEEDLE, LOWER_DIGITS)
    )[:NEEDLE]


HOME_TAILS = (
    ("/proj/train.py", ""),
    ("/work/model/run.py:42", ""),
    ("/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", ""),
    ("/code/my proj/x.py", ", line 7, in forward"),
    ("/.cache/huggingface/hub", ""),
)


def _home(root: str) -> Callable[..., Plant]:
    def make(r: random.Random, tag: str) -> Plant:
        tail, after = r.choice(HOME_TAILS)
        before = r.choice(("", 'File "', "at ", "cwd="))
        if before == 'File "':
            tail, after = "/proj/train.py", '", line 7, in forward'
        return Plant(
            [Seg(before), Seg(root, TRIGGER), Seg(user_name(r, tag), SECRET), Seg(tail + after)],
            HOMES,
        )

    return make


def _windows_home(r: random.Random, tag: str) -> Plant:
    sep = r.choice(("\\", "/"))
    tail = sep.join(("", "proj", "train.py"))
    before = r.choice(("", 'File "', "in "))
    drive = r.choice("CD")
    return Plant(
        [
            Seg(before),
            Seg(f"{drive}:{sep}Users{sep}", TRIGGER),
            Seg(user_name(r, tag), SECRET),
            Seg(tail),
        ],
        HOMES,
    )


def _bare_home(r: random.Random, tag: str) -> Plant:
    root = r.choice(("/home/", "/Users/", "/private/home/", "/export/home/"))
    before, after = r.choice(
        (("HOME=", ""), ("L['path'] == '", "'"), ("'HOME': '", "'"), ("cwd: ", ""), ("", ""))
    )
    return Plant(
        [Seg(before), Seg(root, TRIGGER), Seg(user_name(r, tag), SECRET), Seg(after)], HOMES
    )


#: Every shape: name -> maker(random, tag) -> Plant.
SHAPES: dict[str, Callable[[random.Random, str], Plant]] = {
    "github ghp_": _github,
    "github_pat_": _github_pat,
    "gitlab glpat-": _token("glpat-", lambda r, t: rand(r, 20, tag=t)),
    "huggingface hf_": _token("hf_", lambda r, t: rand(r, 34, tag=t)),
    "aws key id": _aws_id,
    "aws secret": _aws_secret,
    "openai sk-": _openai,
    "openai sk-proj-": _openai_proj,
    "anthropic sk-ant-": _anthropic,
    "slack xoxb-": _slack,
    "google AIza": _token("AIza", lambda r, t: rand(r, 35, tag=t)),
    "npm_": _token("npm_", lambda r, t: rand(r, 36, tag=t)),
    # the macaroon's first bytes say pypi.org: the same in every token, not secret
    "pypi-": _token("pypi-AgEIcHlwaS5vcmc", lambda r, t: rand(r, 60, tag=t)),
    "jwt": _jwt,
    "pem private key": _pem,
    "url password": _url,
    "env guard": _env_guard,
    "env value quoted again": _env_echo,
    "random string": _random_string,
    "home /home": _home("/home/"),
    "home /Users": _home("/Users/"),
    "home /private/home": _home("/private/home/"),
    "home /media": _home("/media/"),
    "home /export/home": _home("/export/home/"),
    "home /var/home": _home("/var/home/"),
    "home /private/var/home": _home("/private/var/home/"),
    "home /data/users": _home("/data/users/"),
    "home C:\\Users": _windows_home,
    "home bare value": _bare_home,
}


# -- how a canary is written where it goes --------------------------------------------------

RAW, JSON_PLAIN, JSON_AFTER, JSON_ESCAPED = "raw", "json", "json after an escape", "json escaped"
JSON_ENCODINGS = (JSON_PLAIN, JSON_AFTER, JSON_ESCAPED)
#: What stands right before a canary "after an escape" (decoded): a line break, a tab ...
AFTER_ESCAPES = ("token was:\n", "\t", "key\n", '"', "\\", "\r\n", "=\u00e9 ")


def encode(plant: Plant, how: str, live: bool, r: random.Random) -> str:
    """The canary as written: raw text, or the inside of a JSON string (plain, right after an
    escape, or spelled with escapes: ``\\u0067hp_``, ``:\\/\\/``, a secret letter escaped)."""
    text = plant.text(live)
    if how == RAW:
        return text
    if how == JSON_PLAIN:
        return json.dumps(text, ensure_ascii=r.random() < 0.5)[1:-1]
    if how == JSON_AFTER:
        return json.dumps(r.choice(AFTER_ESCAPES) + text, ensure_ascii=r.random() < 0.5)[1:-1]
    out: list[str] = []
    escape_secret = r.random() < 0.5
    for seg in plant.segs:
        t = seg_text(seg, live)
        if not t:
            continue
        enc = json.dumps(t, ensure_ascii=False)[1:-1].replace("/", "\\/")
        if seg.role == TRIGGER and t[0].isalnum():
            enc = f"\\u{ord(t[0]):04x}" + enc[1:]
        elif seg.role == SECRET and escape_secret and len(t) > 2:
            i = r.randrange(1, len(t) - 1)
            if t[i].isalnum():
                head = json.dumps(t[:i], ensure_ascii=False)[1:-1].replace("/", "\\/")
                tail = json.dumps(t[i + 1 :], ensure_ascii=False)[1:-1].replace("/", "\\/")
                enc = head + f"\\u{ord(t[i]):04x}" + tail
        out.append(enc)
    return "".join(out)
