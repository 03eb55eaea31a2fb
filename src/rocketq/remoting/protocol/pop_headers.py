"""Headers of RocketMQ 5's POP requests (remoting/protocol/header in 5.x): POP_MESSAGE (200050),
ACK_MESSAGE (200051), CHANGE_MESSAGE_INVISIBLETIME (200053), NOTIFICATION (200054), and the body
of BATCH_ACK_MESSAGE (200151, ``BatchAckMessageRequestBody`` with its ``BatchAck`` items).

The request headers extend ``TopicQueueRequestHeader`` (``bname``, ``lo`` from
``RpcRequestHeader``). ``BatchAck.bitSet`` is a ``java.util.BitSet`` that fastjson writes as
``toByteArray()`` in base64 (``BitSetSerializerDeserializer``): bit ``i`` is byte ``i // 8``,
bit ``i % 8``, little-endian, trailing zero bytes dropped.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.custom_header import CommandCustomHeader, wire
from rocketq.remoting.protocol.json_body import as_int, as_str

# a str as json.dumps(ensure_ascii=False) writes it (fastjson.dumps' strings)
_json_string: Callable[[str], str] = encode_basestring

MAX_POP_MSG_NUMS = 32  # PopMessageProcessor: "pop message's num is greater than 32"

# ConsumeInitMode (PopMessageRequestHeader.initMode)
INIT_MODE_MIN = 0
INIT_MODE_MAX = 1


@dataclass(frozen=True, kw_only=True, slots=True)
class PopMessageRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str
    queue_id: int
    max_msg_nums: int
    invisible_time: int
    poll_time: int
    born_time: int
    init_mode: int
    exp_type: str | None = None
    exp: str | None = None
    order: bool | None = None
    attempt_id: str | None = None
    broker_name: str | None = field(default=None, metadata=wire("bname"))

    def is_timeout_too_much(self, now_ms: int) -> bool:
        """PopMessageRequestHeader.isTimeoutTooMuch: born + poll time more than 500 ms ago."""
        return now_ms - self.born_time - self.poll_time > 500


@dataclass(frozen=True, kw_only=True, slots=True)
class PopMessageResponseHeader(CommandCustomHeader):
    pop_time: int
    invisible_time: int
    revive_qid: int
    rest_num: int
    start_offset_info: str | None = None
    msg_offset_info: str | None = None
    order_count_info: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class AckMessageRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str
    queue_id: int
    extra_info: str
    offset: int
    broker_name: str | None = field(default=None, metadata=wire("bname"))


@dataclass(frozen=True, kw_only=True, slots=True)
class ChangeInvisibleTimeRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str
    queue_id: int
    extra_info: str
    offset: int
    invisible_time: int
    broker_name: str | None = field(default=None, metadata=wire("bname"))


@dataclass(frozen=True, kw_only=True, slots=True)
class ChangeInvisibleTimeResponseHeader(CommandCustomHeader):
    pop_time: int
    invisible_time: int
    revive_qid: int


@dataclass(frozen=True, kw_only=True, slots=True)
class NotificationRequestHeader(CommandCustomHeader):
    consumer_group: str
    topic: str
    queue_id: int
    poll_time: int
    born_time: int
    order: bool | None = None
    attempt_id: str | None = None
    broker_name: str | None = field(default=None, metadata=wire("bname"))


@dataclass(frozen=True, kw_only=True, slots=True)
class NotificationResponseHeader(CommandCustomHeader):
    has_msg: bool
    polling_full: bool = False


# ----------------------------------------------------------------------------- batch ack body


def encode_bit_set(indexes: Iterable[int]) -> str:
    """``BitSet.toByteArray()`` of the set bits, base64 as fastjson writes a byte[]."""
    bits = 0
    for i in indexes:
        bits |= 1 << i
    raw = bits.to_bytes((bits.bit_length() + 7) // 8, "little")
    return base64.b64encode(raw).decode("ascii")


def decode_bit_set(text: str) -> list[int]:
    """The set bits of a base64 ``BitSet.toByteArray()``, lowest first."""
    bits = int.from_bytes(base64.b64decode(text, validate=True), "little")
    n = bits.bit_length()
    if bits == (1 << n) - 1:  # a whole pop acked at once: every bit up to the highest
        return list(range(n))
    return [i for i in range(n) if bits >> i & 1]


@dataclass(frozen=True, kw_only=True, slots=True)
class BatchAck:
    """One (group, topic, queue, checkpoint) of a BATCH_ACK_MESSAGE (remoting/protocol/body)."""

    consumer_group: str
    topic: str
    retry: str  # ExtraInfoUtil's topic mark: "0" normal, "1" retry v1, "2" retry v2
    start_offset: int
    queue_id: int
    revive_queue_id: int
    pop_time: int
    invisible_time: int
    bit_set: tuple[int, ...]  # indexes (offset - start_offset) of the acked messages

    def to_json(self) -> dict[str, Any]:
        return {
            "b": encode_bit_set(self.bit_set),
            "c": self.consumer_group,
            "it": self.invisible_time,
            "pt": self.pop_time,
            "q": self.queue_id,
            "r": self.retry,
            "rq": self.revive_queue_id,
            "so": self.start_offset,
            "t": self.topic,
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BatchAck:
        def pick(short: str, long: str) -> str:
            return short if short in obj else long

        bits = obj.get(pick("b", "bitSet"))
        return cls(
            consumer_group=as_str(obj, pick("c", "consumerGroup")),
            topic=as_str(obj, pick("t", "topic")),
            retry=as_str(obj, pick("r", "retry"), "0"),
            start_offset=as_int(obj, pick("so", "startOffset")),
            queue_id=as_int(obj, pick("q", "queueId")),
            revive_queue_id=as_int(obj, pick("rq", "reviveQueueId")),
            pop_time=as_int(obj, pick("pt", "popTime")),
            invisible_time=as_int(obj, pick("it", "invisibleTime")),
            bit_set=tuple(decode_bit_set(bits)) if isinstance(bits, str) else (),
        )


def encode_batch_ack_body(broker_name: str, acks: Iterable[BatchAck]) -> bytes:
    """BatchAckMessageRequestBody as fastjson writes it: ``fastjson.dumps`` of the items'
    ``to_json`` (keys sorted, strings as ``json`` writes them without ensure_ascii), written
    directly (one per pop a consumer acks; tests/remoting/test_pop_headers.py compares)."""
    items = ",".join(
        f'{{"b":"{encode_bit_set(a.bit_set)}","c":{_json_string(a.consumer_group)},'
        f'"it":{int(a.invisible_time)},"pt":{int(a.pop_time)},"q":{int(a.queue_id)},'
        f'"r":{_json_string(a.retry)},"rq":{int(a.revive_queue_id)},'
        f'"so":{int(a.start_offset)},"t":{_json_string(a.topic)}}}'
        for a in acks
    )
    return f'{{"acks":[{items}],"brokerName":{_json_string(broker_name)}}}'.encode()


def decode_batch_ack_body(body: bytes) -> tuple[str, list[BatchAck]]:
    """(brokerName, acks) of a BatchAckMessageRequestBody; RemotingCommandError if malformed."""
    obj = fastjson.loads(body, "BatchAckMessageRequestBody")
    if not isinstance(obj, dict):
        return "", []
    items = obj.get("acks") or []
    return as_str(obj, "brokerName"), [BatchAck.from_json(i) for i in items if isinstance(i, dict)]
