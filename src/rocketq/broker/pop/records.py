"""The POP state records of the revive topic (store/pop in RocketMQ 5): PopCheckPoint (tag
``ck``), AckMsg (``ack``), BatchAckMsg (``bAck``), their JSON and the revive-topic messages.

fastjson writes a bean's properties sorted by their JSON names, compactly, nulls left out;
PopCheckPoint's ``getReviveTime()`` adds ``reviveTime``. Readers accept the short names and
the long ``alternateNames`` of AckMsg/BatchAckMsg::

    ck   {"bm":0,"bn":"b","c":"g","d":[0,2],"it":60000,"n":2,"pt":1,"q":0,"reviveTime":60001,
          "ro":0,"so":5,"t":"T"}
    ack  {"ao":6,"bn":"b","c":"g","pt":1,"q":0,"so":5,"t":"T"}
    bAck {"ao":-1,"aol":[5,7],"bn":"b","c":"g","pt":1,"q":0,"so":5,"t":"T"}

Each goes to ``rmq_sys_REVIVE_LOG_<cluster>`` queue ``reviveQid`` as a timer message: a ck
due at its revive time - 1 s (PopAckConstants.ackTimeInterval), an ack at the checkpoint's
revive time, with UNIQ_KEY ``genCkUniqueId``/``genAckUniqueId``/``genBatchAckUniqueId``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.json_body import as_int, as_str

REVIVE_TOPIC_PREFIX = "rmq_sys_REVIVE_LOG_"
REVIVE_GROUP = "CID_RMQ_SYS_REVIVE_GROUP"
CK_TAG = "ck"
ACK_TAG = "ack"
BATCH_ACK_TAG = "bAck"
#: rocketq's mark on the ack that cancels a check point whose pop was never answered (its put
#: not confirmed by the in-sync replicas, pop_service.py): the body stays RocketMQ's AckMsg, and
#: a new master reading it (controller_mode/pop_offsets.py) does not count that pop as answered
CANCEL_PROPERTY = "ROCKETQ_POP_CANCEL"
SPLIT = "@"
ACK_TIME_INTERVAL_MS = 1000  # PopAckConstants.ackTimeInterval


def revive_topic(cluster_name: str) -> str:
    """PopAckConstants.buildClusterReviveTopic."""
    return REVIVE_TOPIC_PREFIX + cluster_name


def merge_key(topic: str, group: str, queue_id: int, start: int, pop_time: int, bn: str) -> str:
    """PopReviveService's key of a checkpoint and its acks (Java's string concatenation)."""
    return f"{topic}{group}{queue_id}{start}{pop_time}{bn}"


@dataclass(slots=True)
class PopCheckPoint:
    start_offset: int
    pop_time: int
    invisible_time: int
    num: int
    queue_id: int
    topic: str
    cid: str
    broker_name: str
    queue_offset_diff: list[int] = field(default_factory=list)
    bit_map: int = 0
    revive_offset: int = 0
    re_put_times: str | None = None

    @property
    def revive_time(self) -> int:
        return self.pop_time + self.invisible_time

    def index_of_ack(self, ack_offset: int) -> int:
        """PopCheckPoint.indexOfAck: the bit of ``ack_offset``, -1 if it is not in this ck."""
        if ack_offset < self.start_offset:
            return -1
        if not self.queue_offset_diff:
            diff = ack_offset - self.start_offset
            return diff if diff < self.num else -1
        try:
            return self.queue_offset_diff.index(ack_offset - self.start_offset)
        except ValueError:
            return -1

    def ack_offset_by_index(self, index: int) -> int:
        if not self.queue_offset_diff:
            return self.start_offset + index
        return self.start_offset + self.queue_offset_diff[index]

    def merge_key(self) -> str:
        """PopReviveService's map key: topic + cid + queueId + startOffset + popTime + bn."""
        return merge_key(
            self.topic, self.cid, self.queue_id, self.start_offset, self.pop_time, self.broker_name
        )

    def to_json(self) -> dict[str, Any]:
        obj: dict[str, Any] = {
            "bm": self.bit_map,
            "bn": self.broker_name,
            "c": self.cid,
            "d": list(self.queue_offset_diff),
            "it": self.invisible_time,
            "n": self.num,
            "pt": self.pop_time,
            "q": self.queue_id,
            "reviveTime": self.revive_time,
            "ro": self.revive_offset,
            "so": self.start_offset,
            "t": self.topic,
        }
        if self.re_put_times is not None:
            obj["rp"] = self.re_put_times
        return dict(sorted(obj.items()))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> PopCheckPoint:
        diff = obj.get("d") or []
        rp = obj.get("rp")
        return cls(
            start_offset=as_int(obj, "so"),
            pop_time=as_int(obj, "pt"),
            invisible_time=as_int(obj, "it"),
            num=as_int(obj, "n"),
            queue_id=as_int(obj, "q"),
            topic=as_str(obj, "t"),
            cid=as_str(obj, "c"),
            broker_name=as_str(obj, "bn"),
            queue_offset_diff=[int(d) for d in diff],
            bit_map=as_int(obj, "bm"),
            revive_offset=as_int(obj, "ro"),
            re_put_times=None if rp is None else str(rp),
        )

    def unique_id(self) -> str:
        """PopMessageProcessor.genCkUniqueId."""
        return SPLIT.join(
            map(str, (self.topic, self.queue_id, self.start_offset, self.cid, self.pop_time,
                      self.broker_name, CK_TAG))
        )  # fmt: skip


def _pick(obj: dict[str, Any], short: str, long: str) -> str:
    return short if short in obj else long


@dataclass(slots=True)
class AckMsg:
    ack_offset: int
    start_offset: int
    consumer_group: str
    topic: str
    queue_id: int
    pop_time: int
    broker_name: str

    def merge_key(self, default_broker: str) -> str:
        bn = self.broker_name or default_broker
        return merge_key(
            self.topic, self.consumer_group, self.queue_id, self.start_offset, self.pop_time, bn
        )

    def ack_offsets(self) -> list[int]:
        return [self.ack_offset]

    def to_json(self) -> dict[str, Any]:
        return {
            "ao": self.ack_offset,
            "bn": self.broker_name,
            "c": self.consumer_group,
            "pt": self.pop_time,
            "q": self.queue_id,
            "so": self.start_offset,
            "t": self.topic,
        }

    @classmethod
    def _fields(cls, obj: dict[str, Any]) -> dict[str, Any]:
        return {
            "ack_offset": as_int(obj, _pick(obj, "ao", "ackOffset")),
            "start_offset": as_int(obj, _pick(obj, "so", "startOffset")),
            "consumer_group": as_str(obj, _pick(obj, "c", "consumerGroup")),
            "topic": as_str(obj, _pick(obj, "t", "topic")),
            "queue_id": as_int(obj, _pick(obj, "q", "queueId")),
            "pop_time": as_int(obj, _pick(obj, "pt", "popTime")),
            "broker_name": as_str(obj, _pick(obj, "bn", "brokerName")),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> AckMsg:
        return cls(**cls._fields(obj))

    def unique_id(self) -> str:
        """PopMessageProcessor.genAckUniqueId."""
        return SPLIT.join(
            map(str, (self.topic, self.queue_id, self.ack_offset, self.consumer_group,
                      self.pop_time, self.broker_name, ACK_TAG))
        )  # fmt: skip


@dataclass(slots=True)
class BatchAckMsg(AckMsg):
    ack_offset_list: list[int] = field(default_factory=list)

    def ack_offsets(self) -> list[int]:
        return list(self.ack_offset_list)

    def to_json(self) -> dict[str, Any]:
        obj = AckMsg.to_json(self)
        obj["aol"] = list(self.ack_offset_list)
        return dict(sorted(obj.items()))

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> BatchAckMsg:
        aol = obj.get(_pick(obj, "aol", "ackOffsetList")) or []
        return cls(**cls._fields(obj), ack_offset_list=[int(o) for o in aol])

    def unique_id(self) -> str:
        """PopMessageProcessor.genBatchAckUniqueId (Java's List.toString: ``[5, 7]``)."""
        offsets = "[" + ", ".join(map(str, self.ack_offset_list)) + "]"
        return SPLIT.join(
            map(str, (self.topic, self.queue_id, offsets, self.consumer_group, self.pop_time,
                      BATCH_ACK_TAG))
        )  # fmt: skip


def dumps(record: PopCheckPoint | AckMsg) -> bytes:
    return fastjson.dumps(record.to_json())


def loads_record(tag: str | None, body: bytes) -> PopCheckPoint | AckMsg | None:
    """The record of a revive-topic message by its tag (None: not a POP record)."""
    obj = fastjson.loads(body, f"{tag} record")
    if not isinstance(obj, dict):
        return None
    if tag == CK_TAG:
        return PopCheckPoint.from_json(obj)
    if tag == ACK_TAG:
        return AckMsg.from_json(obj)
    if tag == BATCH_ACK_TAG:
        return BatchAckMsg.from_json(obj)
    return None


def build_revive_message(
    record: PopCheckPoint | AckMsg,
    *,
    topic: str,
    revive_qid: int,
    store_host: tuple[str, int],
    now_ms: int,
    ack_deliver_ms: int = 0,
    cancel: bool = False,
) -> MessageExt:
    """The revive-topic message of ``record``, a timer message (TIMER_DELIVER_MS) as
    PopMessageProcessor.buildCkMsg and AckMessageProcessor.appendAck write it: a ck at its
    revive time - 1 s, an ack at ``ack_deliver_ms`` (the handle's popTime + invisibleTime).
    ``cancel``: the ack cancels an unanswered pop's check point (``CANCEL_PROPERTY``)."""
    if isinstance(record, PopCheckPoint):
        tag, deliver = CK_TAG, record.revive_time - ACK_TIME_INTERVAL_MS
    else:
        tag = BATCH_ACK_TAG if isinstance(record, BatchAckMsg) else ACK_TAG
        deliver = ack_deliver_ms
    props = {
        mc.PROPERTY_TAGS: tag,
        mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: record.unique_id(),
        mc.PROPERTY_TIMER_DELIVER_MS: str(deliver),
    }
    if cancel:
        props[CANCEL_PROPERTY] = "true"
    return MessageExt(
        topic=topic,
        queue_id=revive_qid,
        body=dumps(record),
        properties=props,
        born_timestamp=now_ms,
        born_host=store_host,
        store_host=store_host,
    )
