"""RecallMessageHandle: the handle a timer message's send returns, to recall it
(RocketMQ 5.3.2's common/producer/RecallMessageHandle).

Version 1 is ``"v1 <topic> <brokerName> <timestamp> <messageId>"`` (space-separated) in
URL-safe base64 with padding (``Base64.getUrlEncoder``). ``timestamp`` is the timer's slot
time (``TIMER_OUT_MS``) + 1, ``messageId`` the message's UNIQ_KEY.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

SEPARATOR = " "
VERSION_1 = "v1"


class RecallHandleError(ValueError):
    """A handle that does not decode (RocketMQ's DecoderException: "recall handle is invalid")."""


@dataclass(frozen=True, slots=True)
class RecallMessageHandleV1:
    topic: str
    broker_name: str
    timestamp_str: str
    message_id: str
    version: str = VERSION_1

    def encode(self) -> str:
        return build_handle(self.topic, self.broker_name, self.timestamp_str, self.message_id)


def build_handle(topic: str, broker_name: str, timestamp_str: str, message_id: str) -> str:
    """HandleV1.buildHandle (no check of the parts, as Java)."""
    raw = SEPARATOR.join((VERSION_1, topic, broker_name, timestamp_str, message_id))
    return base64.urlsafe_b64encode(raw.encode()).decode("ascii")


def decode_handle(handle: str | None) -> RecallMessageHandleV1:
    """RecallMessageHandle.decodeHandle; RecallHandleError when it is not a v1 handle."""
    if not handle:
        raise RecallHandleError("recall handle is invalid")
    text = handle + "=" * (-len(handle) % 4)  # Java's decoder takes unpadded input too
    try:
        raw = base64.b64decode(text.encode(), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeError, ValueError) as exc:
        raise RecallHandleError("recall handle is invalid") from exc
    items = raw.split(SEPARATOR)
    if items[0] != VERSION_1 or len(items) < 5:
        raise RecallHandleError("recall handle is invalid")
    return RecallMessageHandleV1(items[1], items[2], items[3], items[4])
