"""``check``, ``redact`` and ``bundle`` (issue 39): a trace made safe to post.

Private text is planted into a copy of a real log (its payload md5s recomputed, as torch
writes them), the commands run as a user runs them, and the bytes they write are searched
for it: none may survive, tlparse 0.4.3 must read the redacted log without an md5 or JSON
failure, and ``summary`` must give the same figures for both logs.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sphinx_torchtrace.trace.sharing.redact_text import Options, PathMap, TextRedactor
from sphinx_torchtrace.trace.sharing.source_lines import SOURCE_REMOVED, SourceFinder

from .conftest import DATA, SIMPLE_LOG

REPO = Path(__file__).resolve().parents[1]
COMPILE_ERROR = DATA / "shared" / "compile_error" / "dedicated_log_torch_trace_fqqib31t.log"
RANKS = DATA / "corpus" / "ddp_4ranks_divergent"
#: A Hugging Face token's shape: ``hf_`` and 34 letters and digits (made up).
TOKEN = "hf_" + "Zq8Xv2Lm4Np6Rt1Yw3Ks5Bd7Fg9Hj0Ac2Ue"
PLANTED_PATH = "/home/alice/secret_project/model.py"
PLANTED_CODE = "secret_sauce = leak(x)"
#: What must not survive redaction: the token's secret part, the user, the project, the code.
PLANTED = [TOKEN[3:], "alice", "secret_project", "secret_sauce"]


def run(
    *args: str | Path, cwd: Path = REPO, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """The command as a user runs it, in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _md5(payload_lines: list[str]) -> str:
    return hashlib.md5("\n".join(line[1:] for line in payload_lines).encode()).hexdigest()


def plant(src: Path, dest: Path) -> Path:
    """A copy of ``src`` holding a token in a guard, a user's path in a ``str`` record, a
    graph comment and inductor's cache folder, and a line of source in a traceback; the
    md5 of each payload edited recomputed as torch computes it."""
    lines = src.read_text(encoding="utf-8").split("\n")
    out: list[str] = []
    edited = {"guards": False, "graph": False}
    i = 0
    while i < len(lines):
        head = lines[i]
        i += 1
        payload = []
        while i < len(lines) and lines[i].startswith("\t"):
            payload.append(lines[i])
            i += 1
        if '"dynamo_cpp_guards_str"' in head and not edited["guards"]:
            payload.append(
                f"\t| +- LAMBDA_GUARD: G['os'].environ._data[b'HF_TOKEN'] == "
                f"b'{TOKEN}'  # {PLANTED_CODE}  # secret_project/model.py:12 in f"
            )
            edited["guards"] = True
        if '"dynamo_output_graph"' in head and not edited["graph"]:
            payload.insert(
                1, f"\t        # File: {PLANTED_PATH}:12 in forward, code: {PLANTED_CODE}"
            )
            payload.insert(2, "\t        # kernel: /tmp/torchinductor_alice/ab/cabc.py")
            payload.append('\t  File "/home/alice/secret_project/model.py", line 12, in f')
            payload.append(f"\t    {PLANTED_CODE}")
            edited["graph"] = True
        if payload and '"has_payload"' in head:
            head = re.sub(
                r'"has_payload": "[0-9a-f]{32}"', f'"has_payload": "{_md5(payload)}"', head
            )
        if head.startswith("V") and '"str"' in head and "str_planted" not in edited:
            prefix = head[: head.index("] ") + 2]
            out.append(prefix + json.dumps({"str": [PLANTED_PATH, 9999]}))
            edited["str_planted"] = True
        out.append(head)
        out.extend(payload)
    assert all(edited.values()) and len(edited) == 3
    dest.write_text("\n".join(out), encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return plant(SIMPLE_LOG, tmp_path_factory.mktemp("planted") / "planted.log")


@pytest.fixture(scope="module")
def redacted(planted: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    out = planted.with_name("redacted.log")
    return out, run("redact", planted, "-o", out)


def _tlparse() -> str:
    beside = Path(sys.executable).parent / "tlparse"
    found = str(beside) if beside.exists() else shutil.which("tlparse")
    if found is None:
        pytest.skip("no tlparse binary")
    return found


def tlparse_stats(log: Path, out: Path) -> dict[str, int]:
    """tlparse 0.4.3's ``Stats { ok: 170, fail_json: 1 }`` of a log, as a dict (a gzip log
    decompressed first: tlparse reads plain logs only)."""
    if log.read_bytes()[:2] == b"\x1f\x8b":
        plain = out.with_name(out.name + ".log")
        plain.write_bytes(gzip.decompress(log.read_bytes()))
        log = plain
    result = subprocess.run(
        [_tlparse(), str(log), "-o", str(out), "--no-browser", "--overwrite"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    line = next(
        ln for ln in (result.stdout + result.stderr).splitlines() if ln.startswith("Stats {")
    )
    return {k: int(v) for k, v in re.findall(r"(\w+): (\d+)", line)}


def test_the_planted_log_is_what_the_test_says(planted: Path) -> None:
    data = planted.read_text(encoding="utf-8")
    assert all(s in data for s in PLANTED)
    result = run("check", planted)
    assert result.returncode == 1, result.stderr
    # each class found, each finding at LOG:LINE, the secret's value never printed
    for kind in ("paths", "names", "secrets", "source"):
        assert re.search(rf"^{re.escape(str(planted))}:\d+: {kind}: ", result.stdout, re.M)
    assert TOKEN[3:] not in result.stdout
    line = next(n for n, text in enumerate(data.split("\n"), 1) if PLANTED_PATH in text)
    assert f"{planted}:{line}: paths: {PLANTED_PATH}" in result.stdout


def test_check_json(planted: Path) -> None:
    result = run("check", planted, "--json")
    assert result.returncode == 1
    data = json.loads(result.stdout)
    [log] = data["logs"]
    assert {f["class"] for f in log["findings"]} == {"paths", "names", "secrets", "source"}
    assert data["total"] == sum(log["counts"].values())
    assert TOKEN[3:] not in result.stdout


def test_nothing_planted_survives_redaction(
    redacted: tuple[Path, subprocess.CompletedProcess[str]],
) -> None:
    out, result = redacted
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checked: nothing private left" in result.stdout
    data = out.read_bytes()
    assert [s for s in PLANTED if s.encode() in data] == []
    assert SOURCE_REMOVED.encode() in data and b"~/project/model.py" in data
    assert run("check", out).returncode == 0


def test_tlparse_reads_the_redacted_log_and_summary_agrees(
    planted: Path, redacted: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    out, _ = redacted
    before = tlparse_stats(planted, tmp_path / "before")
    after = tlparse_stats(out, tmp_path / "after")
    assert after == before and "fail_payload_md5" not in after and "fail_json" not in after
    a, b = run("summary", "--json", planted), run("summary", "--json", out)
    assert a.returncode == b.returncode == 0
    assert _figures(a.stdout) == _figures(b.stdout)


#: Fields of ``summary --json`` that quote paths or torch's words about them: redaction
#: rewrites the paths in them (``/home/user/...`` to ``~/...``) by design.
PATH_FIELDS = frozenset({"file", "label", "place", "torch_place", "explanation", "reason"})


def _figures(stdout: str) -> object:
    """``summary --json`` as redaction must keep it: every figure, name, compile id and
    record line; each log it read named by its place among them (the redacted copy is
    another file), the fields that quote paths left out."""
    data = json.loads(stdout)
    read = data.pop("log")["read"]

    def named(value: object) -> object:
        if isinstance(value, dict):
            return {
                k: read.index(v) if k == "log" else named(v)
                for k, v in value.items()
                if k not in PATH_FIELDS
            }
        return [named(v) for v in value] if isinstance(value, list) else value

    return named(data)


def test_redacting_twice_changes_nothing(
    redacted: tuple[Path, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    out, _ = redacted
    again = tmp_path / "again.log"
    assert run("redact", out, "-o", again).returncode == 0
    assert again.read_bytes() == out.read_bytes()


def test_a_gzip_log_stays_gzip_and_keep_leaves_a_class(planted: Path, tmp_path: Path) -> None:
    zipped = tmp_path / "planted.log.gz"
    zipped.write_bytes(gzip.compress(planted.read_bytes(), mtime=0))
    out = tmp_path / "out"
    out.mkdir()
    result = run("redact", zipped, "-o", out, "--keep", "source", "--json")
    # kept source is no leftover of redaction: only the classes asked for are checked
    assert result.returncode == 0, result.stdout + result.stderr
    data = gzip.decompress((out / "planted.log.gz").read_bytes())
    assert PLANTED_CODE.encode() in data and b"alice" not in data
    report = json.loads(result.stdout)
    assert report["clean"] and report["logs"][0]["counts"].get("source", 0) == 0


FROZEN = DATA / "captured" / "frozen_constants"
FROZEN_VALUES = ["1.0625", "2.4375", "3.8125", "4.6875", "0.3793"]  # buffer, literal, weight


def test_tensor_constants_go_only_when_asked_and_the_log_stays_readable(tmp_path: Path) -> None:
    """Frozen weights and literal tensors (real capture): kept by default, every number
    zeroed with ``--constants`` while shapes, md5s and the report's figures stay."""
    (log,) = FROZEN.glob("*.log")
    text = log.read_text()
    assert all(v in text for v in FROZEN_VALUES)
    assert "register_buffer('_frozen_param" in text  # values printed in a runnable repro
    kept, gone = tmp_path / "kept.log", tmp_path / "gone.log"
    assert run("redact", log, "-o", kept).returncode == 0
    assert all(v in kept.read_text() for v in FROZEN_VALUES)
    result = run("redact", log, "-o", gone, "--constants", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["logs"][0]["counts"]["constants"] > 0
    redacted = gone.read_text()
    # inductor folds small constants into its kernels' code: literals of code, which stay
    outside_kernels = [ln for ln in redacted.splitlines() if "static_cast<float>(" not in ln]
    assert not [v for v in FROZEN_VALUES if any(v in ln for ln in outside_kernels)]
    assert re.search(r"tensor\(\[\[0\., +0\.\],\n\t +\[0\., +0\.\]\]", redacted)  # still 2x2
    assert redacted.count("\n") == text.count("\n")
    stats = tlparse_stats(gone, tmp_path / "tl")
    assert stats == tlparse_stats(log, tmp_path / "tl0") and "fail_payload_md5" not in stats
    a, b = run("summary", "--json", log), run("summary", "--json", gone)
    assert _figures(a.stdout) == _figures(b.stdout)
    found = run("check", gone, "--constants")
    assert found.returncode == 0, found.stdout  # what redact zeroed is not found again
    assert run("check", kept, "--keep", "paths,names,secrets,source", "--constants").returncode == 1


def test_tensor_values_in_every_form_torch_prints_them() -> None:
    r = TextRedactor(Options(paths=False, names=False, secrets=False, source=False, constants=True))
    text = (
        "w = tensor([[ 0.6037, -1.0e-05],\n        [nan, -inf]], requires_grad=True)\n"
        "c = torch.tensor([3.25, 4.75]); s = tensor(-7, dtype=torch.int64)\n"
        '"TensorMetadataAndValues(tensor_metadata=..., values=[1.5, 2.5])"\n'
        "reader.tensor(buf0, (3, 2))  # arg3_1; x3 = tensor_3(2.5)\n"
    )
    out, changes = r.redact(text, lambda _: False, lines=True)
    assert out == (
        "w = tensor([[ 0., 0.],\n        [0., 0.]], requires_grad=True)\n"
        "c = torch.tensor([0., 0.]); s = tensor(0., dtype=torch.int64)\n"
        '"TensorMetadataAndValues(tensor_metadata=..., values=[0., 0.])"\n'
        "reader.tensor(buf0, (3, 2))  # arg3_1; x3 = tensor_3(2.5)\n"
    )
    assert [(c.line, c.what) for c in changes] == [
        (1, "4 value(s) of a tensor"),
        (3, "2 value(s) of a tensor"),
        (3, "1 value(s) of a tensor"),
        (4, "2 value(s) of a tensor"),
    ]


def test_a_folder_of_ranks_keeps_its_names_and_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "ranks"
    result = run("redact", RANKS, "-o", out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in RANKS.iterdir())
    a, b = run("summary", "--json", RANKS), run("summary", "--json", out)
    assert _figures(a.stdout) == _figures(b.stdout)  # rank classes, divergence too


def test_bad_input_is_one_line_and_status_2(tmp_path: Path) -> None:
    for args in (
        ("check", tmp_path / "missing.log"),
        ("redact", SIMPLE_LOG, "-o", tmp_path / "x.log", "--keep", "colours"),
        ("redact", SIMPLE_LOG, "-o", SIMPLE_LOG),
    ):
        result = run(*args)
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, args
        assert "Traceback" not in result.stderr


def test_the_bundle_holds_nothing_planted(planted: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.zip"
    result = run("bundle", planted, "-o", out, "-q")
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        assert names == sorted(names)
        assert "README.txt" in names and "logs/trace-0.log" in names
        assert any(n.startswith("report/") and n.endswith("index.html") for n in names)
        leaks = {n: s for n in names for s in PLANTED if s.encode() in z.read(n)}
        readme = z.read("README.txt").decode()
    assert leaks == {}
    assert "lines of source:" in readme and "~/project" in readme
    again = tmp_path / "again.zip"
    assert run("bundle", planted, "-o", again, "-q").returncode == 0
    with zipfile.ZipFile(again) as z:  # the same log, the same logs and README
        assert z.read("logs/trace-0.log") == zipfile.ZipFile(out).read("logs/trace-0.log")


# -- the rules ---------------------------------------------------------------------------------


def test_folders_get_stable_names() -> None:
    paths = PathMap()
    assert paths.map("/home/alice/proj", False) == "~/project"
    assert paths.map("/home/alice/proj/sub", False) == "~/project/sub"
    assert paths.map("/srv/ci/checkout", False) == "~/project2"
    assert paths.map("/home/alice/.venv/lib/python3.11/site-packages/torch", False) == (
        "~/env/lib/python3.11/site-packages/torch"
    )
    assert paths.map("/home/alice", False) == "~"
    assert paths.map("/home/alice/proj", False) == "~/project"  # again: the same name
    assert paths.names == {"alice"}
    assert paths.map("C:\\\\Users\\\\bob\\\\work", True) == "~\\\\project3"
    assert paths.shorten("# proj/model.py:3 in f")[0] == "# project/model.py:3 in f"


def test_library_code_stays_and_the_users_goes() -> None:
    finder = SourceFinder({0: "/x/site-packages/torch/_dynamo/a.py", 1: "/home/a/m.py"})
    text = (
        '{"stack": [{"line": 1, "filename": 1, "loc": "y = f(\\"k\\")"}, '
        '{"line": 2, "filename": 0, "loc": "keep()"}]}'
    )
    out, edits = finder.remove(text, True)
    assert json.loads(out)["stack"][0]["loc"] == SOURCE_REMOVED
    assert json.loads(out)["stack"][1]["loc"] == "keep()" and len(edits) == 1


def test_redacted_text_keeps_its_lines_and_its_json() -> None:
    redactor = TextRedactor(Options(local_names=False))
    text = json.dumps(
        {"e": f'File "{PLANTED_PATH}", line 3, in f\n    {PLANTED_CODE}\n', "token": TOKEN}
    )
    out, changes = redactor.redact(text, True, lines=True)
    expected = f'File "~/project/model.py", line 3, in f\n    {SOURCE_REMOVED}\n'
    assert json.loads(out)["e"] == expected
    assert {c.kind for c in changes} == {"paths", "secrets", "source"}
    assert "alice" in redactor.names


BUNDLED = sorted(
    p.relative_to(DATA).as_posix()
    for p in DATA.rglob("*.log*")
    if "expected" not in p.parts and p.suffix in (".log", ".gz")
)


@pytest.mark.corpus
@pytest.mark.tlparse
@pytest.mark.parametrize(
    "log",
    # every eighth in the suite (CI), every one in ``nox -s corpus-builders``
    [
        pytest.param(log, marks=() if i % 8 == 0 else pytest.mark.corpus_slow)
        for i, log in enumerate(BUNDLED)
    ],
)
def test_every_bundled_log_redacts_and_tlparse_reads_it(log: str, tmp_path: Path) -> None:
    """Every bundled log: redacted with its own check clean, and tlparse 0.4.3 reads it with
    the same figures as the original (no md5 or JSON failure that was not there before)."""
    src = DATA / log
    out = tmp_path / src.name
    result = run("redact", src, "-o", out)
    assert result.returncode == 0, result.stdout + result.stderr
    before = tlparse_stats(src, tmp_path / "before")
    after = tlparse_stats(out, tmp_path / "after")
    assert after.get("fail_payload_md5", 0) <= before.get("fail_payload_md5", 0)
    assert after.get("fail_json", 0) <= before.get("fail_json", 0)
    assert sum(after.values()) == sum(before.values())
