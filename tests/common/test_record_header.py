"""The C extension's record.h names the record layout again, for C: each of its #defines and
its host widths must equal what ``rocketq.common.record_layout`` says, so a change of one that
forgets the other fails here (and not as a corrupt record in a store)."""

from __future__ import annotations

import re
from pathlib import Path

from rocketq.common import record_layout as layout
from rocketq.common.message_const import MessageSysFlag

RECORD_H = Path(layout.__file__).resolve().parents[1] / "_native" / "record.h"

#: record.h's name -> the value record_layout (or MessageSysFlag) gives it
PINNED = {
    "MAGIC_V1": layout.MESSAGE_MAGIC_CODE,
    "MAGIC_V2": layout.MESSAGE_MAGIC_CODE_V2,
    "MAGIC_BLANK": layout.BLANK_MAGIC_CODE,
    "BLANK_SIZE": layout.BLANK_SIZE,
    "MIN_RECORD_SIZE": layout.MIN_RECORD_SIZE,
    "FIXED_V4_SIZE": layout.FIXED_V4_SIZE,
    "BORNHOST_V6": MessageSysFlag.BORNHOST_V6_FLAG,
    "STOREHOST_V6": MessageSysFlag.STOREHOSTADDRESS_V6_FLAG,
    "COMPRESSED_FLAG": MessageSysFlag.COMPRESSED_FLAG,
    "V1_TOPIC_MAX": layout.V1_TOPIC_MAX_BYTES,
    # TOPICLENGTH (v2) and PROPERTIESLENGTH are signed 16-bit fields
    "INT16_MAX_LEN": 2 ** (8 * layout.PROPERTIES_LENGTH_SIZE - 1) - 1,
    "R_TOTAL": layout.TOTAL_SIZE_POSITION,
    "R_MAGIC": layout.MAGIC_CODE_POSITION,
    "R_CRC": layout.BODY_CRC_POSITION,
    "R_QUEUE_ID": layout.QUEUE_ID_POSITION,
    "R_FLAG": layout.FLAG_POSITION,
    "R_QUEUE_OFFSET": layout.QUEUE_OFFSET_POSITION,
    "R_PHY": layout.PHYSICAL_OFFSET_POSITION,
    "R_SYSFLAG": layout.SYSFLAG_POSITION,
    "R_BORN_TS": layout.BORN_TIMESTAMP_POSITION,
    "R_BORN_HOST": layout.BORN_HOST_POSITION,
    "RECORD_HEAD_SIZE": layout.HEAD_SIZE,
}
#: #defines that are not part of the layout: the scan's return statuses, the include guard
#: and Python's API switch
NOT_LAYOUT = {
    "ST_END",
    "ST_BLANK",
    "ST_BAD",
    "ST_INCOMPLETE",
    "ROCKETQ_NATIVE_RECORD_H",
    "PY_SSIZE_T_CLEAN",
}

_DEFINE = re.compile(r"^#define[ \t]+(\w+)(?:[ \t]+([^/\s]+))?", re.MULTILINE)
_HOST_SIZE = re.compile(r"host_size\([^)]*\)\s*\{\s*return[^?]*\?\s*(\d+)\s*:\s*(\d+)\s*;")


def c_int(text: str) -> int:
    """A C integer literal: decimal or hex, with an optional u/U suffix."""
    return int(text.rstrip("uU"), 0)


def defines(header: str) -> dict[str, str | None]:
    """name -> its value's text (None for a bare #define) of each object-like #define."""
    return {name: value or None for name, value in _DEFINE.findall(header)}


def test_the_parser_reads_decimal_and_hex_defines_with_suffixes() -> None:
    header = "#define A 12\n#define B 0xDAA320A7u /* note */\n#define GUARD\n"
    assert defines(header) == {"A": "12", "B": "0xDAA320A7u", "GUARD": None}
    assert c_int("0xDAA320A7u") == 0xDAA320A7


def test_every_define_of_record_h_is_pinned_or_known_not_to_be_layout() -> None:
    found = defines(RECORD_H.read_text(encoding="utf-8"))
    assert set(found) == set(PINNED) | NOT_LAYOUT


def test_every_offset_and_size_of_record_h_equals_record_layout() -> None:
    found = defines(RECORD_H.read_text(encoding="utf-8"))
    differ = {
        name: (found[name], expected)
        for name, expected in PINNED.items()
        if found.get(name) is None or c_int(str(found[name])) != expected
    }
    assert differ == {}


def test_the_host_widths_of_record_h_equal_record_layout() -> None:
    match = _HOST_SIZE.search(RECORD_H.read_text(encoding="utf-8"))
    assert match is not None, "record.h has no host_size(sys_flag, bit) returning v6 : v4"
    assert (int(match[1]), int(match[2])) == (layout.IPV6_HOST_SIZE, layout.IPV4_HOST_SIZE)
