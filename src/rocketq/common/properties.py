"""The properties string of a message: ``name 0x01 value 0x02`` per pair (RocketMQ's
MessageDecoder#messageProperties2String).

Encoding keeps the trailing ``0x02`` after the last pair and skips ``None`` values. Decoding
follows RocketMQ's ``string2messageProperties``: split on ``0x02``, skip segments shorter
than 3 characters, split at the first ``0x01``, keep pairs whose name and value are both
non-empty; a string with or without the final ``0x02`` reads the same.
"""

from __future__ import annotations

from collections.abc import Mapping

NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"


def properties_to_string(props: Mapping[str, str | None]) -> str:
    return "".join(
        f"{k}{NAME_VALUE_SEPARATOR}{v}{PROPERTY_SEPARATOR}"
        for k, v in props.items()
        if v is not None
    )


def encode_properties(props: Mapping[str, str | None] | None) -> bytes:
    if not props:
        return b""
    return properties_to_string(props).encode("utf-8")


def string_to_properties(text: str) -> dict[str, str]:
    result: dict[str, str] = {}
    if not text:
        return result
    for segment in text.split(PROPERTY_SEPARATOR):
        if len(segment) < 3:
            continue
        name, sep, value = segment.partition(NAME_VALUE_SEPARATOR)
        if sep and name and value:
            result[name] = value
    return result


def decode_properties(data: bytes | bytearray | memoryview) -> dict[str, str]:
    """Parse a properties string; bad UTF-8 raises ``UnicodeDecodeError``."""
    if not data:
        return {}
    return string_to_properties(bytes(data).decode("utf-8"))
