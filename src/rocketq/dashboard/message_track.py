"""Whether each consumer group of a message's topic consumed it: DefaultMQAdminExtImpl's
messageTrackDetail (what rocketmq-dashboard shows as a message's "messageTrackDetail"), over
``rocketq.admin``. A group is asked for its connection (no consumer online: NOT_ONLINE; a pull
consumer: PULL, its progress is its own; broadcasting: CONSUME_BROADCASTING, the offsets live
in each client), then its committed offset of the message's queue on the broker that stored it
decides CONSUMED (offset past the message; CONSUMED_BUT_FILTERED when the group's tags of the
topic exclude it) or NOT_CONSUME_YET. Unlike the Java tool, a group online with no committed
offset for the queue is NOT_CONSUME_YET (the Java tool reports NOT_ONLINE from the empty
consume stats)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from rocketq.admin import AsyncAdminClient
from rocketq.common.message import MessageExt
from rocketq.errors import ClientError, ConsumerNotOnlineError, RocketQError, describe
from rocketq.remoting.protocol.admin_bodies import ConsumerConnection
from rocketq.remoting.protocol.bodies import ConsumeType, MessageModel
from rocketq.remoting.protocol.topic_route import MASTER_ID


class TrackType(enum.Enum):
    """tools.admin.api.TrackType."""

    CONSUMED = "CONSUMED"
    CONSUMED_BUT_FILTERED = "CONSUMED_BUT_FILTERED"
    PULL = "PULL"
    NOT_CONSUME_YET = "NOT_CONSUME_YET"
    NOT_ONLINE = "NOT_ONLINE"
    CONSUME_BROADCASTING = "CONSUME_BROADCASTING"
    UNKNOWN = "UNKNOWN"


@dataclass(slots=True)
class MessageTrack:
    consumer_group: str
    track_type: TrackType = TrackType.UNKNOWN
    exception_desc: str = ""
    client_ids: list[str] = field(default_factory=list)  # who can consume it again directly


async def message_track_detail(admin: AsyncAdminClient, msg: MessageExt) -> list[MessageTrack]:
    """One MessageTrack per group that subscribes to or has offsets on the message's topic."""
    groups = (await admin.query_topic_consume_by_who(msg.topic)).group_list
    return [await _track(admin, msg, group) for group in groups]


async def _track(admin: AsyncAdminClient, msg: MessageExt, group: str) -> MessageTrack:
    track = MessageTrack(group)
    try:
        conn = await admin.examine_consumer_connection_info(group)
    except ConsumerNotOnlineError as exc:
        track.track_type, track.exception_desc = TrackType.NOT_ONLINE, describe(exc)
        return track
    except RocketQError as exc:
        track.exception_desc = describe(exc)
        return track
    track.client_ids = sorted(c.client_id for c in conn.connection_set)
    if conn.message_model == MessageModel.BROADCASTING:
        track.track_type = TrackType.CONSUME_BROADCASTING
    elif conn.consume_type == ConsumeType.CONSUME_ACTIVELY:
        track.track_type = TrackType.PULL
    else:
        try:
            consumed = await _consumed(admin, msg, group)
        except RocketQError as exc:
            track.exception_desc = describe(exc)
            return track
        track.track_type = _filtered(conn, msg) if consumed else TrackType.NOT_CONSUME_YET
    return track


async def _consumed(admin: AsyncAdminClient, msg: MessageExt, group: str) -> bool:
    """DefaultMQAdminExtImpl.consumed: the group's offset of the message's queue on the master
    that stored it is past the message."""
    try:
        stats = await admin.examine_consume_stats(group, msg.topic)
    except ClientError:  # no committed offset on any queue of the topic
        return False
    info = await admin.examine_broker_cluster_info()
    store_host = f"{msg.store_host[0]}:{msg.store_host[1]}"
    for mq, wrapper in stats.offset_table.items():
        if mq.topic != msg.topic or mq.queue_id != msg.queue_id:
            continue
        data = info.broker_addr_table.get(mq.broker_name)
        if data is not None and data.broker_addrs.get(MASTER_ID) == store_host:
            return wrapper.consumer_offset > msg.queue_offset
    return False


def _filtered(conn: ConsumerConnection, msg: MessageExt) -> TrackType:
    """CONSUMED_BUT_FILTERED when the group's subscription of the topic names tags and not
    the message's."""
    sub = conn.subscription_table.get(msg.topic)
    if sub is None or not sub.tags_set or "*" in sub.tags_set or msg.tags in sub.tags_set:
        return TrackType.CONSUMED
    return TrackType.CONSUMED_BUT_FILTERED
