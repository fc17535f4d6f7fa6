"""What the build and the CLI print is data too: no input reaches a console raw.

CI logs are public and their runners read workflow commands (``::error ...::``) from the
output; terminals obey escape sequences; bidirectional format characters make text read
differently than it is.  Names carrying each such character go through every print path:
``sphinx-torchtrace diff``, ``summary``, ``build``, and the warnings of a docs build with
their locations.  Every character of :data:`CONSOLE_UNSAFE` must arrive as an escape, and
no output line may start with text from an input.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sphinx_torchtrace.site.characters import CONSOLE_UNSAFE, console_json, console_text

from .conftest import DATA, SiteMaker, copy_testroot
from .tools.hostile_log import format_record, read_records

PAIR = DATA / "captured" / "pairs" / "compile_error"
#: One of each kind of character a console must not receive raw, in a function's name.
HOSTILE = (
    "clip\n::error file=conf.py,line=1::pwned\r\x1b[2K\x1b[32mOK\x1b]0;title\x07"
    "\u202eevil\u200b\u2066x\u2069\x85\x9b\x7f\ufeffend"
)
UNSAFE = re.compile(f"[{CONSOLE_UNSAFE}]")
SPHINX_COLOURS = re.compile("\x1b\\[(?:91|39;49;00)m")


def hostile_copy(log: Path, out: Path) -> Path:
    """The log with the compiled function's name (``clip``) replaced by :data:`HOSTILE` in
    every envelope: metrics, stacks, reasons."""

    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("clip", HOSTILE)
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value

    records = read_records(log)
    for record in records:
        record.envelope = rename(record.envelope)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(format_record(r) for r in records), encoding="utf-8")
    return out


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sphinx_torchtrace", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_console_safe(output: str) -> None:
    """Only line feeds end lines; nothing raw of the unsafe set; no line an input's."""
    for line in output.split("\n"):
        assert not UNSAFE.search(line), ascii(line)
        assert not line.lstrip().startswith("::"), line  # a workflow command
        assert not line.startswith(("clip", HOSTILE[:4])), line


def test_console_text_escapes_each_unsafe_character_and_keeps_the_rest() -> None:
    for code in [
        *range(0x20),
        0x7F,
        *range(0x80, 0xA0),
        0x2028,
        0x2029,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
        0xFEFF,
    ]:
        shown = console_text(f"a{chr(code)}b")
        assert shown in (f"a\\x{code:02x}b", f"a\\u{code:04x}b"), ascii(shown)
    kept = "plain ASCII, é, ü, 漢字, emoji 🙂, a\\path"
    assert console_text(kept) == kept


def test_console_json_is_the_same_json_with_nothing_raw() -> None:
    data = {"name": HOSTILE, "lone": "\ud800x", "nested": [HOSTILE, {"k": "\u202e"}]}
    text = console_json(json.dumps(data, indent=2, ensure_ascii=False))
    assert json.loads(text) == data
    assert_console_safe(text)


@pytest.fixture(scope="module")
def hostile_pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("hostile-pair")
    (old,) = (PAIR / "baseline").glob("*.log")
    (new,) = (PAIR / "new").glob("*.log")
    return (
        hostile_copy(old, root / "baseline" / old.name),
        hostile_copy(new, root / "new" / new.name),
    )


def test_diff_prints_hostile_names_escaped(hostile_pair: tuple[Path, Path]) -> None:
    result = run("diff", *hostile_pair)
    assert result.returncode == 1, result.stderr  # the compile error is still found
    assert "\\x0a::error file=conf.py" in result.stdout  # shown, as an escape
    assert "\\u202eevil" in result.stdout and "\\x1b[2K" in result.stdout
    assert_console_safe(result.stdout)
    assert_console_safe(result.stderr)


def test_diff_json_keeps_the_exact_names(hostile_pair: tuple[Path, Path]) -> None:
    result = run("diff", *hostile_pair, "--json")
    assert_console_safe(result.stdout)
    names = {f["function"] for r in json.loads(result.stdout)["ranks"] for f in r["frames"]}
    assert HOSTILE in names


def test_summary_prints_nothing_raw(hostile_pair: tuple[Path, Path]) -> None:
    for args in ((hostile_pair[1],), (hostile_pair[1], "--json")):
        result = run("summary", *args)
        assert result.returncode == 0, result.stderr
        assert_console_safe(result.stdout + result.stderr)


def test_a_missing_path_is_said_escaped(tmp_path: Path) -> None:
    result = run("summary", tmp_path / "no\x1b[31mlog\n::error::x")
    assert result.returncode == 2
    assert_console_safe(result.stderr)


def broken_rank_folder(root: Path) -> Path:
    """A trace folder whose log has a hostile file name and one unreadable line."""
    folder = root / "traces"
    folder.mkdir(parents=True)
    (log,) = (PAIR / "new").glob("*.log")
    name = "dedicated_log_torch_trace_\x1b[32mOK\u202e\n::error file=conf.py::x.log"
    text = log.read_text(encoding="utf-8")
    (folder / name).write_text(
        text + "V1123 21:30:49.000000 1 x.py:1] {not json\n", encoding="utf-8"
    )
    return folder


def test_build_warnings_show_hostile_locations_escaped(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    srcdir = copy_testroot("simple", tmp_path / "site")
    broken_rank_folder(srcdir)
    (srcdir / "index.rst").write_text(
        "Hostile\n=======\n\n.. torchtrace:: traces\n   :name: hostile\n", encoding="utf-8"
    )
    app = make_site("simple", "html", srcdir=srcdir)
    # Sphinx's test app colours warnings (red, then reset): those codes are Sphinx's own
    warnings = SPHINX_COLOURS.sub("", app.warning.getvalue())  # type: ignore[attr-defined]
    assert "torchtrace.json" in warnings
    assert "\\x1b[32mOK\\u202e\\x0a::error" in warnings
    assert_console_safe(warnings)


def test_the_build_command_writes_no_colour_codes_to_a_file(tmp_path: Path) -> None:
    folder = broken_rank_folder(tmp_path)
    result = run("build", folder, "-o", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert "WARNING: the record's JSON does not parse" in result.stderr  # the warning is there
    assert "\x1b[" not in result.stderr  # not a terminal: no colour
    assert_console_safe(result.stdout + result.stderr)


#: A TORCH_COMPILE_DEBUG folder's entry, named to colour a terminal and start a workflow
#: command on a line of its own.
ENTRY = "notes\x1b[31mred\n::error file=conf.py::pwned\u202e.txt"


def test_every_form_of_warning_location_is_escaped() -> None:
    """A path, a node whose source is a path (a whole file), a ``(docname, line)`` pair:
    each is printed with its controls as escapes, as the message is."""
    from docutils import nodes

    from sphinx_torchtrace.sphinxext.warnings import console_location

    node = nodes.Element()
    node.source = f"/data/{ENTRY}"
    for location in (f"/data/{ENTRY}:3", Path(f"/data/{ENTRY}"), node, (ENTRY, 3)):
        shown = console_location(location)
        text = shown[0] if isinstance(shown, tuple) else shown
        assert not UNSAFE.search(text) and "\\x1b[31mred\\x0a::error" in text, ascii(shown)
    assert console_location(node) == console_text(f"/data/{ENTRY}:")  # Sphinx's "path:"
    assert console_location(None) is None


def test_debug_folder_entry_names_reach_sphinx_build_escaped(tmp_path: Path) -> None:
    """A real ``sphinx-build`` of a debug folder holding entries of hostile names: the
    warnings that name them (located at each entry) print no control of theirs raw, and
    no line starts with their text."""
    from .test_debug_dir import INFERENCE, RUN

    folder = tmp_path / "data" / "torch_compile_debug"
    shutil.copytree(INFERENCE, folder)
    graph = folder / RUN / "torchinductor" / "model__0_inference_0.0"
    (graph / ENTRY).write_text("mine", encoding="utf-8")  # a file torch does not write
    (folder / RUN / ENTRY).mkdir()  # and a folder
    srcdir = copy_testroot("simple", tmp_path / "site")
    (srcdir / "index.rst").write_text(
        "Debug\n=====\n\n.. torchtrace:: ../data/torch_compile_debug\n   :name: dbg\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-q",
            "-b",
            "html",
            "-D",
            "show_warning_types=1",
            str(srcdir),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    located = [line for line in result.stderr.split("\n") if "[torchtrace.debug_unknown]" in line]
    assert len(located) == 2, result.stderr
    for line in located:  # the location, then the message: both name the entry, escaped
        where, _, message = line.partition(": WARNING: ")
        assert "notes\\x1b[31mred\\x0a::error file=conf.py::pwned\\u202e.txt" in where, line
        assert "\\x1b[31mred\\n::error" in message, line  # quoted as Python writes it
    # Sphinx colours its own warnings where CI=true or FORCE_COLOR is set: those escapes
    # are Sphinx's, around the line; any other is the input's
    assert_console_safe(SPHINX_COLOURS.sub("", result.stdout + result.stderr))
