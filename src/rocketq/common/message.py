"""Message, MessageExt and MessageQueue: RocketMQ's message vocabulary, IO-free.

``Message`` is what a producer sends (topic, body, flag, properties), one class for the client
and the broker as RocketMQ's ``common.message.Message`` is: its constructor takes what a user
gives (tags, keys, user properties, delay level), and a user property with a system name is
refused (``Message.putUserProperty``). ``MessageExt`` adds what the broker stores with it:
queue and commitlog positions, timestamps, hosts, sysflag, CRC, reconsume count; its
constructor takes every field as it is, system properties included (what RocketMQ's
``MessageAccessor`` and ``MessageDecoder`` set). Hosts are ``(ip, port)`` tuples; an IPv6 ip
selects the 20-byte host layout when the record is encoded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rocketq.common import message_const as mc
from rocketq.common.message_id import Host, create_message_id
from rocketq.errors import ClientError


@dataclass(slots=True, init=False)
class Message:
    """A message: ``Message("T", b"body", tags="A", keys=["k1"], properties={...})``."""

    topic: str
    body: bytes = b""
    flag: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    transaction_id: str | None = None

    def __init__(
        self,
        topic: str,
        body: bytes = b"",
        *,
        tags: str | None = None,
        keys: str | Sequence[str] | None = None,
        properties: Mapping[str, str] | None = None,
        delay_time_level: int = 0,
        flag: int = 0,
        wait_store_msg_ok: bool = True,
        transaction_id: str | None = None,
        message_group: str | None = None,
    ) -> None:
        self.topic = topic
        self.body = bytes(body)
        self.flag = flag
        self.properties = {}
        self.transaction_id = transaction_id
        if properties:
            for name, value in properties.items():
                self.put_user_property(name, value)
        if tags:
            self.tags = tags
        if keys:
            self.keys = list(keys) if not isinstance(keys, str) else keys
        if delay_time_level:
            self.delay_time_level = delay_time_level
        if not wait_store_msg_ok:
            self.put_property(mc.PROPERTY_WAIT_STORE_MSG_OK, "false")
        if message_group:
            self.message_group = message_group

    # ---------------------------------------------------------------- property accessors

    def get_property(self, name: str) -> str | None:
        return self.properties.get(name)

    def put_property(self, name: str, value: str) -> None:
        self.properties[name] = value

    def put_user_property(self, name: str, value: str) -> None:
        """Message.putUserProperty: system names and empty names or values are refused."""
        if name in mc.STRING_HASH_SET:
            raise ClientError(f"the property {name!r} is used by the system")
        if not name or not value:
            raise ClientError("a user property needs a non-empty name and value")
        self.properties[name] = str(value)

    def clear_property(self, name: str) -> None:
        self.properties.pop(name, None)

    @property
    def tags(self) -> str | None:
        return self.properties.get(mc.PROPERTY_TAGS)

    @tags.setter
    def tags(self, value: str | None) -> None:
        self._set_optional(mc.PROPERTY_TAGS, value)

    @property
    def keys(self) -> list[str]:
        raw = self.properties.get(mc.PROPERTY_KEYS, "")
        return [k for k in raw.split(mc.KEY_SEPARATOR) if k]

    @keys.setter
    def keys(self, value: str | list[str] | tuple[str, ...] | None) -> None:
        if isinstance(value, str):
            value = [value]
        joined = mc.KEY_SEPARATOR.join(k for k in value or () if k)
        self._set_optional(mc.PROPERTY_KEYS, joined)

    @property
    def delay_time_level(self) -> int:
        raw = self.properties.get(mc.PROPERTY_DELAY_TIME_LEVEL)
        try:
            return int(raw) if raw else 0
        except ValueError:
            return 0

    @delay_time_level.setter
    def delay_time_level(self, level: int) -> None:
        self._set_optional(mc.PROPERTY_DELAY_TIME_LEVEL, str(level) if level > 0 else None)

    # ---------------------------------------------------------------- timer (RocketMQ 5)

    @property
    def deliver_time_ms(self) -> int | None:
        """When the message is to be delivered, epoch ms (TIMER_DELIVER_MS); None: at once.

        Message.setDeliverTimeMs / getDeliverTimeMs; the broker's timer wheel holds the message
        until then (up to ``timerMaxDelaySec`` ahead, to ``timerPrecisionMs``, never earlier).
        """
        return _int_or_none(self.properties.get(mc.PROPERTY_TIMER_DELIVER_MS))

    @deliver_time_ms.setter
    def deliver_time_ms(self, time_ms: int | None) -> None:
        self._set_optional(mc.PROPERTY_TIMER_DELIVER_MS, None if time_ms is None else str(time_ms))

    def set_deliver_time_ms(self, time_ms: int) -> None:
        """Message.setDeliverTimeMs: deliver at ``time_ms`` (epoch milliseconds)."""
        self.deliver_time_ms = time_ms

    def set_delay_time_ms(self, delay_ms: int) -> None:
        """Message.setDelayTimeMs: deliver ``delay_ms`` after the broker stores it."""
        self.properties[mc.PROPERTY_TIMER_DELAY_MS] = str(delay_ms)

    def set_delay_time_sec(self, delay_s: int) -> None:
        """Message.setDelayTimeSec: deliver ``delay_s`` seconds after the broker stores it."""
        self.properties[mc.PROPERTY_TIMER_DELAY_SEC] = str(delay_s)

    # ---------------------------------------------------------------- FIFO (RocketMQ 5)

    @property
    def message_group(self) -> str | None:
        """The FIFO message group (``__SHARDINGKEY``, RocketMQ 5's messageGroup): the producer
        sends every message of a group to one write queue (Guava's consistent hash of the
        group's ``hashCode``, as RocketMQ 5's proxy picks it); a FIFO consumer group gets a
        queue's messages in order."""
        return self.properties.get(mc.PROPERTY_SHARDING_KEY)

    @message_group.setter
    def message_group(self, group: str | None) -> None:
        self._set_optional(mc.PROPERTY_SHARDING_KEY, group)

    @property
    def uniq_key(self) -> str | None:
        return self.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)

    @property
    def wait_store_msg_ok(self) -> bool:
        return self.properties.get(mc.PROPERTY_WAIT_STORE_MSG_OK, "true") != "false"

    def user_properties(self) -> dict[str, str]:
        """Properties that are not system ones (MessageConst.STRING_HASH_SET)."""
        return {k: v for k, v in self.properties.items() if k not in mc.STRING_HASH_SET}

    def _set_optional(self, name: str, value: str | None) -> None:
        if value:
            self.properties[name] = value
        else:
            self.properties.pop(name, None)


@dataclass(slots=True)
class MessageExt(Message):
    queue_id: int = 0
    store_size: int = 0
    queue_offset: int = 0
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: Host = ("127.0.0.1", 0)
    store_timestamp: int = 0
    store_host: Host = ("127.0.0.1", 0)
    msg_id: str = ""
    commitlog_offset: int = 0
    body_crc: int = 0
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0

    @property
    def offset_msg_id(self) -> str:
        """The offset msgId: store host + commitlog offset (MessageDecoder#createMessageId)."""
        return create_message_id(self.store_host, self.commitlog_offset)

    @property
    def client_msg_id(self) -> str:
        """What clients show as the message id: UNIQ_KEY when present, else the offset id."""
        return self.uniq_key or self.msg_id or self.offset_msg_id


@dataclass(frozen=True, slots=True, order=True)
class MessageQueue:
    topic: str
    broker_name: str
    queue_id: int

    def __str__(self) -> str:
        return (
            f"MessageQueue [topic={self.topic}, brokerName={self.broker_name},"
            f" queueId={self.queue_id}]"
        )


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None
