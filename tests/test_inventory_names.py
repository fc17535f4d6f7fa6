"""Names stay names: no string of a log changes how ``objects.inv`` parses, and distinct
objects have distinct names.

Another project links this site through intersphinx, which reads ``objects.inv`` line by
line and splits each line at whitespace: a graph name with a space in it could write an
entry of another domain pointing to another host into every project that links the site.
Object names are one token (each character a name cannot hold written ``#uXXXX``,
one-to-one), and two graph breaks that only a lossy slug would tell apart get two objects.
The site of a real log with such names is built, its inventory read back with Sphinx's
own reader (:mod:`tests.tools.inventory`), and each hostile object linked by its role.
"""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sphinx_torchtrace.site.naming import (
    break_object_name,
    is_object_name,
    item_name,
    label_name,
    label_segment,
    name_text,
    shown_name,
)
from sphinx_torchtrace.site.plan import plan_trace
from sphinx_torchtrace.trace import load_trace

from .conftest import SiteMaker, copy_testroot, warnings_of
from .tools.hostile_names import BREAK_TYPES, GRAPH_NAMES, write_hostile_names_log
from .tools.inventory import inventory_lines, inventory_problems, read_inventory

LABEL = "my run $x std:label http://evil.example/"
#: Whitespace of every kind intersphinx's reader splits at, and what else a name cannot hold.
SPLITTING = " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u3000"


@given(st.text())
def test_a_logged_name_is_one_token_and_one_to_one(text: str) -> None:
    escaped = name_text(text)
    assert is_object_name(escaped) and "/" not in escaped
    assert re.search(r"\s", escaped) is None
    assert _unescape(escaped) == text


@given(st.text(), st.text(), st.integers(1, 5), st.integers(1, 5))
def test_distinct_names_and_occurrences_never_meet(a: str, b: str, m: int, n: int) -> None:
    if (a, m) != (b, n):
        assert item_name(a, m) != item_name(b, n)


def test_every_splitting_character_is_escaped() -> None:
    for c in SPLITTING + "$<>`\\/\ufffe\uffff\u202e\ud800":
        assert name_text(f"a{c}b") == f"a#u{ord(c):04x}b", ascii(c)


@given(st.text(min_size=1))
def test_a_label_heads_names_as_one_token(label: str) -> None:
    name = label_name(label)
    assert len(name) == len(label) and is_object_name(name) and "/" not in name


def test_labels_that_differ_keep_names_apart_or_clash() -> None:
    """A label's name is lossy where its folder is: two labels of one name share a folder,
    which the directive refuses (``torchtrace.label``)."""
    for a, b in [("a b", "a_b"), ("a/b", "a$b"), ("A\nB", "a b")]:
        assert label_name(a) != label_name(b) or label_segment(a) == label_segment(b)


def test_breaks_that_share_a_slug_are_two_objects() -> None:
    names = {
        break_object_name("run", t)
        for t in ("Unsupported call", "unsupported: call!", "Unsupported  call", "UNSUPPORTED CALL")
    }
    assert len(names) == 4
    assert all(re.fullmatch(r"run/gb/unsupported-call--h[0-9a-f]{10}", n) for n in names)
    assert break_object_name("my run", "GB0025") == "my_run/GB0025"


def test_pages_show_a_name_as_logged_but_what_no_page_shows_raw() -> None:
    """Spaces and ``$`` are escaped for objects.inv's sake only: titles show them; a line
    break, a control or a format character stays an escape."""
    assert shown_name(name_text("a b$<x>/`y`\\")) == "a b$<x>/`y`\\"
    assert shown_name(name_text("a\nb\x1b\u202e#u0020")) == "a#u000ab#u001b#u202e##u0020"
    assert shown_name(item_name("q#", 2)) == "q###2"


def _unescape(name: str) -> str:
    return re.sub(
        r"#u([0-9a-f]{4})|##", lambda m: chr(int(m.group(1), 16)) if m.group(1) else "#", name
    )


def _site(make_site: SiteMaker, tmp_path: Path, roles: str = "") -> tuple[Path, str]:
    """The hostile log's HTML site, every graph on a page of its own; its output folder and
    warnings."""
    srcdir = copy_testroot("simple", tmp_path / "site")
    write_hostile_names_log(tmp_path)
    (srcdir / "index.rst").write_text(
        f"Hostile names\n=============\n\n.. torchtrace:: ../hostile_names.log\n"
        f"   :name: {LABEL}\n\nBreaks:\n\n.. torchtrace-graph-breaks::\n\n{roles}",
        encoding="utf-8",
    )
    app = make_site(
        "simple",
        "html",
        srcdir=srcdir,
        confoverrides={"torchtrace_fold_bytes": 0, "nitpicky": True},
    )
    return Path(app.outdir), warnings_of(app)


def test_hostile_names_write_no_inventory_entry_and_every_object_is_linkable(
    make_site: SiteMaker, tmp_path: Path
) -> None:
    plan = plan_trace(LABEL, load_trace(write_hostile_names_log(tmp_path)), "torchtrace")
    (frame,) = [f for f in plan.frames if not f.compile.id.is_unknown]
    graphs = [g.name for g in frame.graphs if g.artifact.name in GRAPH_NAMES]
    breaks = [break_object_name(LABEL, t) for t in BREAK_TYPES[:2]]
    assert len(set(graphs)) == len(GRAPH_NAMES) and len(set(breaks)) == 2
    # each object by its name, as a reader of the docs would write it in a role
    roles = "".join(f"* :torchtrace:graph:`{n}`\n" for n in graphs)
    roles += "".join(f"* :torchtrace:gb:`{n}`\n" for n in breaks)
    outdir, warnings = _site(make_site, tmp_path, roles)
    assert "WARNING" not in warnings.replace("[torchtrace.path]", ""), warnings

    assert inventory_problems(outdir, [label_name(LABEL)]) == []
    read = read_inventory(outdir)
    assert all(role in {"std:doc", "std:label"} or is_object_name(name) for role, name in read)
    assert not [k for k, uri in read.items() if k[1] == "pwned" or "://" in uri]
    assert {("torchtrace:graph", n) for n in graphs} <= set(read)
    assert {("torchtrace:gb", n) for n in breaks} <= set(read)
    assert len(inventory_lines(outdir)) == len(read)  # one entry a line, none merged
    # each link lands on its own object's anchor; both breaks are listed
    index = (outdir / "index.html").read_text(encoding="utf-8")
    for role, name in [*(("graph", n) for n in graphs), *(("gb", n) for n in breaks)]:
        anchor = read[f"torchtrace:{role}", name].split("#", 1)[1]
        assert f'#{anchor}"' in index, name
    assert index.count("unsupported-call--h") >= 2


def test_every_entry_of_real_sites_lands_on_its_anchor(make_site: SiteMaker) -> None:
    """Real logs (graphs shown as an earlier compile's but for their numbers, in a fold;
    graph breaks; ranks): intersphinx reads exactly what the site wrote, and each entry's
    anchor is on its page (an object declared before a fold is anchored in its title)."""
    traces = {
        "limit": "corpus/decode_recompile_limit/dedicated_log_torch_trace_dke2he39.log",
        "breaks": "shared/graph_breaks/dedicated_log_torch_trace_051e7f1c.log",
        "ranks": "shared/tlparse-inputs/inputs/multi_rank_schedule",
    }
    page = "Real\n====\n\n" + "".join(
        f".. torchtrace:: @DATA@/{rel}\n   :name: {label}\n\n" for label, rel in traces.items()
    )
    app = make_site("simple", "html", pages={"index.rst": page})
    outdir = Path(app.outdir)
    assert inventory_problems(outdir, traces) == []
    read = read_inventory(outdir)
    assert sum(role == "torchtrace:gb" for role, _ in read) >= 3
    assert any(role == "torchtrace:graph" and name.startswith("limit/") for role, name in read)
