"""An on-disk cache of the model of one log, so that rebuilding docs from an unchanged log is cheap.

A cache file holds one :class:`RankTrace` as compact JSON, named
``<sha256 of the log>[-<variant>]-<version>.json``.  The version joins
:data:`PARSER_VERSION`, the package version and a fingerprint of the model's
dataclasses, so a model change is never read with an old layout.  Plain JSON
is about a fifth of its log and gzip would make it 4x smaller but cost ~3 ms
per load and ~8 ms per write on a 5 MB log (a load is ~15 ms in all), so only
the caches of gzip logs are gzipped (``.json.gz``), like their logs.

Trace text is untrusted, and so is anything on disk: the format is JSON,
never pickle, and the decoder checks every value against the type hints of
the model.  A cache file that does not decode (corrupt, older, hostile) is
ignored and rewritten; the cache never raises to the user.

The codec is generic, driven by the dataclasses' type hints: nested
dataclasses (as lists of their fields), ``list`` / ``tuple`` / ``dict`` /
``Counter``, ``X | None``, unions of scalars, ``Literal``, ``Any`` (JSON as
it came from the log), :class:`CompileId` (its text) and :class:`Payload`
(its fields but the store, ``[offset, length, size, crlf]``, re-attached to a
new :class:`PayloadStore` of the log on load and checked against its size).
``StackTrieNode.compiles`` holds the same ``Compile`` objects as
``RankTrace.compiles``: it is written as indices into that list and read
back as the very same objects.  Any other type is an
:class:`UnsupportedTypeError` when the codec is built (tests catch it at
once; users just get no cache).

A cache holds no payload bytes, for gzip logs neither: their payloads are
offsets into the decompressed log, which the :class:`PayloadStore` of a
cached model decompresses (to a temporary file, at most ``max_bytes``) on its
first read.  So a cache file stays small, and loading one costs no memory for
payloads, whatever a log expands to.  Text from a log may hold lone
surrogates (legal in JSON): the cache writes ASCII JSON, where they are escapes.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import logging
import os
import tempfile
import types
import typing
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

from ..compile_id import CompileId
from ..model import Compile, RankTrace, StackTrieNode
from ..reader import DEFAULT_MAX_LOG_BYTES, FileDigest, Payload, PayloadStore, file_sha256

logger = logging.getLogger(__name__)

#: Bump whenever the builder fills the model differently for the same log.
#: (Changes to the model's *types* are caught by the schema fingerprint anyway.)
PARSER_VERSION = 6

#: What a cache file says it is, so that no other JSON is mistaken for one.
CACHE_FORMAT = "sphinx-torchtrace/rank-cache"

#: Gzip level of the caches of gzip logs: level 1 is nearly as small as 6, 3x faster to write.
GZIP_LEVEL = 1


#: Fields that hold references to objects owned by a list elsewhere in the same model:
#: (class, field) → table name.  They are written as indices into that table.
REFERENCE_FIELDS: dict[tuple[type, str], str] = {(StackTrieNode, "compiles"): "compiles"}
#: The fields that own those tables: (class, field) → table name.
TABLE_FIELDS: dict[tuple[type, str], str] = {(RankTrace, "compiles"): "compiles"}
_TABLE_TYPES: dict[str, type] = {"compiles": Compile}


class UnsupportedTypeError(TypeError):
    """The model has a field type the codec does not know: extend the codec, don't skip it."""


class CacheFormatError(ValueError):
    """A cache file (or part of one) does not decode to the model: it is ignored."""


# -- contexts ----------------------------------------------------------------


@dataclass
class _Encoding:
    """State of one encoding: table indices by object identity, compile id texts."""

    tables: dict[str, dict[int, int]] = field(default_factory=dict)
    ids: dict[CompileId, str] = field(default_factory=dict)


@dataclass
class _Decoding:
    """State of one decoding: decoded tables, the new payload store and its bounds."""

    store: PayloadStore
    limit: int  # bytes of the log file: no plain-file payload reaches past it (gzip: max_bytes)
    tables: dict[str, list[Any]] = field(default_factory=dict)
    ids: dict[str, CompileId] = field(default_factory=dict)


# -- codecs --------------------------------------------------------------------


_JSON_TYPES: frozenset[type] = frozenset({dict, list, str, int, float, bool, type(None)})


class _Codec:
    """Encodes one type to JSON values and decodes (checking everything) back."""

    #: True when ``encode`` returns its argument: containers can skip the call.
    identity = False
    #: JSON types that ``decode`` returns unchanged: containers check these inline
    #: and call ``decode`` only for other values (which it converts or rejects).
    passthrough: frozenset[type] = frozenset()

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        return value

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        raise NotImplementedError


class _Exact(_Codec):
    """``str``, ``int``, ``bool`` and ``None``: the JSON value must have exactly this type."""

    identity = True

    def __init__(self, tp: type) -> None:
        self.tp = tp
        self.passthrough = frozenset({tp})

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        if type(data) is not self.tp:
            raise CacheFormatError(f"expected {self.tp.__name__}, got {type(data).__name__}")
        return data


class _Float(_Codec):
    identity = True
    passthrough = frozenset({float})

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        if type(data) not in (int, float):
            raise CacheFormatError(f"expected a number, got {type(data).__name__}")
        return float(data)


class _Any(_Codec):
    """``Any`` fields hold JSON as it came from the log: any JSON value is valid."""

    identity = True
    passthrough = _JSON_TYPES

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        return data


class _Literal(_Codec):
    identity = True

    def __init__(self, values: tuple[Any, ...]) -> None:
        for v in values:
            if type(v) not in (str, int, bool) and v is not None:
                raise UnsupportedTypeError(f"Literal value {v!r}")
        self.values = values

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        for v in self.values:
            if type(data) is type(v) and data == v:
                return data
        raise CacheFormatError(f"{str(data)[:40]!r} is none of {self.values!r}")


class _Optional(_Codec):
    def __init__(self, inner: _Codec) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.passthrough = inner.passthrough | {type(None)}

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        return None if value is None else self.inner.encode(value, ctx)

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        return None if data is None else self.inner.decode(data, ctx)


class _ScalarUnion(_Codec):
    """A union of scalar types (``int | str``): told apart by the JSON value's own type."""

    identity = True

    def __init__(self, members: list[_Codec]) -> None:
        self.members = members

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        for m in self.members:
            try:
                return m.decode(data, ctx)
            except CacheFormatError:
                continue
        raise CacheFormatError(f"{type(data).__name__} is no member of the union")


class _List(_Codec):
    def __init__(self, item: _Codec) -> None:
        self.item = item
        self.identity = item.identity

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        if self.identity:
            return value
        enc = self.item.encode
        return [enc(v, ctx) for v in value]

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        if type(data) is not list:
            raise CacheFormatError(f"expected a list, got {type(data).__name__}")
        dec = self.item.decode
        ok = self.item.passthrough
        return [v if type(v) in ok else dec(v, ctx) for v in data]


class _Tuple(_Codec):
    """``tuple[X, ...]`` (``items`` is None, ``rest`` set) or ``tuple[A, B]``."""

    def __init__(self, items: list[_Codec] | None, rest: _Codec | None) -> None:
        self.items = items
        self.rest = rest

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        if self.items is None:
            assert self.rest is not None
            return [self.rest.encode(v, ctx) for v in value]
        return [c.encode(v, ctx) for c, v in zip(self.items, value, strict=True)]

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        if type(data) is not list:
            raise CacheFormatError(f"expected a list, got {type(data).__name__}")
        if self.items is None:
            assert self.rest is not None
            return tuple(self.rest.decode(v, ctx) for v in data)
        if len(data) != len(self.items):
            raise CacheFormatError(f"expected {len(self.items)} items, got {len(data)}")
        return tuple(c.decode(v, ctx) for c, v in zip(self.items, data, strict=True))


class _Dict(_Codec):
    """``dict`` / ``Counter`` with ``str`` or ``int`` keys (JSON keys are strings)."""

    def __init__(self, key: type, value: _Codec, factory: type) -> None:
        self.int_keys = key is int
        self.value = value
        self.factory = factory

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        if self.value.identity and not self.int_keys:
            return value
        enc = self.value.encode
        if self.int_keys:
            return {str(k): enc(v, ctx) for k, v in value.items()}
        return {k: enc(v, ctx) for k, v in value.items()}

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        if type(data) is not dict:
            raise CacheFormatError(f"expected an object, got {type(data).__name__}")
        if isinstance(self.value, _Any) and not self.int_keys:
            return data if self.factory is dict else self.factory(data)  # JSON as from the log
        dec = self.value.decode
        ok = self.value.passthrough
        if self.int_keys:
            return self.factory(
                {_int_key(k): v if type(v) in ok else dec(v, ctx) for k, v in data.items()}
            )
        return self.factory({k: v if type(v) in ok else dec(v, ctx) for k, v in data.items()})


def _int_key(key: str) -> int:
    try:
        value = int(key)
    except ValueError:
        raise CacheFormatError(f"{key[:40]!r} is not an integer key") from None
    if str(value) != key:
        raise CacheFormatError(f"{key[:40]!r} is not an integer key as written")
    return value


class _CompileIdCodec(_Codec):
    """A compile id as its text (``[0/1_2]``), checked to parse back to itself."""

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        text = ctx.ids.get(value)
        if text is None:
            text = str(value)
            if CompileId.parse(text) != value:
                raise UnsupportedTypeError(f"compile id {value!r} does not survive its text")
            ctx.ids[value] = text
        return text

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        if type(data) is not str:
            raise CacheFormatError(f"expected a compile id, got {type(data).__name__}")
        found = ctx.ids.get(data)
        if found is None:
            try:
                found = CompileId.parse(data)
            except ValueError:
                raise CacheFormatError(f"{data[:40]!r} is not a compile id") from None
            ctx.ids[data] = found
        return found


class _Ref(_Codec):
    """An object owned by a table elsewhere in the model, written as its index there."""

    def __init__(self, table: str) -> None:
        self.table = table

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        try:
            return ctx.tables[self.table][id(value)]
        except KeyError:
            raise UnsupportedTypeError(
                f"a reference to an object that is not in table {self.table!r}"
            ) from None

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        table = ctx.tables.get(self.table)
        if table is None or type(data) is not int or not 0 <= data < len(table):
            raise CacheFormatError(f"{str(data)[:40]!r} is not an index into {self.table!r}")
        return table[data]


class _Dataclass(_Codec):
    """A dataclass as the list of its fields, in order; table-owning fields are done first.

    A :class:`PayloadStore` field is not written: decoding passes the store
    made for the log being loaded.
    """

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.names: list[str] = []  # written fields, in order
        self.codecs: list[_Codec] = []
        self.passthrough_of: list[frozenset[type]] = []
        self.tables: dict[int, str] = {}  # written field index → table it owns
        self.order: list[int] = []  # decoding order: tables first
        self.store_at: int | None = None  # position of the PayloadStore argument
        self.keywords = False

    def add(self, name: str, codec: _Codec) -> None:
        self.names.append(name)
        self.codecs.append(codec)
        self.passthrough_of.append(codec.passthrough)

    def encode(self, value: Any, ctx: _Encoding) -> Any:
        for i, table in self.tables.items():
            ctx.tables[table] = {id(v): n for n, v in enumerate(getattr(value, self.names[i]))}
        return [
            getattr(value, name) if codec.identity else codec.encode(getattr(value, name), ctx)
            for name, codec in zip(self.names, self.codecs, strict=True)
        ]

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        if type(data) is not list or len(data) != len(self.names):
            raise CacheFormatError(f"{self.cls.__name__} is not a list of its fields")
        if not self.tables:
            args = [
                v if type(v) in ok else c.decode(v, ctx)
                for v, ok, c in zip(data, self.passthrough_of, self.codecs, strict=False)
            ]
        else:
            args = [None] * len(data)
            for i in self.order:
                args[i] = self.codecs[i].decode(data[i], ctx)
                if i in self.tables:
                    ctx.tables[self.tables[i]] = args[i]
        if self.store_at is not None:
            args.insert(self.store_at, ctx.store)
            if self.keywords:
                raise CacheFormatError("a keyword-only dataclass with a payload store")
        if self.keywords:
            return self.cls(**dict(zip(self.names, args, strict=True)))
        return self.cls(*args)


class _PayloadCodec(_Dataclass):
    """A payload as its fields but the store (``[offset, length, size, ...]``), bounds checked."""

    def decode(self, data: Any, ctx: _Decoding) -> Any:
        p: Payload = super().decode(data, ctx)
        offset, length, size = p.offset, p.length, p.size
        if not (0 <= size <= length and 0 <= offset):
            raise CacheFormatError("a payload has negative or inconsistent bounds")
        if offset + length > ctx.limit:
            raise CacheFormatError("a payload reaches past the end of the log")
        return p


class _Builder:
    """Builds the codec of a type from its hints, and a fingerprint of every type it met."""

    def __init__(self) -> None:
        self.dataclasses: dict[type, _Dataclass] = {}
        self.schema: list[str] = []

    def codec(self, tp: Any, where: str) -> _Codec:
        if tp is Any:
            return _Any()
        if tp is type(None):
            return _Exact(type(None))
        if tp in (str, int, bool):
            return _Exact(tp)
        if tp is float:
            return _Float()
        if tp is CompileId:
            return _CompileIdCodec()
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return self.dataclass(tp)
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin is Literal:
            return _Literal(args)
        if origin in (Union, types.UnionType):
            members = [a for a in args if a is not type(None)]
            if len(members) == 1:
                inner = self.codec(members[0], where)
                return _Optional(inner) if len(args) > 1 else inner
            codecs = [self.codec(a, where) for a in members]
            if not all(isinstance(c, (_Exact, _Float, _Literal)) for c in codecs):
                raise UnsupportedTypeError(f"{where}: only unions of scalars are supported: {tp}")
            if len(members) < len(args):
                codecs.append(_Exact(type(None)))
            return _ScalarUnion(codecs)
        if origin is list and len(args) == 1:
            return _List(self.codec(args[0], where + "[]"))
        if origin is tuple and args:
            if len(args) == 2 and args[1] is Ellipsis:
                return _Tuple(None, self.codec(args[0], where + "[]"))
            return _Tuple([self.codec(a, f"{where}[{i}]") for i, a in enumerate(args)], None)
        if origin in (dict, Counter):
            key, value = (args[0], int) if origin is Counter else args
            if key not in (str, int):
                raise UnsupportedTypeError(f"{where}: dict keys must be str or int: {tp}")
            return _Dict(key, self.codec(value, where + "{}"), origin)
        raise UnsupportedTypeError(f"{where}: no codec for {tp!r}")

    def dataclass(self, cls: type) -> _Dataclass:
        found = self.dataclasses.get(cls)
        if found is not None:
            return found
        # Registered before its fields are: the types may recurse (StackTrieNode).
        codec = self.dataclasses[cls] = _PayloadCodec(cls) if cls is Payload else _Dataclass(cls)
        hints = typing.get_type_hints(cls)
        described = []
        for position, f in enumerate(dataclasses.fields(cls)):
            where = f"{cls.__qualname__}.{f.name}"
            if not f.init:
                raise UnsupportedTypeError(f"{where}: fields with init=False are not supported")
            codec.keywords |= f.kw_only is True
            tp = hints[f.name]
            described.append(f"{f.name}:{tp!r}")
            if tp is PayloadStore and cls is Payload and codec.store_at is None:
                codec.store_at = position
                continue
            table = REFERENCE_FIELDS.get((cls, f.name))
            if table is not None:
                if typing.get_origin(tp) is not list or typing.get_args(tp) != (
                    _TABLE_TYPES[table],
                ):
                    raise UnsupportedTypeError(f"{where}: a reference field must be a list")
                described[-1] += f"->{table}"
                codec.add(f.name, _List(_Ref(table)))
                continue
            owned = TABLE_FIELDS.get((cls, f.name))
            if owned is not None:
                codec.tables[len(codec.names)] = owned
            codec.add(f.name, self.codec(tp, where))
        codec.order = sorted(range(len(codec.names)), key=lambda i: i not in codec.tables)
        self.schema.append(f"{cls.__module__}.{cls.__qualname__}({','.join(described)})")
        return codec


@dataclass(frozen=True)
class ModelCodec:
    """The codec of :class:`RankTrace` and the fingerprint of the types it covers."""

    codec: _Dataclass
    fingerprint: str


_MODEL_CODEC: ModelCodec | None = None


def model_codec() -> ModelCodec:
    """The codec of the model, built once; raises :class:`UnsupportedTypeError`."""
    global _MODEL_CODEC
    if _MODEL_CODEC is None:
        builder = _Builder()
        codec = builder.dataclass(RankTrace)
        text = "\n".join(sorted(builder.schema))
        _MODEL_CODEC = ModelCodec(codec, hashlib.sha256(text.encode()).hexdigest()[:10])
    return _MODEL_CODEC


def to_json(value: Any, tp: Any) -> Any:
    """``value`` (of type ``tp``) as JSON values; raises :class:`UnsupportedTypeError`."""
    return _Builder().codec(tp, getattr(tp, "__qualname__", repr(tp))).encode(value, _Encoding())


def from_json(data: Any, tp: Any, store: PayloadStore | None = None, limit: int = 0) -> Any:
    """A value of type ``tp`` from JSON values; :class:`CacheFormatError` if they do not fit."""
    codec = _Builder().codec(tp, getattr(tp, "__qualname__", repr(tp)))
    return codec.decode(data, _Decoding(store or PayloadStore("", False), limit))


def cache_version() -> str:
    """Parser version, package version and model fingerprint: what a cache file must match."""
    # The codec's fingerprint follows the model's classes; PARSER_VERSION what the reader
    # makes of a log: the package's version is not needed (the model knows no package).
    return f"p{PARSER_VERSION}-{model_codec().fingerprint}"


# -- documents -----------------------------------------------------------------


def encode_rank(rank: RankTrace, sha256: str = "") -> dict[str, Any]:
    """The JSON document of a rank's model (raises on anything the codec cannot write)."""
    model = model_codec().codec.encode(rank, _Encoding())
    return {
        "format": CACHE_FORMAT,
        "version": cache_version(),
        "sha256": sha256,
        "inline": [],  # older versions kept gzip payloads here: a document with any is foreign
        "model": model,
    }


def decode_rank(
    doc: Any,
    log_path: str,
    *,
    compressed: bool,
    size: int,
    sha256: str = "",
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
) -> RankTrace:
    """The model from a JSON document; raises :class:`CacheFormatError` if it does not fit.

    ``size`` is the log file's size; ``max_bytes`` what the model was read with
    (the bound of a gzip log's payload offsets).
    """
    if type(doc) is not dict:
        raise CacheFormatError("the cache is not a JSON object")
    if doc.get("format") != CACHE_FORMAT or doc.get("version") != cache_version():
        raise CacheFormatError("the cache was written by another version")
    if doc.get("sha256") != sha256:
        raise CacheFormatError("the cache belongs to another log")
    if doc.get("inline") != []:
        raise CacheFormatError("the cache holds payload bytes: not written by this version")
    store = PayloadStore(log_path, compressed, max_bytes)
    limit = max_bytes if compressed else size
    try:
        rank = model_codec().codec.decode(doc.get("model"), _Decoding(store, limit))
    except RecursionError:
        raise CacheFormatError("the cache is nested too deeply") from None
    assert isinstance(rank, RankTrace)
    return rank


def dumps(doc: dict[str, Any], compress: bool) -> bytes:
    """Serialize a cache document: compact ASCII JSON, gzipped if asked."""
    data = json.dumps(doc, separators=(",", ":")).encode("ascii")
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0) if compress else data


def loads(data: bytes) -> Any:
    """Parse a cache file's bytes, gzipped or not (raises on anything else)."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


# -- the cache -------------------------------------------------------------------


def cache_path(
    cache_dir: str | os.PathLike[str], sha256: str, *, compressed: bool = False, variant: str = ""
) -> Path:
    """``<cache_dir>/<sha256>[-<variant>]-<version>.json``, ``.json.gz`` for a gzip log."""
    key = sha256 + (f"-{variant}" if variant else "")
    return Path(cache_dir) / f"{key}-{cache_version()}.json{'.gz' if compressed else ''}"


def load_cached(
    log_path: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str],
    build: Callable[[], RankTrace],
    *,
    display_path: str | None = None,
    variant: str = "",
    max_bytes: int = DEFAULT_MAX_LOG_BYTES,
    known: FileDigest | None = None,
) -> RankTrace:
    """The model of a log from the cache when it holds a valid one, else ``build()`` (cached).

    ``display_path`` is the path the model shows (``RankTrace.path`` and its
    diagnostics; the log's own path by default): a cached model is moved to it.
    ``variant`` names inputs besides the log that change the model (e.g. a
    digest of borrowed interned strings, or a non-default ``max_bytes``, the
    bytes ``build`` reads of the log at most).  Errors of ``build`` pass
    through; the cache itself never raises.  ``known``: the log's digest, taken earlier
    in this build (it is not read again while its file is as it was then).
    """
    path = os.fspath(log_path)
    display = display_path or path
    try:
        model_codec()  # an unsupported model type: no cache rather than an error
        before = os.stat(path)
        if known is not None and known.holds_for(before):
            sha256, compressed = known.sha256, known.compressed
        else:
            sha256, compressed = file_sha256(path)
        target = cache_path(cache_dir, sha256, compressed=compressed, variant=variant)
    except (OSError, UnsupportedTypeError) as e:
        logger.debug("no cache for %s: %s", path, e)
        return build()  # an unreadable log raises TraceReadError here, as it would uncached
    try:
        data = target.read_bytes()
    except OSError:
        pass
    else:
        try:
            doc = loads(data)
            rank = decode_rank(
                doc,
                path,
                compressed=compressed,
                size=before.st_size,
                sha256=sha256,
                max_bytes=max_bytes,
            )
        except Exception as e:  # noqa: BLE001 - a bad cache file must never reach the user
            logger.debug("ignoring the cache file %s: %s", target, e)
        else:
            _move(rank, display)
            rank.sha256, rank.file_size = sha256, before.st_size
            return rank
    rank = build()
    rank.sha256, rank.file_size = sha256, before.st_size
    try:
        after = os.stat(path)
    except OSError:
        return rank
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        return rank  # the log changed while it was read: what was built is of neither version
    _write(target, rank, sha256, compressed)
    return rank


def strings_variant(strings: dict[int, str] | None) -> str:
    """The cache variant of a log read with interned strings borrowed from other logs."""
    if not strings:
        return ""
    text = json.dumps(sorted(strings.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _move(rank: RankTrace, display: str) -> None:
    """Show a cached model under the path it is read from now."""
    old = rank.path
    if old == display:
        return
    rank.path = display
    rank.diagnostics = [
        dataclasses.replace(d, path=display) if d.path == old else d for d in rank.diagnostics
    ]


def _write(target: Path, rank: RankTrace, sha256: str, compress: bool) -> None:
    """Write a cache file atomically: readers see the old file or the whole new one."""
    try:
        data = dumps(encode_rank(rank, sha256), compress)
    except (TypeError, ValueError, RecursionError) as e:
        logger.warning("cannot cache the model of %r: %s", rank.path, e)  # repr: escaped
        return
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=target.parent)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, target)
        tmp = None
    except OSError as e:
        logger.warning("cannot write the trace cache %r: %s", str(target), e)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


__all__ = [
    "PARSER_VERSION",
    "CacheFormatError",
    "UnsupportedTypeError",
    "cache_path",
    "cache_version",
    "decode_rank",
    "encode_rank",
    "file_sha256",
    "from_json",
    "load_cached",
    "model_codec",
    "strings_variant",
    "to_json",
]
