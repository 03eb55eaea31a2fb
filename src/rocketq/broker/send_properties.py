"""The producer's properties string, passed through to the stored record.

RocketMQ's SendMessageProcessor decodes the header's properties into a map, drops nothing,
adds CLUSTER and encodes the map again. Most sends need no rule that reads the map: only a
retry topic (reconsume count, DLQ), a delay level (DELAY), a timer (TIMER_*), a half message
(TRAN_MSG) and a CLUSTER the producer already set (replaced where it stands) do. For every
other send the record's properties are the producer's string as it came, its WAIT segment cut
out (the broker reads WAIT for the flush rule and does not store it) and ``CLUSTER=<cluster>``
appended: for
a well-formed string (``name 0x01 value 0x02`` per pair, no name twice) that is byte for byte
what decode, edit and encode give, without building the map. A string that is not well formed
is stored as it came; every reader (the dispatch of tags and keys, consumers) parses it with
the same rules as the map-building path, so it reads the same.
"""

from __future__ import annotations

from rocketq.common import message_const as mc
from rocketq.common.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR

_WAIT = mc.PROPERTY_WAIT_STORE_MSG_OK + NAME_VALUE_SEPARATOR
# a name whose presence needs the decoded map (delay rerouting, half messages, CLUSTER set
# by the producer: the map path replaces it in place)
_NEEDS_MAP = tuple(
    name + NAME_VALUE_SEPARATOR
    for name in (
        mc.PROPERTY_DELAY_TIME_LEVEL,
        mc.PROPERTY_TRANSACTION_PREPARED,
        mc.PROPERTY_CLUSTER,
        mc.PROPERTY_TIMER_DELIVER_MS,
        mc.PROPERTY_TIMER_DELAY_SEC,
        mc.PROPERTY_TIMER_DELAY_MS,
    )
)


def native_rules(
    cluster: str, retry_prefix: str, max_body: int
) -> tuple[tuple[bytes, ...], bytes, bytes, bytes, int]:
    """These rules for the C reader of a send (``send_put_of``): the markers that need the
    map, WAIT's marker, the CLUSTER segment appended, the retry topic prefix, the body limit."""
    tail = f"{mc.PROPERTY_CLUSTER}{NAME_VALUE_SEPARATOR}{cluster}{PROPERTY_SEPARATOR}"
    markers = tuple(m.encode() for m in _NEEDS_MAP)
    return markers, _WAIT.encode(), tail.encode(), retry_prefix.encode(), max_body


def pass_through(text: str, cluster: str) -> tuple[bytes, bool] | None:
    """The record's properties bytes and the message's WAIT flag, or None when a broker
    rule needs the decoded map (or a name is ambiguous: the slow path decides)."""
    for marker in _NEEDS_MAP:
        if marker in text:
            return None
    wait = True
    i = text.find(_WAIT)
    if i >= 0:
        if i > 0 and text[i - 1] != PROPERTY_SEPARATOR:
            return None  # e.g. a user property ending in "WAIT"
        j = text.find(PROPERTY_SEPARATOR, i)
        if j < 0:
            j = len(text)
        wait = text[i + len(_WAIT) : j] != "false"
        text = text[:i] + text[j + 1 :]
        if _WAIT in text:
            return None  # WAIT twice: the map keeps the last
    if text and text[-1] != PROPERTY_SEPARATOR:
        text += PROPERTY_SEPARATOR
    record = f"{text}{mc.PROPERTY_CLUSTER}{NAME_VALUE_SEPARATOR}{cluster}{PROPERTY_SEPARATOR}"
    return record.encode(), wait
