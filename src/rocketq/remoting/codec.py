"""The one remoting codec: frames, JSON headers and ROCKETMQ binary headers (RocketMQ's
``RemotingCommand.encode``/``decode``, ``RocketMQSerializable`` and ``NettyDecoder``).

Frame::

    +--------+--------+--------------+----------+
    | L (4)  | W (4)  | header (H)   | body (B) |     L = 4 + H + B, frame = L + 4 bytes
    +--------+--------+--------------+----------+
    W = serialize type << 24 | H      (type 0 JSON, 1 ROCKETMQ)

ROCKETMQ binary header (``RocketMQSerializable.rocketMQProtocolEncode``), H = 21 + R + E::

    code int16 | language int8 | version int16 | opaque int32 | flag int32   (13 bytes)
    R int32 | remark (R bytes, UTF-8)
    E int32 | extFields: repeat { keyLen int16 | key | valueLen int32 | value } (E bytes)

A JSON header is one object; extFields values of any JSON scalar type are read as text
(numbers as decimal, booleans as ``"true"``/``"false"``), and written back as JSON strings.
``FrameDecoder`` is sans-IO: bytes in, commands out; every client and server uses it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

from rocketq.errors import RemotingCommandError
from rocketq.remoting import native_frames
from rocketq.remoting.protocol.codes import LanguageCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand

MAX_FRAME_SIZE = 16 * 1024 * 1024  # frame bytes including the length field (Java's default)

FRAME_PREFIX_STRUCT = struct.Struct(
    ">i"  # L: length of everything after this field
    "I"  # W: serialize type << 24 | header length
)
FRAME_PREFIX_SIZE = FRAME_PREFIX_STRUCT.size
assert FRAME_PREFIX_SIZE == 8

LENGTH_STRUCT = struct.Struct(">i")
assert LENGTH_STRUCT.size == 4

BINARY_HEADER_STRUCT = struct.Struct(
    ">h"  # code
    "B"  # language
    "h"  # version
    "i"  # opaque
    "i"  # flag
)
BINARY_HEADER_SIZE = BINARY_HEADER_STRUCT.size
assert BINARY_HEADER_SIZE == 13

WORD_STRUCT = struct.Struct(">I")
assert WORD_STRUCT.size == 4

INT32_STRUCT = struct.Struct(">i")
INT16_STRUCT = struct.Struct(">h")
HEADER_LENGTH_MASK = 0xFFFFFF
INT32_LIMIT = 1 << 31

_SERIALIZE_NAMES = {SerializeType.JSON: "JSON", SerializeType.ROCKETMQ: "ROCKETMQ"}


# --------------------------------------------------------------------------- encoding


def encode(cmd: RemotingCommand) -> bytes:
    """The whole frame of ``cmd`` in its own serialize type."""
    return encode_head(cmd) + cmd.body


def encode_head(cmd: RemotingCommand) -> bytes:
    """The frame of ``cmd`` up to its body (length, header word, header): a writer sends it
    and ``cmd.body`` as two buffers of one writev instead of copying the body into a frame.
    A JSON command's head is C's (``encode_json_head``) when ``native_frames.FRAMES`` is set,
    this code's where C leaves it here."""
    native = native_frames.FRAMES
    if native is not None:
        head = native.encode_json_head(cmd)
        if head is not None:
            return head
    if cmd.serialize_type == SerializeType.ROCKETMQ:
        header = encode_binary_header(cmd)
    else:
        header = encode_json_header(cmd)
    header_length = len(header)
    if header_length > HEADER_LENGTH_MASK:
        raise RemotingCommandError(f"header of {header_length} bytes is too long")
    word = (int(cmd.serialize_type) << 24) | header_length
    return FRAME_PREFIX_STRUCT.pack(4 + header_length + len(cmd.body), word) + header


def encode_json_header(cmd: RemotingCommand) -> bytes:
    """fastjson's shape: top-level keys sorted, compact, extFields values as strings.

    Written out with the json module's own string escaper (the bytes ``json.dumps`` gives,
    without building a dict and walking it); a value that is not a string, or text that does
    not encode as UTF-8, goes through :func:`_encode_json_header_object`."""
    try:
        text = _json_header_text(cmd)
    except TypeError:
        return _encode_json_header_object(cmd)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return _encode_json_header_object(cmd)


def _json_header_text(cmd: RemotingCommand) -> str:
    quote = _QUOTE
    parts = ['{"code":', int.__repr__(cmd.code)]
    if cmd.ext_fields:
        fields = ",".join([quote(k) + ":" + quote(v) for k, v in cmd.ext_fields.items()])
        parts += [',"extFields":{', fields, "}"]
    parts += [',"flag":', int.__repr__(cmd.flag), ',"language":', quote(cmd.language.name)]
    parts += [',"opaque":', int.__repr__(cmd.opaque)]
    if cmd.remark is not None:
        parts += [',"remark":', quote(cmd.remark)]
    parts += [',"serializeTypeCurrentRPC":', quote(_SERIALIZE_NAMES[cmd.serialize_type])]
    parts += [',"version":', int.__repr__(cmd.version), "}"]
    return "".join(parts)


def _encode_json_header_object(cmd: RemotingCommand) -> bytes:
    """The header through ``json``'s encoder (any JSON value type, lone surrogates)."""
    obj: dict[str, Any] = {"code": cmd.code}
    if cmd.ext_fields:
        obj["extFields"] = cmd.ext_fields
    obj["flag"] = cmd.flag
    obj["language"] = cmd.language.name
    obj["opaque"] = cmd.opaque
    if cmd.remark is not None:
        obj["remark"] = cmd.remark
    obj["serializeTypeCurrentRPC"] = _SERIALIZE_NAMES[cmd.serialize_type]
    obj["version"] = cmd.version
    try:
        text = _JSON_ENCODER.encode(obj)
    except (TypeError, ValueError) as exc:
        raise RemotingCommandError(f"header does not encode: {exc}") from exc
    try:
        return text.encode()
    except UnicodeEncodeError:  # lone surrogates (from \uD800 escapes): keep them escaped
        return _JSON_ASCII_ENCODER.encode(obj).encode()


def encode_binary_header(cmd: RemotingCommand) -> bytes:
    """RocketMQSerializable.rocketMQProtocolEncode."""
    try:
        remark = cmd.remark.encode() if cmd.remark else b""
        parts = [
            BINARY_HEADER_STRUCT.pack(
                cmd.code, int(cmd.language), cmd.version, cmd.opaque, cmd.flag
            ),
            INT32_STRUCT.pack(len(remark)),
            remark,
        ]
        ext = bytearray()
        for key, value in cmd.ext_fields.items():
            key_bytes = key.encode()
            value_bytes = value.encode()
            ext += INT16_STRUCT.pack(len(key_bytes))
            ext += key_bytes
            ext += INT32_STRUCT.pack(len(value_bytes))
            ext += value_bytes
    except (struct.error, UnicodeEncodeError) as exc:
        raise RemotingCommandError(f"binary header does not encode: {exc}") from exc
    parts.append(INT32_STRUCT.pack(len(ext)))
    parts.append(bytes(ext))
    return b"".join(parts)


# --------------------------------------------------------------------------- decoding


def decode(frame: bytes | bytearray | memoryview) -> RemotingCommand:
    """Decode one whole frame, length field included."""
    view = memoryview(frame)
    if len(view) < FRAME_PREFIX_SIZE:
        raise RemotingCommandError(f"frame of {len(view)} bytes is shorter than its prefix")
    (length,) = LENGTH_STRUCT.unpack_from(view, 0)
    if length != len(view) - 4:
        raise RemotingCommandError(f"length field {length} does not match {len(view) - 4} bytes")
    return decode_frame_body(view[4:])


def decode_frame_body(view: memoryview) -> RemotingCommand:
    """Decode the part of a frame after the length field: W, header, body."""
    if len(view) < 4:
        raise RemotingCommandError("frame too short for the header-length word")
    (word,) = WORD_STRUCT.unpack_from(view, 0)
    header_length = word & HEADER_LENGTH_MASK
    type_byte = word >> 24
    if header_length > len(view) - 4:
        raise RemotingCommandError(
            f"header length {header_length} exceeds frame length {len(view)}"
        )
    header = view[4 : 4 + header_length]
    body = bytes(view[4 + header_length :])
    if type_byte == SerializeType.JSON:
        cmd = decode_json_header(bytes(header))
    elif type_byte == SerializeType.ROCKETMQ:
        cmd = decode_binary_header(header)
    else:
        raise RemotingCommandError(f"unknown serialize type {type_byte}")
    cmd.body = body
    return cmd


def decode_json_header(data: bytes) -> RemotingCommand:
    """Parse a JSON header (Java fastjson, C++ jsoncpp or JavaScript output)."""
    try:
        # json.loads(bytes) without its per-call decoder and encoding sniffing: a header
        # starting with "{" and a non-zero byte is UTF-8 (UTF-16/32 would have zero bytes)
        if data[:1] == b"{" and data[1:2] != b"\x00":
            text = data.decode("utf-8", "surrogatepass")
        else:
            text = data.decode(json.detect_encoding(data), "surrogatepass")
        obj = _JSON_DECODER.decode(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RemotingCommandError(f"header is not JSON: {exc}") from exc
    except RecursionError:
        raise RemotingCommandError("header JSON is nested too deeply") from None
    if not isinstance(obj, dict):
        raise RemotingCommandError("header JSON is not an object")
    remark = obj.get("remark")
    if remark is not None and not isinstance(remark, str):
        remark = _text(remark)
    return RemotingCommand(
        code=_int_field(obj, "code", required=True),
        language=_language(obj.get("language")),
        version=_int_field(obj, "version"),
        opaque=_int_field(obj, "opaque"),
        flag=_int_field(obj, "flag"),
        remark=remark,
        ext_fields=_ext_fields(obj.get("extFields")),
        serialize_type=SerializeType.JSON,
    )


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


# Built once: json.loads / json.dumps with options build a new decoder / encoder every call.
_JSON_DECODER = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=_reject_constant)
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_JSON_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))
# what _JSON_ENCODER quotes a string with (ensure_ascii=False): C's when available
_QUOTE: Callable[[str], str] = json.encoder.encode_basestring


def _int_field(obj: dict[str, Any], key: str, *, required: bool = False) -> int:
    value = obj.get(key)
    if value is None:
        if required:
            raise RemotingCommandError(f"header has no {key}")
        return 0
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise RemotingCommandError(f"header {key} is not an integer: {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise RemotingCommandError(f"header {key} is not an integer: {value!r}") from None
    if not -INT32_LIMIT <= number < INT32_LIMIT:
        raise RemotingCommandError(f"header {key} out of int32 range: {number}")
    return number


def _language(value: object) -> LanguageCode:
    if isinstance(value, str):
        return LanguageCode.from_name(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return LanguageCode.from_byte(value)
    return LanguageCode.OTHER


def _ext_fields(value: object) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RemotingCommandError("header extFields is not an object")
    return {key: _text(item) for key, item in value.items() if item is not None}


def _text(value: object) -> str:
    """The text fastjson would give a JSON value read into a String."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def decode_binary_header(header: memoryview) -> RemotingCommand:
    """RocketMQSerializable.rocketMQProtocolDecode; a zero-length remark is None."""
    size = len(header)
    if size < BINARY_HEADER_SIZE + 8:
        raise RemotingCommandError(f"binary header of {size} bytes is too short")
    code, language, version, opaque, flag = BINARY_HEADER_STRUCT.unpack_from(header, 0)
    pos = BINARY_HEADER_SIZE
    remark_bytes, pos = _read_block(header, pos, "remark")
    (ext_length,) = _unpack_at(INT32_STRUCT, header, pos, "extFields length")
    pos += 4
    if ext_length < 0 or pos + ext_length > size:
        raise RemotingCommandError(f"extFields length {ext_length} exceeds header at {pos}")
    ext_fields = _decode_binary_ext(header[pos : pos + ext_length], pos)
    try:
        remark = remark_bytes.decode() if remark_bytes else None
    except UnicodeDecodeError as exc:
        raise RemotingCommandError(f"remark is not UTF-8: {exc}") from exc
    return RemotingCommand(
        code=code,
        language=LanguageCode.from_byte(language),
        version=version,
        opaque=opaque,
        flag=flag,
        remark=remark,
        ext_fields=ext_fields,
        serialize_type=SerializeType.ROCKETMQ,
    )


def _unpack_at(st: struct.Struct, view: memoryview, pos: int, what: str) -> tuple[int, ...]:
    if pos + st.size > len(view):
        raise RemotingCommandError(f"binary header ends inside {what} at {pos}")
    return st.unpack_from(view, pos)


def _read_block(view: memoryview, pos: int, what: str) -> tuple[bytes, int]:
    (length,) = _unpack_at(INT32_STRUCT, view, pos, f"{what} length")
    pos += 4
    if length < 0 or pos + length > len(view):
        raise RemotingCommandError(f"{what} length {length} exceeds header at {pos}")
    return bytes(view[pos : pos + length]), pos + length


def _decode_binary_ext(view: memoryview, base: int) -> dict[str, str]:
    data = bytes(view)
    size = len(data)
    unpack_short = INT16_STRUCT.unpack_from
    unpack_int = INT32_STRUCT.unpack_from
    fields: dict[str, str] = {}
    pos = 0
    try:
        while pos < size:
            if pos + 2 > size:
                raise RemotingCommandError(f"extFields ends inside a key length at {base + pos}")
            (key_length,) = unpack_short(data, pos)
            key_end = pos + 2 + key_length
            if key_length < 0 or key_end + 4 > size:
                raise RemotingCommandError(f"extFields key length {key_length} at {base + pos}")
            (value_length,) = unpack_int(data, key_end)
            value_end = key_end + 4 + value_length
            if value_length < 0 or value_end > size:
                raise RemotingCommandError(
                    f"extFields value length {value_length} at {base + key_end}"
                )
            fields[data[pos + 2 : key_end].decode()] = data[key_end + 4 : value_end].decode()
            pos = value_end
    except UnicodeDecodeError as exc:
        raise RemotingCommandError(f"extFields entry is not UTF-8: {exc}") from exc
    return fields


# --------------------------------------------------------------------------- stream


class FrameDecoder:
    """Sans-IO frame splitter: ``feed(bytes)`` returns the commands completed by those bytes.

    ``feed`` raises ``RemotingCommandError`` on a malformed or oversized frame; the connection
    that fed it must then be closed (the stream position is lost). ``feed_until_error`` returns
    the commands before such a frame with the error instead, so a server answers them before
    it closes. The walk is C's ``split_frames`` when ``native_frames.FRAMES`` is set, which
    hands back as bytes each frame it does not decode itself (decoded here, the reference).
    """

    __slots__ = ("max_frame_size", "partial")

    def __init__(self, max_frame_size: int = MAX_FRAME_SIZE) -> None:
        self.partial = bytearray()  # a partial frame's bytes: one bytearray, changed in place
        self.max_frame_size = max_frame_size

    @property
    def buffered_size(self) -> int:
        """The bytes of a partial frame waiting for the next read."""
        return len(self.partial)

    def feed(self, data: bytes | bytearray | memoryview) -> list[RemotingCommand]:
        commands, error = self.feed_until_error(data)
        if error is not None:
            raise error
        return commands

    def feed_until_error(
        self, data: bytes | bytearray | memoryview
    ) -> tuple[list[RemotingCommand], RemotingCommandError | None]:
        """The commands completed by ``data`` up to the first malformed frame, and its error."""
        frames = native_frames.FRAMES
        if frames is None:
            return self._feed_python(data)
        return self._feed_native(data, frames.split_frames, ())

    def feed_sends(
        self, data: bytes | bytearray | memoryview, spec: native_frames.SendSpec
    ) -> tuple[list[RemotingCommand | native_frames.SendItem], RemotingCommandError | None]:
        """``feed_until_error``, with each fast-path send the C reader takes (``spec``, see
        ``native_frames.FramePaths.split_sends``) as (command, its put, its header), the
        command's extFields maybe left unread (``native_frames.full_request``); every command
        when the C frames are off."""
        frames = native_frames.FRAMES
        if frames is None:
            commands, error = self._feed_python(data)
            return list(commands), error
        if self.partial:
            return self._feed_native(data, frames.split_sends, (spec,))
        # _feed_native's common case inline: no partial frame waits, the read's bytes split
        items, consumed, reason = frames.split_sends(data, self.max_frame_size, spec)
        if consumed < len(data) or bytes in map(type, items):
            return self.after_split(data, items, consumed, reason)
        error = RemotingCommandError(reason) if reason is not None else None
        return items, error  # type: ignore[return-value]  # no bytes among them

    def _feed_native(
        self,
        data: bytes | bytearray | memoryview,
        split: Callable[..., tuple[list[Any], int, str | None]],
        extra: tuple[object, ...],
    ) -> tuple[list[Any], RemotingCommandError | None]:
        buffer = self.partial
        if buffer:
            buffer += data
            source: bytes | bytearray | memoryview = buffer
        else:
            source = data  # the common case: no partial frame waits, no copy
        items, consumed, reason = split(source, self.max_frame_size, *extra)
        return self.after_split(data, items, consumed, reason)

    def after_split(
        self,
        data: bytes | bytearray | memoryview,
        items: list[Any],
        consumed: int,
        reason: str | None,
    ) -> tuple[list[Any], RemotingCommandError | None]:
        """A C split's items, each header C left decoded by the reference decoder, and the
        bytes after the last whole frame kept for the next read."""
        buffer = self.partial
        error = RemotingCommandError(reason) if reason is not None else None
        for index, item in enumerate(items):
            if isinstance(item, bytes):  # a header C leaves to the reference decoder
                try:
                    items[index] = decode_frame_body(memoryview(item))
                except RemotingCommandError as exc:
                    del items[index:]
                    return items, exc
        if buffer:
            del buffer[:consumed]
        elif consumed < len(data):
            buffer += memoryview(data)[consumed:]
        return items, error

    def _feed_python(
        self, data: bytes | bytearray | memoryview
    ) -> tuple[list[RemotingCommand], RemotingCommandError | None]:
        buffer = self.partial
        buffer += data
        commands: list[RemotingCommand] = []
        error: RemotingCommandError | None = None
        pos = 0
        end = len(buffer)
        with memoryview(buffer) as view:
            try:
                while (length := self._complete_frame_length(view, pos, end)) is not None:
                    commands.append(decode_frame_body(view[pos + 4 : pos + 4 + length]))
                    pos += 4 + length
            except RemotingCommandError as exc:
                # a new error: this one's traceback (and cause) holds slices of ``view``
                error = RemotingCommandError(str(exc))
        if pos:
            del buffer[:pos]
        return commands, error

    def _complete_frame_length(self, view: memoryview, pos: int, end: int) -> int | None:
        """The length field of the frame at ``pos`` when the frame is all there, else None."""
        if end - pos < 4:
            return None
        (length,) = LENGTH_STRUCT.unpack_from(view, pos)
        if length < 4:
            raise RemotingCommandError(f"frame length {length} is below 4")
        if length + 4 > self.max_frame_size:
            raise RemotingCommandError(
                f"frame of {length + 4} bytes exceeds the limit {self.max_frame_size}"
            )
        return length if end - pos - 4 >= length else None
