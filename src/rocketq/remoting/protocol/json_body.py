"""JsonBody: JSON bodies derived from their dataclass fields (RocketMQ's RemotingSerializable).

RocketMQ writes a body by handing the bean to fastjson, which names each key after the Java
field. Here a body is a dataclass whose snake_case fields give the camelCase keys, the way
``custom_header`` derives a header's extFields; ``json_field(...)`` metadata states where
RocketMQ's key or shape differs (``clientID``, ``cachedMsgSizeInMiB``, a sorted list). The
mapping, per field type:

=====================  ===========================  =========================================
type                   written                      read (missing or null: the default)
=====================  ===========================  =========================================
str, int, float, bool  as is (float as a float)     lenient as fastjson: numbers may be text
IntEnum, Enum          by name                      by name, or by ordinal (C++ sends those)
a dataclass            its object                   ``from_json`` of the object
list / set of X        an array (a set sorted)      non-arrays read as empty; null strings
                                                    are dropped
dict[str | int, V]     an object (int keys stay     keys as text, or parsed as integers
                       ints: ``dumps_object_keys``
                       writes them bare)
dict[<dataclass>, V]   ``ObjectKeyMap``: object     ``key_object`` of each key
                       keys ordered by the key's
                       fields
X | None               left out when None           None
=====================  ===========================  =========================================

``to_json()`` gives the keys in fastjson's order, sorted (a class with
``json_in_field_order = True`` keeps its field order instead). A missing field takes its
declared default; a field without one (or with a default factory)
takes the zero of its type, as fastjson leaves a Java field at its zero: ``""``, ``0``,
``False``, empty containers, a nested body read from ``{}``. ``encode()``/``decode()`` turn
the object into bytes with ``fastjson.dumps``/``loads``; ``ObjectKeyBody`` uses the
object-key writer and reader for the bodies that hold ``Map<MessageQueue, ...>`` or
integer-keyed maps. ``to_json``/``from_json`` also serve plain dataclasses such as common's
TopicConfig, which fastjson serializes by reflection in RocketMQ too.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from typing import Any, Self, TypeVar

from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.custom_header import camel_case

T = TypeVar("T")

_Writer = Callable[[Any], Any]
_Reader = Callable[[Any, str], Any]


# ----------------------------------------------------------------------------- readers


def as_int(obj: dict[str, Any], key: str, default: int = 0) -> int:
    value = obj.get(key, default)
    if value is None:
        return default
    return _int(value, key)


def as_str(obj: dict[str, Any], key: str, default: str = "") -> str:
    value = obj.get(key, default)
    return default if value is None else str(value)


def as_bool(obj: dict[str, Any], key: str, default: bool = False) -> bool:
    value = obj.get(key, default)
    return _bool(value, key)


def as_object(value: object, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RemotingCommandError(f"{what} is not a JSON object")
    return value


def _int(value: Any, key: str) -> int:
    if isinstance(value, bool):
        return int(value)
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RemotingCommandError(f"body field {key} is not an integer: {value!r}") from None


def _float(value: Any, key: str) -> float:
    try:
        return 0.0 if value == "" else float(value)
    except (TypeError, ValueError):
        raise RemotingCommandError(f"body field {key} is not a number: {value!r}") from None


def _bool(value: Any, key: str) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1")
    return bool(value)


def _str(value: Any, key: str) -> str:
    return str(value)


def _enum_reader(kind: type[enum.Enum]) -> _Reader:
    def read(value: Any, key: str) -> Any:
        try:
            if isinstance(value, str) and value in kind.__members__:
                return kind[value]
            if issubclass(kind, enum.IntEnum):
                return kind(int(value))
            return kind(value)
        except (KeyError, ValueError, TypeError):
            raise RemotingCommandError(
                f"body field {key} is not a {kind.__name__}: {value!r}"
            ) from None

    return read


# ----------------------------------------------------------------------------- field metadata


def json_field(
    key: str | None = None,
    *,
    aliases: tuple[str, ...] = (),
    sort: Callable[[Any], Any] | bool = False,
    write: _Writer | None = None,
    read: Callable[[Any], Any] | None = None,
    null: bool = False,
) -> dict[str, Any]:
    """``field(metadata=...)`` for a body field that RocketMQ spells or shapes otherwise:
    ``key`` the JSON key, ``aliases`` other keys read when ``key`` is missing, ``sort`` a list
    written sorted (True, or a sort key), ``write``/``read`` the field's own conversion (read
    gets the raw value, None when missing), ``null`` keeps a None in ``to_json()`` (the
    writers still leave it out where fastjson does)."""
    spec = {"key": key, "aliases": aliases, "sort": sort, "write": write, "read": read}
    return {"json": spec | {"null": null}}


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    attr: str
    key: str
    aliases: tuple[str, ...]
    write: _Writer
    read: Callable[[Any], Any]  # raw JSON value (None when missing) -> field value
    null: bool


@dataclasses.dataclass(frozen=True, slots=True)
class _Codec:
    fields: tuple[_Field, ...]

    def write(self, value: object) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for f in self.fields:
            item = getattr(value, f.attr)
            if item is not None:
                obj[f.key] = f.write(item)
            elif f.null:
                obj[f.key] = None
        return obj

    def values(self, obj: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for f in self.fields:
            raw = obj.get(f.key)
            if raw is None:
                for alias in f.aliases:
                    raw = obj.get(alias)
                    if raw is not None:
                        break
            values[f.attr] = f.read(raw)
        return values


_CODECS: dict[type, _Codec] = {}


def _codec(cls: type) -> _Codec:
    codec = _CODECS.get(cls)
    if codec is None:
        hints = typing.get_type_hints(cls)
        built = [_build_field(f, hints[f.name]) for f in dataclasses.fields(cls) if f.init]
        if not getattr(cls, "json_in_field_order", False):
            built.sort(key=lambda f: f.key)  # fastjson writes a bean's keys sorted
        codec = _Codec(tuple(built))
        _CODECS[cls] = codec
    return codec


def _build_field(f: dataclasses.Field[Any], hint: Any) -> _Field:
    meta = f.metadata.get("json", {})
    key = meta.get("key") or camel_case(f.name)
    aliases = meta.get("aliases", ())
    null = meta.get("null", False)
    kind, nullable = _strip_optional(hint)
    write = meta.get("write") or _writer(kind)
    sort = meta.get("sort")
    if sort:
        write = _sorted_writer(write, None if sort is True else sort)
    read_hook = meta.get("read")
    if read_hook is not None:
        return _Field(f.name, key, aliases, write, read_hook, null)
    if f.default is not dataclasses.MISSING:
        missing = _constant(f.default)
    elif nullable:
        missing = _constant(None)
    else:
        missing = _zero(kind)
    reader = _reader(kind)

    def read(raw: Any) -> Any:
        return missing() if raw is None else reader(raw, key)

    return _Field(f.name, key, aliases, write, read, null)


def _constant(value: Any) -> Callable[[], Any]:
    return lambda: value


def _sorted_writer(write: _Writer, by: Callable[[Any], Any] | None) -> _Writer:
    return lambda v: write(sorted(v, key=by))


def _strip_optional(hint: Any) -> tuple[Any, bool]:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return hint, False


def _is_body(kind: Any) -> bool:
    return isinstance(kind, type) and dataclasses.is_dataclass(kind)


def _writer(kind: Any) -> _Writer:
    origin = typing.get_origin(kind)
    if origin in (list, tuple):
        item = _writer(typing.get_args(kind)[0])
        return lambda v: [item(x) for x in v]
    if origin in (set, frozenset):
        item = _writer(typing.get_args(kind)[0])
        return lambda v: [item(x) for x in sorted(v)]
    if origin is dict:
        key_kind, value_kind = typing.get_args(kind)
        value = _writer(value_kind)
        if _is_body(key_kind):
            names = [f.name for f in dataclasses.fields(key_kind)]
            return lambda v: fastjson.ObjectKeyMap(
                [
                    (to_json(k), value(x))
                    for k, x in sorted(
                        v.items(), key=lambda kv: tuple(getattr(kv[0], n) for n in names)
                    )
                ]
            )
        return lambda v: {k: value(x) for k, x in v.items()}
    if kind is float:
        return float
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return lambda v: v.name
    if _is_body(kind):
        return to_json
    return lambda v: v


def _reader(kind: Any) -> _Reader:
    origin = typing.get_origin(kind)
    if origin in (list, tuple, set, frozenset):
        item_kind = typing.get_args(kind)[0]
        item = _reader(item_kind)
        build: Callable[[Any], Any] = list if origin is tuple else origin
        if item_kind is str:
            return lambda v, key: build(
                [str(x) for x in v if x is not None] if isinstance(v, list) else []
            )
        return lambda v, key: build([item(x, key) for x in v] if isinstance(v, list) else [])
    if origin is dict:
        key_kind, value_kind = typing.get_args(kind)
        value = _reader(value_kind)
        if _is_body(key_kind):
            return lambda v, key: {
                from_json(key_kind, fastjson.key_object(k)): value(x, key)
                for k, x in as_object(v, key).items()
            }
        if key_kind is int:
            return lambda v, key: {
                _int(k, key): value(x, key) for k, x in as_object(v, key).items()
            }
        return lambda v, key: {str(k): value(x, key) for k, x in as_object(v, key).items()}
    if kind is bool:
        return _bool
    if kind is int:
        return _int
    if kind is float:
        return _float
    if kind is str:
        return _str
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return _enum_reader(kind)
    if _is_body(kind):
        return lambda v, key: from_json(kind, as_object(v, key))
    return lambda v, key: v


def _zero(kind: Any) -> Callable[[], Any]:
    origin = typing.get_origin(kind)
    if origin in (list, tuple):
        return list
    if origin in (set, frozenset, dict):
        return origin  # type: ignore[no-any-return]
    if kind in (str, int, float, bool):
        return kind  # type: ignore[no-any-return]
    if _is_body(kind):
        return lambda: from_json(kind, {})
    return lambda: None


# ----------------------------------------------------------------------------- the API


def to_json(value: Any) -> Any:
    """A dataclass as a JSON-ready dict with RocketMQ's keys (its own ``to_json`` when it has
    one)."""
    own = getattr(value, "to_json", None)
    if own is not None:
        return own()
    return _codec(type(value)).write(value)


def from_json(cls: type[T], obj: dict[str, Any]) -> T:
    """Build a ``cls`` dataclass from a JSON object (its own ``from_json`` when it has one)."""
    own = getattr(cls, "from_json", None)
    if own is not None:
        return own(obj)  # type: ignore[no-any-return]
    return cls(**_codec(cls).values(obj))


class JsonBody:
    """Mixin of the body dataclasses: ``to_json``/``from_json`` derived from the fields,
    ``encode``/``decode`` as bytes. A subclass overrides either only for a shape the table of
    the module docstring does not cover."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return _codec(type(self)).write(self)

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(**_codec(cls).values(obj))

    def encode(self) -> bytes:
        return fastjson.dumps(self.to_json())

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Self:
        return cls.from_json(as_object(fastjson.loads(data, cls.__name__), cls.__name__))


class ObjectKeyBody(JsonBody):
    """A body that may hold maps with object or integer keys, written and read as fastjson
    writes them (``fastjson.dumps_object_keys``, which also leaves nulls out)."""

    __slots__ = ()

    def encode(self) -> bytes:
        return fastjson.dumps_object_keys(self.to_json())

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Self:
        obj = fastjson.loads_object_keys(data, cls.__name__)
        return cls.from_json(as_object(obj, cls.__name__))
