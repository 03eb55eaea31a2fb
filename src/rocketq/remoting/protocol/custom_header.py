"""CommandCustomHeader: typed views of a command's ``extFields`` (RocketMQ's CommandCustomHeader).

A header is a frozen keyword-only dataclass whose fields are snake_case; the wire name is the
camelCase form, or ``field(metadata={"wire": ...})`` when RocketMQ spells it otherwise.
Reading follows Java's ``decodeCommandCustomHeader`` with two deliberate differences: a value
that does not parse raises ``RemotingCommandError`` naming the field (Java only logs it), and
booleans accept C++'s ``"1"``/``"0"`` besides ``"true"``/``"false"`` (the C++ client writes
``batch`` as ``"0"``/``"1"``: ``tests/remoting/fixtures/cpp-client-1.0.1``).
Writing gives every value as a string, booleans as ``"true"``/``"false"``.

``NATIVE`` is the C reader (``rocketq._native._remoting.header_from_fields``, set by
``rocketq.remoting.native_frames``): given the field table this module builds from a header's
declarations it builds the header in one call, and hands any value outside the common forms
back to :meth:`CommandCustomHeader.parse_ext_fields`, the reference.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Self, TypeAlias

from rocketq.errors import RemotingCommandError

_INTEGER = re.compile(r"[+-]?\d+")
_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0", ""})


def camel_case(name: str) -> str:
    """``consumer_group`` -> ``consumerGroup``."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclasses.dataclass(frozen=True, slots=True)
class _FieldSpec:
    attr: str
    wire: str
    kind: type
    required: bool
    parse: Callable[[str, str], object] | None = None  # None: the text is the value


def parse_int(wire: str, text: str) -> int:
    if text.isascii() and text.isdigit():  # the common case, without the regex
        return int(text)
    if not _INTEGER.fullmatch(text):
        raise RemotingCommandError(f"the custom field {wire} is not an integer: {text!r}")
    return int(text)


def parse_bool(wire: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise RemotingCommandError(f"the custom field {wire} is not a boolean: {text!r}")


def parse_float(wire: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise RemotingCommandError(f"the custom field {wire} is not a number: {text!r}") from None


# field kinds the C reader takes (custom_header.c's K_STR, K_INT, K_BOOL)
NATIVE_KINDS: dict[type, int] = {str: 0, int: 1, bool: 2}
# header_from_fields(cls, ext_fields, table) -> header | None; None: the Python reader only
NATIVE: Callable[[type, Mapping[str, str] | None, tuple[Any, ...]], Any] | None = None
NativeTable: TypeAlias = tuple[tuple[str, str, int, bool, object], ...]

_PARSERS: dict[type, Callable[[str, str], object]] = {
    int: parse_int,
    bool: parse_bool,
    float: parse_float,
}


def _format(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class CommandCustomHeader:
    """Base of every request/response header; subclasses are frozen kw-only dataclasses."""

    __slots__ = ()
    _specs: ClassVar[dict[type, tuple[_FieldSpec, ...]]] = {}
    _native_tables: ClassVar[dict[type, NativeTable | None]] = {}

    @classmethod
    def _field_specs(cls) -> tuple[_FieldSpec, ...]:
        specs = CommandCustomHeader._specs.get(cls)
        if specs is None:
            hints = typing.get_type_hints(cls)
            built = []
            for f in dataclasses.fields(cls):  # type: ignore[arg-type]
                hint = hints[f.name]
                kind = hint
                if isinstance(hint, types.UnionType):
                    kind = next(a for a in typing.get_args(hint) if a is not type(None))
                required = (
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                )
                wire = f.metadata.get("wire") or camel_case(f.name)
                built.append(_FieldSpec(f.name, wire, kind, required, _PARSERS.get(kind)))
            specs = tuple(built)
            CommandCustomHeader._specs[cls] = specs
        return specs

    @classmethod
    def native_table(cls, rename: tuple[tuple[str, str], ...] = ()) -> NativeTable | None:
        """The C reader's table of this header: (attribute, wire name, kind, required,
        default) per field, from its declarations, the wire names ``rename`` maps
        (attribute -> wire) replaced; None when a field's kind or default is not for C."""
        if not rename and cls in CommandCustomHeader._native_tables:
            return CommandCustomHeader._native_tables[cls]
        wires = dict(rename)
        declared = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        table: list[tuple[str, str, int, bool, object]] | None = []
        for spec in cls._field_specs():
            kind = NATIVE_KINDS.get(spec.kind)
            f = declared[spec.attr]
            if kind is None or f.default_factory is not dataclasses.MISSING or table is None:
                table = None
                continue
            default = None if f.default is dataclasses.MISSING else f.default
            table.append((spec.attr, wires.get(spec.attr, spec.wire), kind, spec.required, default))
        result = tuple(table) if table is not None and not hasattr(cls, "__post_init__") else None
        if not rename:
            CommandCustomHeader._native_tables[cls] = result
        return result

    @classmethod
    def read_native(
        cls, ext_fields: Mapping[str, str] | None, table: NativeTable | None = None
    ) -> Self | None:
        """The header by the C reader (with this class's table, or ``table``), or None when
        the reader is off or leaves this one to Python."""
        native = NATIVE
        if native is None:
            return None
        if table is None:
            table = cls.native_table()
            if table is None:
                return None
        header: Self | None = native(cls, ext_fields, table)
        return header

    @classmethod
    def from_ext_fields(cls, ext_fields: Mapping[str, str] | None) -> Self:
        """Build the header; a missing required or malformed field raises with its name."""
        if NATIVE is not None:
            header = cls.read_native(ext_fields)
            if header is not None:
                return header
        return cls(**cls.parse_ext_fields(ext_fields))

    @classmethod
    def parse_ext_fields(cls, ext_fields: Mapping[str, str] | None) -> dict[str, Any]:
        """The header's field values by attribute name, as :meth:`from_ext_fields` reads them."""
        fields = ext_fields or {}
        values: dict[str, Any] = {}
        for spec in cls._field_specs():
            text = fields.get(spec.wire)
            if text is None:
                if spec.required:
                    raise RemotingCommandError(f"the custom field {spec.wire} is null")
                continue
            parse = spec.parse
            if parse is None:
                values[spec.attr] = text
            elif text or spec.required:
                values[spec.attr] = parse(spec.wire, text)
        return values

    def to_ext_fields(self) -> dict[str, str]:
        """The header as wire ``extFields`` (None fields left out)."""
        out: dict[str, str] = {}
        for spec in self._field_specs():
            value = getattr(self, spec.attr)
            if value is not None:
                out[spec.wire] = _format(value)
        return out


def wire(name: str) -> Any:
    """Field metadata for a wire name that is not the camelCase of the attribute."""
    return {"wire": name}
