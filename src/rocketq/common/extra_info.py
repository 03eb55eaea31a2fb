"""A POP message's handle, the extra-info string (ExtraInfoUtil), and the POP retry topic's
name (KeyBuilder), from RocketMQ 5's remoting/protocol/header and common.

The extra-info is space-separated::

    ckQueueOffset popTime invisibleTime reviveQid topicMark brokerName queueId queueOffset
    0             1       2             3         4         5          6       7

``topicMark`` says where the message really is: ``0`` the topic, ``1`` the V1 retry topic
``%RETRY%<group>_<topic>``, ``2`` the V2 one ``%RETRY%<group>+<topic>``. ``reviveQid`` 999
marks a FIFO pop. A POP response carries ``startOffsetInfo`` (``mark queueId startOffset``) and
``msgOffsetInfo`` (``mark queueId off1,off2``) per queue, ``;``-separated, from which the client
builds each message's extra-info (MQClientAPIImpl.processPopResponse; ``build_pop_handles``).
"""

from __future__ import annotations

from collections.abc import Iterable

from rocketq.common.topic import RETRY_GROUP_TOPIC_PREFIX

KEY_SEPARATOR = " "
POP_ORDER_REVIVE_QUEUE = 999
NORMAL_TOPIC = "0"
RETRY_TOPIC = "1"
RETRY_TOPIC_V2 = "2"
POP_RETRY_SEPARATOR_V1 = "_"
POP_RETRY_SEPARATOR_V2 = "+"

# MessageConst (5.x) properties of popped and revived messages
PROPERTY_POP_CK = "POP_CK"
PROPERTY_FIRST_POP_TIME = "1ST_POP_TIME"
PROPERTY_DLQ_ORIGIN_TOPIC = "DLQ_ORIGIN_TOPIC"
PROPERTY_DLQ_ORIGIN_MESSAGE_ID = "DLQ_ORIGIN_MESSAGE_ID"


class ExtraInfoError(ValueError):
    """A malformed extra-info string (the message says which field, as ExtraInfoUtil does)."""


# ----------------------------------------------------------------------------- KeyBuilder


def build_pop_retry_topic(topic: str, group: str, v2: bool = False) -> str:
    """KeyBuilder.buildPopRetryTopic: one retry topic per (group, topic)."""
    sep = POP_RETRY_SEPARATOR_V2 if v2 else POP_RETRY_SEPARATOR_V1
    return f"{RETRY_GROUP_TOPIC_PREFIX}{group}{sep}{topic}"


def is_pop_retry_topic_v2(topic: str) -> bool:
    return topic.startswith(RETRY_GROUP_TOPIC_PREFIX) and POP_RETRY_SEPARATOR_V2 in topic


def parse_normal_topic(topic: str, group: str) -> str:
    """KeyBuilder.parseNormalTopic(topic, cid): the topic a POP retry topic serves."""
    if not topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return topic
    v2 = RETRY_GROUP_TOPIC_PREFIX + group + POP_RETRY_SEPARATOR_V2
    if topic.startswith(v2):
        return topic[len(v2) :]
    return topic[len(RETRY_GROUP_TOPIC_PREFIX + group + POP_RETRY_SEPARATOR_V1) :]


def topic_mark(topic: str) -> str:
    """ExtraInfoUtil.getRetry: the mark of the topic a message was popped from."""
    if is_pop_retry_topic_v2(topic):
        return RETRY_TOPIC_V2
    if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return RETRY_TOPIC
    return NORMAL_TOPIC


def real_topic(topic: str, group: str, mark: str) -> str:
    """ExtraInfoUtil.getRealTopic: where a message of ``topic`` with ``mark`` really is."""
    if mark == NORMAL_TOPIC:
        return topic
    if mark == RETRY_TOPIC:
        return build_pop_retry_topic(topic, group, v2=False)
    if mark == RETRY_TOPIC_V2:
        return build_pop_retry_topic(topic, group, v2=True)
    raise ExtraInfoError("getRetry fail, format is wrong")


# ----------------------------------------------------------------------------- extra info


_NAMES = (
    "ck_queue_offset",
    "pop_time",
    "invisible_time",
    "revive_qid",
    "mark",
    "broker_name",
    "queue_id",
    "queue_offset",
)


class ExtraInfo:
    """A parsed handle: a slotted class, not a frozen dataclass (whose ``__init__`` sets each
    of the eight fields through ``object.__setattr__``, six times the cost of this one's; a
    batch ack builds one a checkpoint). Treated as immutable; equal and hashed by its fields."""

    __slots__ = (
        "broker_name",
        "ck_queue_offset",
        "invisible_time",
        "mark",
        "pop_time",
        "queue_id",
        "queue_offset",
        "revive_qid",
    )

    def __init__(
        self,
        ck_queue_offset: int,
        pop_time: int,
        invisible_time: int,
        revive_qid: int,
        mark: str,
        broker_name: str,
        queue_id: int,
        queue_offset: int,
    ) -> None:
        self.ck_queue_offset = ck_queue_offset
        self.pop_time = pop_time
        self.invisible_time = invisible_time
        self.revive_qid = revive_qid
        self.mark = mark
        self.broker_name = broker_name
        self.queue_id = queue_id
        self.queue_offset = queue_offset

    def _fields(self) -> tuple[int, int, int, int, str, str, int, int]:
        return (
            self.ck_queue_offset,
            self.pop_time,
            self.invisible_time,
            self.revive_qid,
            self.mark,
            self.broker_name,
            self.queue_id,
            self.queue_offset,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ExtraInfo):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = (f"{n}={v!r}" for n, v in zip(_NAMES, self._fields(), strict=True))
        return f"ExtraInfo({', '.join(shown)})"

    @property
    def is_order(self) -> bool:
        return self.revive_qid == POP_ORDER_REVIVE_QUEUE

    @property
    def next_visible_time(self) -> int:
        return self.pop_time + self.invisible_time

    def encode(self) -> str:
        return KEY_SEPARATOR.join(str(v) for v in self._fields())


_FIELDS = (
    "getCkQueueOffset",
    "getPopTime",
    "getInvisibleTime",
    "getReviveQid",
    "getRetry",
    "getBrokerName",
    "getQueueId",
    "getQueueOffset",
)


def build_extra_info(
    ck_queue_offset: int,
    pop_time: int,
    invisible_time: int,
    revive_qid: int,
    topic: str,
    broker_name: str,
    queue_id: int,
    queue_offset: int,
) -> str:
    """ExtraInfoUtil.buildExtraInfo (the 8-field form)."""
    return ExtraInfo(
        ck_queue_offset,
        pop_time,
        invisible_time,
        revive_qid,
        topic_mark(topic),
        broker_name,
        queue_id,
        queue_offset,
    ).encode()


def parse_extra_info(text: str | None) -> ExtraInfo:
    """Split and read all eight fields; ExtraInfoError names the first one missing or bad."""
    if text is None:
        raise ExtraInfoError("split extraInfo is null")
    parts = text.split(KEY_SEPARATOR)
    if len(parts) < len(_FIELDS):
        raise ExtraInfoError(f"{_FIELDS[len(parts)]} fail, extraInfoStrs length {len(parts)}")
    ints: list[int] = []
    for i in (0, 1, 2, 3, 6, 7):
        try:
            ints.append(int(parts[i]))
        except ValueError:
            raise ExtraInfoError(f"{_FIELDS[i]} fail, not a number: {parts[i]!r}") from None
    if parts[4] not in (NORMAL_TOPIC, RETRY_TOPIC, RETRY_TOPIC_V2):
        raise ExtraInfoError("getRetry fail, format is wrong")
    ck, pop_time, invisible, rqid, queue_id, queue_offset = ints
    return ExtraInfo(ck, pop_time, invisible, rqid, parts[4], parts[5], queue_id, queue_offset)


# ----------------------------------------------------------------------------- offset infos


def build_start_offset_info(entries: list[tuple[str, int, int]]) -> str:
    """ExtraInfoUtil.buildStartOffsetInfo per (topic, queueId, startOffset), ';'-joined."""
    return ";".join(f"{topic_mark(t)} {q} {so}" for t, q, so in entries)


def build_msg_offset_info(entries: list[tuple[str, int, list[int]]]) -> str:
    """ExtraInfoUtil.buildMsgOffsetInfo per (topic, queueId, offsets), ';'-joined."""
    return ";".join(f"{topic_mark(t)} {q} {','.join(map(str, offs))}" for t, q, offs in entries)


def _split_info(text: str | None) -> list[list[str]]:
    if not text:
        return []
    out = []
    for one in text.split(";"):
        parts = one.split(KEY_SEPARATOR)
        if len(parts) != 3:
            raise ExtraInfoError(f"parse offset info error, {text}")
        out.append(parts)
    return out


def parse_start_offset_info(text: str | None) -> dict[str, int]:
    """ExtraInfoUtil.parseStartOffsetInfo: ``mark@queueId`` -> start offset."""
    return {f"{m}@{q}": int(so) for m, q, so in _split_info(text)}


def parse_msg_offset_info(text: str | None) -> dict[str, list[int]]:
    """ExtraInfoUtil.parseMsgOffsetInfo: ``mark@queueId`` -> the popped queue offsets."""
    return {f"{m}@{q}": [int(o) for o in offs.split(",")] for m, q, offs in _split_info(text)}


def pop_handle_prefix(
    start_offset_info: dict[str, int],
    pop_time: int,
    invisible_time: int,
    revive_qid: int,
    stored_topic: str,
    broker_name: str,
    queue_id: int,
) -> str:
    """The first seven fields of the handles of one queue of a pop, with the separator that
    precedes the eighth (the queue offset): every message of that queue shares them, so a pop
    of 32 builds one prefix and appends each message's offset (the string ExtraInfoUtil's
    buildExtraInfo writes)."""
    mark = topic_mark(stored_topic)
    start = start_offset_info[f"{mark}@{queue_id}"]
    return f"{start} {pop_time} {invisible_time} {revive_qid} {mark} {broker_name} {queue_id} "


def build_pop_handle(
    start_offset_info: dict[str, int],
    pop_time: int,
    invisible_time: int,
    revive_qid: int,
    stored_topic: str,
    broker_name: str,
    queue_id: int,
    queue_offset: int,
) -> str:
    """A popped message's extra-info from the response header's maps, as the Java client
    builds ``POP_CK`` (``stored_topic``: where the message was stored, retry topic or not)."""
    prefix = pop_handle_prefix(
        start_offset_info, pop_time, invisible_time, revive_qid, stored_topic, broker_name,
        queue_id,
    )  # fmt: skip
    return f"{prefix}{queue_offset}"


_PREFIX_SEPARATORS = len(_FIELDS) - 2  # seven fields before the offset


def group_handles(handles: Iterable[str]) -> list[tuple[ExtraInfo, list[int]]]:
    """The handles of a batch ack grouped by checkpoint (mark, queue, checkpoint offset, pop
    time): per group the first handle's fields and the queue offsets, in the order given.

    Handles of one pop share their first seven fields, so each distinct prefix is parsed once
    and only the offset after the last separator is read per handle; a handle that is not
    exactly eight fields is parsed whole. ExtraInfoError as ``parse_extra_info`` raises it."""
    prefixes: dict[str, tuple[ExtraInfo, list[int]]] = {}
    groups: dict[tuple[str, int, int, int], tuple[ExtraInfo, list[int]]] = {}
    for handle in handles:
        prefix, _, offset = handle.rpartition(KEY_SEPARATOR)
        known = prefixes.get(prefix)
        if known is not None and offset.isdecimal():
            known[1].append(int(offset))
            continue
        e = parse_extra_info(handle)
        key = (e.mark, e.queue_id, e.ck_queue_offset, e.pop_time)
        group = groups.get(key)
        if group is None:
            group = groups[key] = (e, [])
        group[1].append(e.queue_offset)
        if prefix.count(KEY_SEPARATOR) == _PREFIX_SEPARATORS:
            prefixes[prefix] = group
    return list(groups.values())


# ----------------------------------------------------------------------------- FIFO counts

QUEUE_OFFSET = "qo"  # ExtraInfoUtil.QUEUE_OFFSET


def queue_offset_key(queue_id: int, queue_offset: int) -> str:
    """ExtraInfoUtil.getQueueOffsetKeyValueKey: ``qo<queueId>%<queueOffset>``."""
    return f"{QUEUE_OFFSET}{queue_id}%{queue_offset}"


def parse_order_count_info(text: str | None) -> dict[str, int]:
    """ExtraInfoUtil.parseOrderCountInfo: ``mark@qo<queueId>%<offset>`` (one message) or
    ``mark@<queueId>`` (the queue's smallest count) -> how often it was delivered before."""
    out: dict[str, int] = {}
    for mark, key, count in _split_info(text):
        if f"{mark}@{key}" in out:
            raise ExtraInfoError(f"parse orderCountInfo error, duplicate, {text}")
        out[f"{mark}@{key}"] = int(count)
    return out


def order_count_of(counts: dict[str, int], stored_topic: str, queue_id: int, offset: int) -> int:
    """A popped FIFO message's earlier deliveries, as MQClientAPIImpl.processPopResponse reads
    them (its own key first, then its queue's)."""
    mark = topic_mark(stored_topic)
    count = counts.get(f"{mark}@{queue_offset_key(queue_id, offset)}")
    if count is None:
        count = counts.get(f"{mark}@{queue_id}", 0)
    return count
