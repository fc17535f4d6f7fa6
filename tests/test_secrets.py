"""Secrets are never published: what a trace holds that looks secret is masked on every page,
download and report, with one located ``torchtrace.secret`` warning, and the publish check
names the build's own variables whose values a published file still holds.

Built from a real capture (``tests/capture/env_secrets.py``, torch 2.13): a compiled
function reads ``HF_TOKEN`` (a fake Hugging Face token) and ``DB_PASSWORD`` from its
environment and takes string arguments; another is called with the token and the password.
The same run's TORCH_LOGS text log, a debug folder's repro script and a build-time capture
(one without torch, one with: ``-m torch``) go through the same masking; and nothing of
the rest of tests/data looks secret.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from html import escape as html_escaped
from pathlib import Path

import pytest
from sphinx.testing.util import SphinxTestApp

from sphinx_torchtrace.render.diff_formats import Report, render
from sphinx_torchtrace.sphinxext.publish_check import environment_secrets
from sphinx_torchtrace.trace import load_trace, secrets
from sphinx_torchtrace.trace.comparing.diff import diff_traces
from sphinx_torchtrace.trace.comparing.regressions import DEFAULT_REGRESSIONS, regressions
from sphinx_torchtrace.trace.diagnostics import quote
from sphinx_torchtrace.trace.secrets import (
    MASK,
    SecretMasker,
    high_entropy,
    mask_secrets,
    scan_text,
    secret_name,
)

from .conftest import DATA, SiteMaker, copy_testroot, warnings_of, write_page
from .test_hostile_values import ADVERSARIAL, LINEAR_BOUND_S

ENV_SECRETS = DATA / "captured" / "env_secrets"
#: The same program's TORCH_LOGS="guards,recompiles" text log.
TEXT_LOG = DATA / "captured" / "torch_logs" / "env_secrets.log"
(LOG,) = ENV_SECRETS.glob("*.log")
TOKEN = "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"  # fake, as set by the capture script
PASSWORD = "correct-horse-battery-staple-7"  # fake too; no rule knows it by its shape
#: What no published byte may hold: the token's secret part, the password.
SECRET_PARTS = (TOKEN[3:].encode(), PASSWORD.encode())
#: The line of the first finding: the guard on HF_TOKEN's value in [0/0]'s guards.
FIRST_LINE = 3306
WARNING = re.compile(r"^(\S+):(\d+): WARNING: (.*) \[torchtrace\.secret\]$", re.M)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

PAGE = """Secrets
=======

.. torchtrace:: logs
   :name: env
"""


def _project(tmp_path: Path, page: str, **inputs: Path) -> Path:
    """A fresh copy of the simple project whose index is ``page``, with ``inputs`` copied
    in (folder name: source)."""
    srcdir = copy_testroot("simple", tmp_path / f"project-{len(list(tmp_path.iterdir()))}")
    write_page(srcdir, "index.rst", page)
    for name, source in inputs.items():
        shutil.copytree(source, srcdir / name)
    return srcdir


def _site(
    make_site: SiteMaker, tmp_path: Path, builder: str = "html", **conf: object
) -> SphinxTestApp:
    """The capture copied into a fresh project (a trace folder of the docs) and built."""
    srcdir = _project(tmp_path, PAGE, logs=ENV_SECRETS)
    return make_site("simple", builder, srcdir=srcdir, confoverrides=dict(conf))


def _leaks(root: Path, *skip: Path, parts: tuple[bytes, ...] = SECRET_PARTS) -> list[str]:
    """Files under ``root`` (but the folders ``skip``: the inputs) that hold a secret's
    bytes (``parts``)."""
    found = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or any(path.is_relative_to(s) for s in skip):
            continue
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        if any(part in data for part in parts):
            found.append(str(path.relative_to(root)))
    return found


def _secret_warnings(text: str) -> list[tuple[str, int, str]]:
    return [(m[1], int(m[2]), m[3]) for m in WARNING.finditer(_ANSI.sub("", text))]


# -- the model: what is found, what is masked ---------------------------------------------


def test_the_capture_holds_the_secrets_the_masker_hides() -> None:
    """The real log holds the token and the password in the forms torch writes; the scan
    finds each, with its line, and the masker leaves none of them, nor a line fewer."""
    text = LOG.read_text(encoding="utf-8")
    assert f"G['os'].environ._data[b'HF_TOKEN'] == b'{TOKEN}'" in text  # the guard
    assert f"L['key'] == '{TOKEN}'" in text and f"L['key'] == '{PASSWORD}'" in text
    assert f"1/0: key == '{TOKEN}'" in text  # the recompile reason
    scan = load_trace(ENV_SECRETS).ranks[0].secrets
    assert [(s.line, s.name or s.looks_like) for s in scan.found] == [
        (3306, "HF_TOKEN"),
        (3308, "DB_PASSWORD"),
        (6390, "HF_TOKEN"),
        (6392, "DB_PASSWORD"),
        (6672, "a Hugging Face token"),
        (6789, "a Hugging Face token"),
        (6936, "DB_PASSWORD"),  # the argument: the value its environment guard gave
        (6992, "a Hugging Face token"),  # compilation_metrics' recompile_reason
    ]
    masked = SecretMasker(secrets=scan.found)(text)
    assert TOKEN[3:] not in masked and PASSWORD not in masked
    assert masked.count("\n") == text.count("\n")
    assert "G['os'].environ._data[b'HF_TOKEN'] == b'hf_…[secret masked]'" in masked
    assert "G['os'].environ._data[b'DB_PASSWORD'] == b'[secret masked]'" in masked
    assert "L['key'] == '[secret masked]'" in masked  # the password, where it is an argument
    assert "L['tone'] == 'sepia-tone'" in masked  # an argument that is no secret stays


#: Each form a rule finds, and what it becomes (None: it stays as it is).
FORMS: list[tuple[str, str | None]] = [
    # the forms torch writes: a guard, its failure, a repro script (only secret names)
    (
        "G['os'].environ._data[b'TOKEN'] == b'abc'",
        f"G['os'].environ._data[b'TOKEN'] == b'{MASK}'",
    ),
    ("os.environ['MODE'] == 'fast'", f"os.environ['MODE'] == '{MASK}'"),
    (
        '"environ._data[b\\"X\\"] == b\\"it\'s\\""',
        f'"environ._data[b\\"X\\"] == b\\"{MASK}\\""',
    ),
    ('"environ._data[b\'X\'] == b\\"it\'s\\""', f'"environ._data[b\'X\'] == b\\"{MASK}\\""'),
    (
        "os.environ['TORCHINDUCTOR_REDIS_PASSWORD'] = 'pw12345'",
        f"os.environ['TORCHINDUCTOR_REDIS_PASSWORD'] = '{MASK}'",
    ),
    ("os.environ['TORCH_TRACE'] = '/home/user/trace'", None),  # a path torch records
    # tokens by their prefixes: the prefix stays
    ("ghp_" + "aB3" * 12, "ghp_…" + MASK),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwx", "github_pat_…" + MASK),
    ("x = 'sk-proj-abcDEF0123456789abcdefghij'", "x = 'sk-…" + MASK + "'"),
    ("xoxb-123456789012-abcdefABC", "xoxb-…" + MASK),
    ("AKIAIOSFODNN7EXAMPLE", "AKIA…" + MASK),
    ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIza…" + MASK),
    ("glpat-abcdefghij0123456789", "glpat-…" + MASK),
    ("npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_…" + MASK),
    ("pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0LXV2d3h5ejAxMjM0", "pypi-…" + MASK),
    (
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9",  # noqa: E501 - a value as logged
        "Bearer eyJ…" + MASK,
    ),
    ("https://user:hunter22@example.com/x", f"https://user:{MASK}@example.com/x"),
    ("'Zx9q3LmN8vB2cR7tY4wP1kH6aQ5sD0fG'", f"'{MASK}'"),  # quoted and random
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabcdEFGH5678\n"
        "-----END RSA PRIVATE KEY-----",
        f"-----BEGIN RSA PRIVATE KEY-----\n{MASK}\n{MASK}\n-----END RSA PRIVATE KEY-----",
    ),
    # what torch writes and is no secret: cache keys, kernels, names, hashes, ports
    ("'fowxkqohb3x3ebcpypk5t6cet3ayffs75fv2nkqvu5bti6evb5gh'", None),
    ("triton_poi_fused_add_mul_sin_0 cpp_fused_cos_mul_0", None),
    ("'L_self_modules_layers_modules_0_modules_attn_parameters_weight_'", None),
    ("'torch_dynamo_resume_in_f5_at_69_ORIGINAL_BYTECODE_51'", None),
    ("'AOTInductorModelUpdateConstantsMapV2'", None),
    ("'d41d8cd98f00b204e9800998ecf8427e0123456789abcdef0123456789abcdef'", None),
    ("self.hf_model_name_for_the_tokenizer = 1; task-sk-abcdefghijklmnopqrstuvwx", None),
    ("http://localhost:8080@x", None),
]


@pytest.mark.parametrize(("text", "masked"), FORMS)
def test_each_form_is_masked_and_nothing_else(text: str, masked: str | None) -> None:
    assert mask_secrets(text) == (text if masked is None else masked)
    twice = text + "\n" + text
    assert mask_secrets(twice).count("\n") == twice.count("\n")  # no line added or removed


def test_a_short_text_is_scanned_at_once_and_found_as_rule_by_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A short text is first scanned for every rule's expression at once, and only looked at
    rule by rule when one matches: that one scan finds whatever the rules find, on every
    form, and on every short piece of a real capture of secrets around each finding."""
    texts = [text for text, _ in FORMS]
    capture = LOG.read_text(encoding="utf-8")
    for line in capture.splitlines():
        if mask_secrets(line) != line:  # pieces of the line, ending and starting everywhere
            texts += [line[i : i + size] for size in (24, 64, 128) for i in range(len(line))]
    learned = SecretMasker(secrets=scan_text(LOG.read_bytes()).found)
    gated = [(mask_secrets(t), learned(t)) for t in texts]
    monkeypatch.setattr(secrets, "_GATED_CHARS", -1)
    assert gated == [(mask_secrets(t), learned(t)) for t in texts]
    assert sum(a != t for (a, _), t in zip(gated, texts, strict=True)) > 500  # it finds


def test_keep_publishes_a_variable_and_its_value_wherever_it_is_quoted() -> None:
    scan = scan_text(LOG.read_bytes())
    text = LOG.read_text(encoding="utf-8")
    by_name = SecretMasker(["HF_TOKEN"], scan.found)(text)
    assert f"L['key'] == '{TOKEN}'" in by_name and PASSWORD not in by_name
    by_value = SecretMasker([r"hf_[A-Za-z]{34}"], scan.found)(text)
    assert TOKEN in by_value and PASSWORD not in by_value


def test_secret_names_and_random_strings() -> None:
    assert all(
        map(
            secret_name,
            [
                "HF_TOKEN",
                "OPENAI_API_KEY",
                "DB_PASSWORD",
                "GITHUB_PAT",
                "AWS_SECRET_ACCESS_KEY",
                "SESSION_COOKIE",
                "OAUTH_ID",
            ],
        )
    )
    assert not any(
        map(
            secret_name,
            [
                "HOME",
                "USER",
                "PATH",
                "MONKEY",
                "BYPASS_CACHE",
                "NOX_CURRENT_SESSION",
                "TOKENIZERS_PARALLELISM",
                "GIT_AUTHOR_NAME",
            ],
        )
    )
    assert high_entropy("Zx9q3LmN8vB2cR7tY4wP1kH6aQ5sD0fG")
    assert not high_entropy("r6s32kusj6rjye4ana4fuue7juciyvssdcpnvv4dq7r6owrabkc")


def test_a_diagnostic_never_quotes_a_secret() -> None:
    """Messages quote the start of a bad line in build logs: a token there is masked first."""
    assert quote(f'{{"x": "{TOKEN} and more"}}') == '\'{"x": "hf_…[secret masked] and more"}\''


#: Texts aimed at this module's patterns, besides the shared adversarial ones.
ADVERSARIAL_HERE = [
    *ADVERSARIAL,
    "\"environ['X'] == '\" * (MB // 16)",
    '"environ._data[b\'X\'] == b\'" + "\\\\" * MB',
    '"environ[\'X\'] == \'" + "a" * MB',
    '"environ[\'" * (MB // 9)',
    '"-----BEGIN PRIVATE KEY-----" * (MB // 27)',
    '"-----BEGIN PRIVATE KEY-----" * (MB // 54) + "-----END PRIVATE KEY-----"',
    '"-----BEGIN PRIVATE KEY-----" + "\\nAAAA" * (MB // 5)',
    '"ghp_" * (MB // 4)',
    '"hf_" + "A1b" * (MB // 3)',
    '"\\\'" + "A1b" * (MB // 3)',
    '"\\\'A1" * (MB // 3)',
    '"eyJ" * (MB // 3)',
    '"eyJaaaaaaaaaa." * (MB // 14)',
    '"://" * (MB // 3)',
    '"://" + "a" * MB + ":"',
    '"a://b:c@" * (MB // 8)',
    '"AKIA" * (MB // 4)',
]


@pytest.mark.parametrize(
    ("setup", "call"),
    [
        ("from sphinx_torchtrace.trace.secrets import mask_secrets as f", "f(text)"),
        ("from sphinx_torchtrace.trace.secrets import scan_text as f", "f(text.encode())"),
    ],
    ids=["mask", "scan"],
)
def test_masking_and_scanning_are_linear(setup: str, call: str) -> None:
    texts = ", ".join(ADVERSARIAL_HERE)
    code = f"MB = 1 << 20\n{setup}\nfor text in [{texts}]:\n    {call}\n"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=LINEAR_BOUND_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"over {LINEAR_BOUND_S} s on 1 MB texts: super-linear ({call})")
    assert done.returncode == 0, done.stderr[-3000:]


def test_no_false_positive_anywhere_in_the_corpus() -> None:
    """Every log, text log, model and expected output of tests/data: nothing looks secret
    but what the env_secrets capture planted (torch's cache keys, hashes, kernel and
    variable names, configs and repro scripts' variables all stay)."""
    found = []
    for path in sorted(DATA.rglob("*")):
        if not path.is_file() or path.is_relative_to(ENV_SECRETS) or path == TEXT_LOG:
            continue
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        found += [
            f"{path.relative_to(DATA)}:{s.line}: {s.describe()}" for s in scan_text(data).found
        ]
    assert found == []


# -- real builds ------------------------------------------------------------------------------


@pytest.mark.parametrize("builder", ["html", "text"])
def test_a_build_publishes_no_secret_and_says_where_the_first_was(
    make_site: SiteMaker, tmp_path: Path, builder: str
) -> None:
    app = _site(make_site, tmp_path, builder)
    srcdir, outdir = Path(app.srcdir), Path(app.outdir)
    assert _leaks(outdir) == []
    # pages' sources and downloads; the doctree folder keeps the model's cache beside the
    # capture cache, like the logs never published
    assert _leaks(srcdir, srcdir / "logs", Path(app.doctreedir)) == []
    warnings = warnings_of(app)
    assert TOKEN[3:] not in warnings and PASSWORD not in warnings
    [(where, line, message)] = _secret_warnings(warnings)
    assert (where, line) == ("logs/" + LOG.name, FIRST_LINE)
    assert "'env': the value of environment variable HF_TOKEN is masked" in message
    assert "and 7 more values that look secret" in message
    suffix = "html" if builder == "html" else "txt"
    pages = "".join(p.read_text(encoding="utf-8") for p in outdir.rglob(f"*.{suffix}"))
    guard = "G['os'].environ._data[b'HF_TOKEN'] == b'hf_…[secret masked]'"
    assert guard in (pages if builder == "text" else pages.replace("&#39;", "'"))


def test_a_text_log_publishes_no_secret(make_site: SiteMaker, tmp_path: Path) -> None:
    """A TORCH_LOGS text log of the same program: its guard lines are masked, with the
    warning at the first."""
    page = "Text\n====\n\n.. torchtrace:: logs/env_secrets.log\n   :name: text\n"
    srcdir = _project(tmp_path, page)
    (srcdir / "logs").mkdir()
    shutil.copy(TEXT_LOG, srcdir / "logs")
    app = make_site("simple", "text", srcdir=srcdir)
    assert _leaks(Path(app.outdir)) == []
    assert _leaks(srcdir, srcdir / "logs", Path(app.doctreedir)) == []
    [(where, line, message)] = _secret_warnings(warnings_of(app))
    assert (where, line) == ("logs/env_secrets.log", 42)
    assert "environment variable HF_TOKEN" in message and "and 6 more" in message
    pages = "".join(p.read_text(encoding="utf-8") for p in Path(app.outdir).rglob("*.txt"))
    assert "G['os'].environ._data[b'HF_TOKEN'] == b'hf_…[secret masked]'" in pages


def test_keep_publishes_what_the_user_vouches_for(make_site: SiteMaker, tmp_path: Path) -> None:
    app = _site(make_site, tmp_path, "text", torchtrace_secrets_keep=["HF_TOKEN", "DB_PASSWORD"])
    pages = "".join(p.read_text(encoding="utf-8") for p in Path(app.outdir).rglob("*.txt"))
    assert f"G['os'].environ._data[b'HF_TOKEN'] == b'{TOKEN}'" in pages
    assert f"L['key'] == '{TOKEN}'" in pages and f"L['key'] == '{PASSWORD}'" in pages
    assert _secret_warnings(warnings_of(app)) == []


def test_keep_one_and_the_warning_names_the_other(make_site: SiteMaker, tmp_path: Path) -> None:
    app = _site(make_site, tmp_path, "text", torchtrace_secrets_keep=[r"hf_\w+"])
    [(_, line, message)] = _secret_warnings(warnings_of(app))
    assert line == 3308 and "environment variable DB_PASSWORD" in message
    assert "and 2 more values" in message
    assert _leaks(Path(app.outdir), parts=(PASSWORD.encode(),)) == []
    pages = "".join(p.read_text(encoding="utf-8") for p in Path(app.outdir).rglob("*.txt"))
    assert TOKEN in pages and PASSWORD not in pages


def test_a_bad_keep_is_a_config_warning(make_site: SiteMaker, tmp_path: Path) -> None:
    app = _site(make_site, tmp_path, "text", torchtrace_secrets_keep=["(unclosed"])
    assert "torchtrace_secrets_keep = ['(unclosed']" in warnings_of(app)
    assert "[torchtrace.config]" in warnings_of(app)
    assert _leaks(Path(app.outdir)) == []


def test_the_publish_check_names_a_build_variable_a_page_holds(
    make_site: SiteMaker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cyanotype`` is an argument no rule masks: set as a secret-named variable of the
    build, the page holding it is named, with the variable, never the value; HOME, USER
    and PATH are never looked for, whatever they hold."""
    monkeypatch.setenv("PHOTO_SECRET", "cyanotype")
    monkeypatch.setenv("USER", "sepia-tone")  # on the pages too, and no secret
    app = _site(make_site, tmp_path, "html")
    warnings = _ANSI.sub("", warnings_of(app))
    [(where, message)] = re.findall(
        r"^(\S+): WARNING: (.*environment variable\(s\).*) \[torchtrace\.secret\]$", warnings, re.M
    )
    assert "variable(s) PHOTO_SECRET:" in message and "USER" not in message
    assert "cyanotype" not in warnings
    assert where.endswith("frame-0-1.rst")
    kept = _site(make_site, tmp_path, "html", torchtrace_secrets_keep=["PHOTO_SECRET"])
    assert "PHOTO_SECRET" not in warnings_of(kept)


def test_environment_secrets_are_the_ones_that_look_secret() -> None:
    environ = {
        "HF_TOKEN": TOKEN,
        "DB_PASSWORD": PASSWORD,
        "ANY_NAME": "ghp_" + "aB3" * 12,
        "HOME": "/home/alice",
        "USER": "alice-smith",
        "PATH": "/usr/bin:/bin",
        "SHORT_TOKEN": "abc",
        "NUMBER_SECRET": "12345678",
        "XDG_SESSION_TYPE": "wayland",
        "KEY_PATH": "/etc/ssl/key.pem",
        "FLAG_TOKEN": "disabled",
        # a runner's own setting, no secret: nox names its session ("package")
        "NOX_CURRENT_SESSION": "package",
        "SESSION_COOKIE": "a9f3Kq2",
    }
    found = environment_secrets(environ, SecretMasker())
    assert sorted(found.values()) == ["ANY_NAME", "DB_PASSWORD", "HF_TOKEN", "SESSION_COOKIE"]
    assert environment_secrets(environ, SecretMasker(["HF_TOKEN"])).get(TOKEN) is None


# -- the command line -------------------------------------------------------------------------


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env=dict(os.environ),
    )


def test_the_standalone_build_publishes_no_secret(tmp_path: Path) -> None:
    result = run("build", ENV_SECRETS, "-o", tmp_path / "site", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert _leaks(tmp_path / "site") == []
    said = result.stdout + result.stderr
    assert TOKEN[3:] not in said and PASSWORD not in said
    assert (
        f"{LOG.name}:{FIRST_LINE}: WARNING: 'env-secrets': the value of environment "
        "variable HF_TOKEN is masked" in said
    )


def test_show_masks_the_record_it_prints() -> None:
    result = run("show", f"{LOG}:6672")  # the guards of [1/0]: L['key'] == '<the token>'
    assert result.returncode == 0, result.stderr
    assert "L['key'] == 'hf_…[secret masked]'" in result.stdout
    assert TOKEN[3:] not in result.stdout


def _baseline(folder: Path) -> Path:
    """The run cut before ``authorized`` compiled again ([1/1]): a real prefix of the log,
    so the new run recompiles, for the key ``hf_…``."""
    lines = LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"frame_id": 1, "frame_compile_id": 1' in line)
    folder.mkdir(parents=True)
    (folder / LOG.name).write_text("".join(lines[:cut]), encoding="utf-8")
    return folder


@pytest.mark.parametrize("fmt", ["markdown", "json", "text", "github", "junit"])
def test_diff_reports_mask_what_they_quote(tmp_path: Path, fmt: str) -> None:
    baseline = _baseline(tmp_path / "baseline")
    args = ["--json"] if fmt == "json" else ["--format", fmt]
    result = run("diff", baseline, ENV_SECRETS, *args)
    assert result.returncode == 1, result.stderr  # a recompile: a regression
    out = result.stdout
    shown = json.dumps(json.loads(out), ensure_ascii=False) if fmt == "json" else out
    assert "key == 'hf_…[secret masked]'" in shown
    assert TOKEN[3:] not in result.stdout and PASSWORD not in result.stdout


def test_diff_model_masks_guards_recompile_reasons_and_graphs() -> None:
    old, new = load_trace(ENV_SECRETS), load_trace(ENV_SECRETS)
    old.ranks[0].compiles = [c for c in old.ranks[0].compiles if c.label != "[1/1]"]
    found = [s for t in (old, new) for r in t.ranks for s in r.secrets.found]
    diff = diff_traces(old, new, mask=SecretMasker(secrets=found))
    report = Report(
        diff, regressions(diff, DEFAULT_REGRESSIONS), "a", "b", dict(DEFAULT_REGRESSIONS)
    )
    for fmt in ("markdown", "json"):
        out = render(report, fmt)
        assert "secret masked" in out and TOKEN[3:] not in out and PASSWORD not in out


def test_a_diff_page_publishes_no_secret(make_site: SiteMaker, tmp_path: Path) -> None:
    page = "Diff\n====\n\n.. torchtrace-diff:: baseline new\n   :name: cmp\n"
    srcdir = _project(
        tmp_path, page, new=ENV_SECRETS, baseline=_baseline(tmp_path / "cut" / "baseline")
    )
    app = make_site("simple", "html", srcdir=srcdir)
    assert _leaks(Path(app.outdir)) == []
    assert _leaks(srcdir, srcdir / "new", srcdir / "baseline", Path(app.doctreedir)) == []
    # one warning per trace: each side is read by the comparison alone
    assert [(w, line) for w, line, _ in _secret_warnings(warnings_of(app))] == [
        (f"baseline/{LOG.name}", FIRST_LINE),
        (f"new/{LOG.name}", FIRST_LINE),
    ]


def test_a_debug_folder_masks_a_secret_torch_wrote_in_a_repro_script(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    """torch's repro scripts set its own variables: one whose name looks secret (a remote
    cache's password) is masked, with the warning at its line."""
    page = "Debug\n=====\n\n.. torchtrace:: debug\n   :name: dbg\n"
    srcdir = _project(
        tmp_path, page, debug=DATA / "captured" / "debug_dir" / "inference" / "torch_compile_debug"
    )
    debug = srcdir / "debug"
    runnable = sorted(debug.rglob("fx_graph_runnable.py"))[0]
    lines = runnable.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("os.environ["))
    lines.insert(at, "os.environ['TORCHINDUCTOR_REDIS_PASSWORD'] = 'pw-hunter2-remote'\n")
    runnable.write_text("".join(lines), encoding="utf-8")
    app = make_site("simple", "html", srcdir=srcdir)
    (download,) = Path(app.outdir).glob("_downloads/*/fx_graph_runnable.py")  # offered raw
    masked = "os.environ['TORCHINDUCTOR_REDIS_PASSWORD'] = '[secret masked]'"
    assert masked in download.read_text(encoding="utf-8")
    parts = (b"pw-hunter2-remote",)
    assert _leaks(Path(app.outdir), parts=parts) == []
    assert _leaks(srcdir, debug, Path(app.doctreedir), parts=parts) == []
    [(where, line, message)] = _secret_warnings(warnings_of(app))
    assert where.endswith("fx_graph_runnable.py") and line == at + 1
    assert "TORCHINDUCTOR_REDIS_PASSWORD" in message


#: A captured program that fails after writing its trace (here, the committed capture),
#: saying the token of its environment on stderr: a CI build's own secret.
LEAKY_SCRIPT = """import os, shutil, sys
os.makedirs(os.environ["TORCH_TRACE"], exist_ok=True)
shutil.copy(sys.argv[1], os.path.join(os.environ["TORCH_TRACE"], sys.argv[2]))
print("401 Unauthorized for token", os.environ["HF_TOKEN"], file=sys.stderr)
sys.exit(1)
"""


def test_a_capture_in_ci_publishes_none_of_the_builds_secrets(
    make_site: SiteMaker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``torchtrace-capture`` runs with the build's environment: its trace's guards and the
    stderr its page and warning quote hold the token, masked in each; the publish check,
    which knows the build's ``HF_TOKEN``, then finds it nowhere."""
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    page = (
        f"Live\n====\n\n.. torchtrace-capture:: scripts/leaky.py\n   :name: live\n"
        f"   :args: {LOG.name} {LOG.name}\n"
    )
    srcdir = _project(tmp_path, page)
    (srcdir / "scripts").mkdir()
    (srcdir / "scripts" / "leaky.py").write_text(LEAKY_SCRIPT, encoding="utf-8")
    shutil.copy(LOG, srcdir / "scripts" / LOG.name)
    app = make_site("simple", "html", srcdir=srcdir)
    warnings = _ANSI.sub("", warnings_of(app))
    assert "401 Unauthorized for token hf_…[secret masked]" in warnings  # the capture's
    assert TOKEN[3:] not in warnings
    [(where, line, message)] = _secret_warnings(warnings)  # the trace's; none of the check's
    assert where.endswith(LOG.name) and line == FIRST_LINE and "'live'" in message
    assert _leaks(Path(app.outdir)) == []
    assert _leaks(srcdir / "torchtrace") == []
    index = (Path(app.outdir) / "index.html").read_text(encoding="utf-8")
    assert "401 Unauthorized for token hf_…[secret masked]" in index


@pytest.mark.torch
def test_a_real_capture_of_the_builds_secrets(
    make_site: SiteMaker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch 2.13 CPU, at build time: the capture script compiled with the build's own
    (fake) token and password in its environment; no page or download holds them."""
    token, password = "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", "tr0ub4dor&3-staple-horse"
    monkeypatch.setenv("HF_TOKEN", token)
    monkeypatch.setenv("DB_PASSWORD", password)
    page = "Live\n====\n\n.. torchtrace-capture:: scripts/env_secrets.py\n   :name: live\n"
    srcdir = _project(tmp_path, page)
    (srcdir / "scripts").mkdir()
    shutil.copy(Path(__file__).parent / "capture" / "env_secrets.py", srcdir / "scripts")
    app = make_site("simple", "html", srcdir=srcdir)
    parts = (token[3:].encode(), password.encode(), html_escaped(password).encode())
    assert _leaks(Path(app.outdir), parts=parts) == []
    assert _leaks(srcdir / "torchtrace", parts=parts) == []
    warnings = _ANSI.sub("", warnings_of(app))
    assert token[3:] not in warnings and password not in warnings
    [(where, _, message)] = _secret_warnings(warnings)  # the trace's; the check found none
    assert "the value of environment variable HF_TOKEN" in message, message
    assert where.endswith(".log")
