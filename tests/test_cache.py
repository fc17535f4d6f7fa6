"""The on-disk model cache: exact round trips of every shared log, and no trust in the cache file.

A rebuilt doc set must see the same model from the cache as from parsing,
and a damaged or hostile cache file must only cost a re-parse.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pytest

from sphinx_torchtrace.trace.compile_id import CompileId
from sphinx_torchtrace.trace.diagnostics import TraceReadError
from sphinx_torchtrace.trace.inputs import cache
from sphinx_torchtrace.trace.inputs.loader import load_trace, read_log
from sphinx_torchtrace.trace.model import Artifact, Compile, RankTrace, StackFrame, StackTrieNode
from sphinx_torchtrace.trace.reader import Payload

SHARED = Path(__file__).parent / "data" / "shared"
LOGS = sorted(p for p in SHARED.rglob("*") if p.is_file() and p.suffix != ".md")
SMALL = SHARED / "simple" / "dedicated_log_torch_trace_5aek85xk.log"
MULTI_RANK = SHARED / "tlparse-inputs" / "inputs" / "multi_rank_logs"


# -- helpers -------------------------------------------------------------------


def snapshot(rank: RankTrace) -> Any:
    """The whole model as plain values: payloads by location and text, trie compiles by index.

    ``Payload`` holds its store, which compares by identity, so dataclass
    equality cannot compare two models read at different times.
    """
    index = {id(c): i for i, c in enumerate(rank.compiles)}

    def snap(o: Any) -> Any:
        if isinstance(o, Payload):
            fields = [getattr(o, f.name) for f in dataclasses.fields(o) if f.name != "store"]
            return ("Payload", *fields, o.read_bytes())
        if isinstance(o, StackTrieNode):
            compiles = [index[id(c)] for c in o.compiles]  # KeyError: not the same objects
            return ("Node", snap(o.frame), [snap(c) for c in o.children], compiles)
        if isinstance(o, CompileId):
            return ("CompileId", str(o))
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return (
                type(o).__name__,
                {f.name: snap(getattr(o, f.name)) for f in dataclasses.fields(o)},
            )
        if isinstance(o, (list, tuple)):
            return (type(o).__name__, [snap(v) for v in o])
        if isinstance(o, dict):
            return (type(o).__name__, {k: snap(v) for k, v in o.items()})
        assert isinstance(o, (str, int, float, bool, type(None))), type(o)
        return (type(o).__name__, o)

    return snap(rank)


def assert_same_model(got: RankTrace, want: RankTrace) -> None:
    """Equal in every field, with the trie's compiles the very objects of ``got.compiles``."""
    assert [c.label for c in got.compiles] == [c.label for c in want.compiles]
    assert [c.status for c in got.compiles] == [c.status for c in want.compiles]
    assert got.diagnostics == want.diagnostics
    assert got.stats == want.stats and isinstance(got.stats, Counter)
    for trie in (got.stack_trie, got.unknown_stack_trie):
        for node in walk_trie(trie):
            for c in node.compiles:
                assert any(c is other for other in got.compiles)
    for a, b in zip(got.compiles, want.compiles, strict=True):
        assert [x.text() for x in a.artifacts] == [x.text() for x in b.artifacts]
        assert [m.data for m in a.metrics] == [m.data for m in b.metrics]
        assert [x.kernels for x in a.artifacts] == [x.kernels for x in b.artifacts]
    assert snapshot(got) == snapshot(want)


def walk_trie(node: StackTrieNode) -> Iterator[StackTrieNode]:
    yield node
    for child in node.children:
        yield from walk_trie(child)


class Counting:
    """A build function that counts its calls (a cache hit must not call it)."""

    def __init__(self, log: Path | str, **kwargs: Any) -> None:
        self.log = log
        self.kwargs = kwargs
        self.calls = 0

    def __call__(self) -> RankTrace:
        self.calls += 1
        return read_log(self.log, **self.kwargs)


def cache_files(cache_dir: Path) -> list[Path]:
    return sorted(cache_dir.glob("*.json*"))


# -- the codec -----------------------------------------------------------------


def test_codec_covers_the_model() -> None:
    """Building the model's codec fails loudly when a model field has an unsupported type."""
    codec = cache.model_codec()
    assert len(codec.fingerprint) == 10
    assert cache.cache_version().startswith(f"p{cache.PARSER_VERSION}-")


@dataclass
class _WithSet:
    values: set[int]


@dataclass
class _WithObject:
    value: object


@dataclass
class _Other:
    x: int


@dataclass
class _WithDataclassUnion:
    value: _Other | _WithSet


@dataclass
class _WithFloatKeys:
    value: dict[float, int]


@pytest.mark.parametrize("cls", [_WithSet, _WithObject, _WithDataclassUnion, _WithFloatKeys])
def test_unsupported_types_fail_loudly(cls: type) -> None:
    with pytest.raises(cache.UnsupportedTypeError):
        cache.to_json(None, cls)


@dataclass(frozen=True)
class _Inner:
    name: str
    ratio: float = 0.5


@dataclass
class _Everything:
    pair: tuple[int, str]
    many: tuple[_Inner, ...]
    counts: Counter[str]
    by_int: dict[int, list[_Inner | None]]
    status: Literal["ok", "error"]
    either: int | str
    maybe: _Inner | None
    any_json: Any
    cid: CompileId
    children: list[_Everything] = field(default_factory=list)


def test_generic_codec_round_trip() -> None:
    value = _Everything(
        pair=(1, "a"),
        many=(_Inner("x"), _Inner("y", 2.0)),
        counts=Counter({"a": 2}),
        by_int={3: [_Inner("z"), None], -1: []},
        status="error",
        either="text",
        maybe=None,
        any_json={"k": [1, 2.5, None, "\udcff"]},
        cid=CompileId.parse("[!1/2/3_4]"),
        children=[_Everything((0, ""), (), Counter(), {}, "ok", 7, _Inner("c"), None, CompileId())],
    )
    data = json.loads(json.dumps(cache.to_json(value, _Everything)))
    back = cache.from_json(data, _Everything)
    assert back == value
    assert type(back.counts) is Counter and type(back.pair) is tuple and type(back.many) is tuple


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.__setitem__(0, [1, 2, 3]),  # tuple of the wrong length
        lambda d: d.__setitem__(2, {"a": "2"}),  # Counter value not an int
        lambda d: d.__setitem__(3, {"01": []}),  # int key not written as Python writes it
        lambda d: d.__setitem__(3, {"x": []}),
        lambda d: d.__setitem__(4, "fine"),  # not one of the literals
        lambda d: d.__setitem__(5, 1.5),  # not int | str
        lambda d: d.__setitem__(5, True),  # a bool is no int here
        lambda d: d.__setitem__(6, ["a", "b", "c"]),  # a dataclass with too many fields
        lambda d: d.__setitem__(8, "[x/y]"),  # not a compile id
        lambda d: d.__setitem__(8, 5),
        lambda d: d.__setitem__(9, {}),
        lambda d: d.pop(),
    ],
)
def test_generic_codec_rejects_wrong_types(mutate: Callable[[list[Any]], None]) -> None:
    value = _Everything((1, "a"), (), Counter(), {}, "ok", 1, None, None, CompileId())
    data = json.loads(json.dumps(cache.to_json(value, _Everything)))
    mutate(data)
    with pytest.raises(cache.CacheFormatError):
        cache.from_json(data, _Everything)


def test_compile_ids_survive_their_text() -> None:
    for cid in (
        CompileId(),
        CompileId(None, 0, 0, 0),
        CompileId(None, 1, 2, 3),
        CompileId(4, None, None, 0),
        CompileId(4, 5, 6, 7),
        CompileId(None, None, 3, 0),
    ):
        text = cache.to_json(cid, CompileId)
        assert cache.from_json(text, CompileId) == cid


def test_only_known_objects_are_shared() -> None:
    """Identity the cache does not restore must not matter: only value-like objects are shared.

    ``StackTrieNode.compiles`` is restored as references; everything else
    reachable twice must be a value nobody mutates.  A new shared kind fails
    here: add it to ``cache.REFERENCE_FIELDS`` or to the values below.
    """
    values = (StackFrame, CompileId, Payload, dict, list)
    for log in LOGS:
        rank = read_log(log)
        seen: dict[int, str] = {}  # id → where it was met first
        stack: list[tuple[Any, str]] = [(rank, "")]
        while stack:
            o, where = stack.pop()
            if isinstance(o, (str, int, float, bool, type(None))):
                continue
            if id(o) in seen:
                both = {where, seen[id(o)]}
                if both == {"RankTrace.compiles", "StackTrieNode.compiles"}:
                    assert isinstance(o, Compile)
                else:
                    assert isinstance(o, values), (log, both, type(o))
                continue
            seen[id(o)] = where
            if dataclasses.is_dataclass(o):
                for f in dataclasses.fields(o):
                    if f.name != "store":
                        stack.append((getattr(o, f.name), f"{type(o).__name__}.{f.name}"))
            elif isinstance(o, (list, tuple)):
                stack.extend((v, where) for v in o)
            elif isinstance(o, dict):
                stack.extend((v, where) for v in o.values())


# -- round trips ---------------------------------------------------------------


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(SHARED)))
def test_round_trip_every_shared_log(log: Path, tmp_path: Path) -> None:
    build = Counting(log)
    first = cache.load_cached(log, tmp_path, build)
    assert build.calls == 1
    [written] = cache_files(tmp_path)
    sha256, _ = cache.file_sha256(log)
    assert written.name == f"{sha256}-{cache.cache_version()}.json"
    second = cache.load_cached(log, tmp_path, build)
    assert build.calls == 1, "the second load parsed the log again"
    assert second is not first
    assert_same_model(second, first)
    assert_same_model(second, read_log(log))


def test_cached_model_moves_to_the_current_path(tmp_path: Path) -> None:
    """The same log elsewhere: one cache entry, the new path shown, payloads read from there."""
    log = SHARED / "tlparse-inputs" / "inputs" / "simple_corrupted_json.log"
    cache_dir = tmp_path / "cache"
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    shutil.copy(log, a / "x.log")
    shutil.copy(log, b / "x.log")
    first = read_log(a / "x.log", display_root=tmp_path, cache_dir=cache_dir)
    assert first.path == os.path.join("a", "x.log") and first.diagnostics
    os.unlink(a / "x.log")
    build = Counting(b / "x.log", display_root=tmp_path)
    moved = cache.load_cached(
        b / "x.log", cache_dir, build, display_path=os.path.join("b", "x.log")
    )
    assert build.calls == 0
    assert_same_model(moved, build())
    assert {d.path for d in moved.diagnostics} == {os.path.join("b", "x.log")}


def test_gzip_log_caches_its_payloads(tmp_path: Path) -> None:
    log = tmp_path / "trace.log.gz"
    log.write_bytes(gzip.compress(SMALL.read_bytes()))
    build = Counting(log)
    first = cache.load_cached(log, tmp_path / "cache", build)
    [written] = cache_files(tmp_path / "cache")
    assert written.name.endswith(".json.gz")
    second = cache.load_cached(log, tmp_path / "cache", build)
    assert build.calls == 1
    assert_same_model(second, first)
    plain = read_log(SMALL)
    assert plain.sha256 != second.sha256  # each names its own file's bytes
    plain.path, plain.sha256 = second.path, second.sha256
    assert second.file_size == log.stat().st_size < plain.file_size  # the gzip file
    plain.file_size = second.file_size
    assert_same_model(second, plain)  # payload bytes included
    assert second.compiles[0].artifacts[0].payload is not None
    assert second.compiles[0].artifacts[0].payload.store.compressed


def test_load_trace_uses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = load_trace(MULTI_RANK)
    load_trace(MULTI_RANK, cache_dir=tmp_path)
    assert len(cache_files(tmp_path)) == len(plain.ranks)

    def no_parsing(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("parsed although cached")

    monkeypatch.setattr("sphinx_torchtrace.trace.inputs.loader.RankBuilder", no_parsing)
    cached = load_trace(MULTI_RANK, cache_dir=tmp_path)
    assert [r.rank for r in cached.ranks] == [r.rank for r in plain.ranks]
    for got, want in zip(cached.ranks, plain.ranks, strict=True):
        assert_same_model(got, want)
    assert cached.diagnostics == plain.diagnostics


def test_borrowed_strings_are_another_cache_entry(tmp_path: Path) -> None:
    alone = read_log(SMALL, cache_dir=tmp_path)
    borrowed = read_log(SMALL, cache_dir=tmp_path, strings={123456: "/borrowed.py"})
    assert len(cache_files(tmp_path)) == 2
    assert 123456 in borrowed.strings and 123456 not in alone.strings
    again = read_log(SMALL, cache_dir=tmp_path, strings={123456: "/borrowed.py"})
    assert_same_model(again, borrowed)


def test_unreadable_log_raises_as_uncached(tmp_path: Path) -> None:
    with pytest.raises(TraceReadError):
        read_log(tmp_path / "missing.log", cache_dir=tmp_path)


def test_unwritable_cache_dir_only_costs_the_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    build = Counting(SMALL)
    rank = cache.load_cached(SMALL, blocker / "cache", build)
    assert build.calls == 1 and rank.compiles


# -- invalidation and distrust ---------------------------------------------------


def test_changed_log_is_parsed_again(tmp_path: Path) -> None:
    log = tmp_path / "trace.log"
    shutil.copy(SMALL, log)
    build = Counting(log)
    before = cache.load_cached(log, tmp_path / "cache", build)
    with open(log, "ab") as f:
        f.write(b'V1121 11:50:48.850000 5896 torch/_dynamo/utils.py:1] {"appended_event": {}}\n')
    after = cache.load_cached(log, tmp_path / "cache", build)
    assert build.calls == 2
    assert after.stats["appended_event"] == 1 and "appended_event" not in before.stats
    assert len(cache_files(tmp_path / "cache")) == 2
    cache.load_cached(log, tmp_path / "cache", build)
    assert build.calls == 2


def _cache_file(tmp_path: Path) -> tuple[Path, Counting]:
    build = Counting(SMALL)
    cache.load_cached(SMALL, tmp_path, build)
    [written] = cache_files(tmp_path)
    return written, build


def _assert_rebuilt(tmp_path: Path, written: Path, build: Counting) -> None:
    """The bad file was ignored (the log parsed), rewritten, and is good afterwards."""
    calls = build.calls
    rank = cache.load_cached(SMALL, tmp_path, build)
    assert build.calls == calls + 1
    assert_same_model(rank, read_log(SMALL))
    cache.load_cached(SMALL, tmp_path, build)
    assert build.calls == calls + 1, "the bad cache file was not rewritten"
    assert cache_files(tmp_path) == [written]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b"\x1f\x8b not gzip",
        gzip.compress(b"[1, 2", mtime=0),
        b"\xff\xfe not utf-8",
        b"[" * 100_000 + b"]" * 100_000,
        b"null",
        b'"a string"',
    ],
)
def test_corrupt_cache_file_is_ignored_and_rewritten(tmp_path: Path, content: bytes) -> None:
    written, build = _cache_file(tmp_path)
    written.write_bytes(content)
    _assert_rebuilt(tmp_path, written, build)


def _model(doc: dict[str, Any]) -> list[Any]:
    model: list[Any] = doc["model"]
    return model


def _field(name: str) -> int:
    return [f.name for f in dataclasses.fields(RankTrace)].index(name)


def _first_payload(doc: dict[str, Any]) -> list[Any]:
    compiles = _model(doc)[_field("compiles")]
    artifacts_at = [f.name for f in dataclasses.fields(Compile)].index("artifacts")
    payload_at = [f.name for f in dataclasses.fields(Artifact)].index("payload")
    payload: list[Any] = compiles[0][artifacts_at][0][payload_at]
    return payload


def _trie_compiles(doc: dict[str, Any]) -> list[Any]:
    node = _model(doc)[_field("stack_trie")]
    while not node[2]:
        node = node[1][0]
    compiles: list[Any] = node[2]
    return compiles


HOSTILE: dict[str, Callable[[dict[str, Any]], None]] = {
    "model not a list": lambda d: d.__setitem__("model", 5),
    "model too short": lambda d: _model(d).pop(),
    "model too long": lambda d: _model(d).append(None),
    "compiles a string": lambda d: _model(d).__setitem__(_field("compiles"), "x"),
    "compile a dict": lambda d: _model(d)[_field("compiles")].__setitem__(0, {"id": "[0/0]"}),
    "path a number": lambda d: _model(d).__setitem__(_field("path"), 1),
    "size a float": lambda d: _model(d).__setitem__(_field("size"), 1.5),
    "size a bool": lambda d: _model(d).__setitem__(_field("size"), True),
    "stats not ints": lambda d: _model(d).__setitem__(_field("stats"), {"a": "b"}),
    "strings key not int": lambda d: _model(d).__setitem__(_field("strings"), {"x": "y"}),
    "strings value not str": lambda d: _model(d).__setitem__(_field("strings"), {"1": 2}),
    "bad status": lambda d: _model(d)[_field("compiles")][0].__setitem__(
        [f.name for f in dataclasses.fields(Compile)].index("status"), "hacked"
    ),
    "bad compile id": lambda d: _model(d)[_field("compiles")][0].__setitem__(0, "[x/y]"),
    "payload negative": lambda d: _first_payload(d).__setitem__(0, -5),
    "payload past the end": lambda d: _first_payload(d).__setitem__(1, 10**12),
    "payload size > length": lambda d: _first_payload(d).__setitem__(2, 10**9),
    "payload not a list": lambda d: _first_payload(d).clear(),
    "trie index out of range": lambda d: _trie_compiles(d).__setitem__(0, 10**6),
    "trie index negative": lambda d: _trie_compiles(d).__setitem__(0, -1),
    "trie index a string": lambda d: _trie_compiles(d).__setitem__(0, "0"),
    "inline payloads for a plain log": lambda d: d.__setitem__("inline", [[0, "x"]]),
    "inline not a list": lambda d: d.__setitem__("inline", {}),
    "other version": lambda d: d.__setitem__("version", "p0"),
    "other log": lambda d: d.__setitem__("sha256", "0" * 64),
    "no format": lambda d: d.pop("format"),
    "nested too deeply": lambda d: d.__setitem__("model", json.loads("[" * 500 + "]" * 500)),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_cache_file_is_never_trusted(tmp_path: Path, name: str) -> None:
    written, build = _cache_file(tmp_path)
    doc = json.loads(written.read_bytes())
    HOSTILE[name](doc)
    written.write_text(json.dumps(doc))
    sha256, _ = cache.file_sha256(SMALL)
    with pytest.raises(cache.CacheFormatError):
        cache.decode_rank(
            doc, str(SMALL), compressed=False, size=SMALL.stat().st_size, sha256=sha256
        )
    _assert_rebuilt(tmp_path, written, build)


def test_every_mistyped_leaf_is_rejected_or_harmless(tmp_path: Path) -> None:
    """Replace each value of a cache document in turn: the decoder raises only CacheFormatError."""
    log = SHARED / "tlparse-inputs" / "inputs" / "comp_failure.log"
    sha256, _ = cache.file_sha256(log)
    doc = cache.encode_rank(read_log(log), sha256)
    size = log.stat().st_size

    def positions(o: Any) -> Iterator[tuple[Any, Any]]:
        if isinstance(o, list):
            for i, v in enumerate(o):
                yield o, i
                yield from positions(v)
        elif isinstance(o, dict):
            for k, v in o.items():
                yield o, k
                yield from positions(v)

    tried = 0
    for container, key in list(positions(doc)):
        original = container[key]
        wrongs: tuple[Any, ...] = ({"k": 1}, [], "x", -1, 1.5, None, True)
        for wrong in wrongs:
            if type(wrong) is type(original):
                continue
            container[key] = wrong
            try:
                cache.decode_rank(doc, str(log), compressed=False, size=size, sha256=sha256)
            except cache.CacheFormatError:
                pass
            tried += 1
        container[key] = original
    assert tried > 1000
