"""PullAPIWrapper: one PULL_MESSAGE for a queue, and the decoding of what it returns.

Bodies are decoded with decompression on; messages whose TAGS are not in the subscription's
tag set are dropped (the broker filters by hash only); each message shows its UNIQ_KEY as
``msg_id`` (MessageClientExt) and gets MIN_OFFSET / MAX_OFFSET like the Java client.

A pull that failed in a way a fresher route may cure asks :func:`route_moved`: it re-reads the
topic's route (rate-limited) and says whether the queue is now read from another address (a
new master, or a slave while the group has none), so the pull loop tries there at once
instead of after ``pull_time_delay_when_exception_s``.
"""

from __future__ import annotations

from rocketq.client.aio.instance import MQClientInstance
from rocketq.client.aio.route_refresher import needs_route_refresh
from rocketq.client.status import PullResult, PullStatus
from rocketq.common import message_const as mc
from rocketq.common import native_record
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.message_decoder import decode_messages
from rocketq.common.message_id import bytes_to_host
from rocketq.common.pull_sys_flag import build_sys_flag
from rocketq.remoting.protocol.subscription import SubscriptionData, is_tag_matched
from rocketq.remoting.protocol.topic_route import MASTER_ID


async def pull_kernel(
    instance: MQClientInstance,
    group: str,
    mq: MessageQueue,
    subscription: SubscriptionData,
    offset: int,
    max_nums: int,
    *,
    commit_offset: int = 0,
    suspend_s: float = 0.0,
    timeout_s: float,
) -> PullResult:
    result, body = await pull_raw(
        instance,
        group,
        mq,
        subscription,
        offset,
        max_nums,
        commit_offset=commit_offset,
        suspend_s=suspend_s,
        timeout_s=timeout_s,
    )
    if result.status is PullStatus.FOUND:
        result.msg_found_list = process_pull_body(body, subscription, result)
    return result


async def pull_raw(
    instance: MQClientInstance,
    group: str,
    mq: MessageQueue,
    subscription: SubscriptionData,
    offset: int,
    max_nums: int,
    *,
    commit_offset: int = 0,
    suspend_s: float = 0.0,
    timeout_s: float,
) -> tuple[PullResult, bytes]:
    """One PULL_MESSAGE; the body undecoded (a caller that decodes it elsewhere, off the
    loop, e.g. the Spark reader's columnar decoder)."""
    broker_id = instance.pull_from_which_node.get(mq, MASTER_ID)
    addr, is_slave = await instance.find_broker_addr_in_subscribe_or_refresh(
        mq.broker_name, mq.topic, broker_id
    )
    instance.pull_addr_table[mq] = addr  # where a failure happened, for route_moved
    if is_slave:  # a slave does not take the commit offset a pull carries
        commit_offset = 0
    fields = pull_ext_fields(
        group,
        mq.topic,
        mq.queue_id,
        offset,
        max_nums,
        build_sys_flag(commit_offset=commit_offset > 0, suspend=suspend_s > 0, subscription=True),
        commit_offset,
        int(suspend_s * 1000),
        subscription,
    )
    result, body = await instance.api.pull_message(addr, fields, timeout_s)
    instance.pull_from_which_node[mq] = result.suggest_which_broker_id
    return result, body


def pull_ext_fields(
    group: str,
    topic: str,
    queue_id: int,
    queue_offset: int,
    max_msg_nums: int,
    sys_flag: int,
    commit_offset: int,
    suspend_timeout_millis: int,
    subscription: SubscriptionData,
) -> dict[str, str]:
    """``PullMessageRequestHeader(...).to_ext_fields()`` written out, the same keys in the
    same order (every pull pays it: no header object, no per-field reflection)."""
    return {
        "consumerGroup": group,
        "topic": topic,
        "queueId": str(queue_id),
        "queueOffset": str(queue_offset),
        "maxMsgNums": str(max_msg_nums),
        "sysFlag": str(sys_flag),
        "commitOffset": str(commit_offset),
        "suspendTimeoutMillis": str(suspend_timeout_millis),
        "subVersion": str(subscription.sub_version),
        "subscription": subscription.sub_string,
        "expressionType": subscription.expression_type,
    }


class PullFields:
    """One queue's successive pull fields: :func:`pull_ext_fields`'s dict kept, and a copy of
    it with the three fields that move from pull to pull (queueOffset, sysFlag,
    commitOffset) for the next one, while the others are the same (one dict copy and three
    ``str`` instead of eleven entries)."""

    __slots__ = ("_key", "_last")

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._last: dict[str, str] = {}

    def fields(
        self,
        group: str,
        topic: str,
        queue_id: int,
        queue_offset: int,
        max_msg_nums: int,
        sys_flag: int,
        commit_offset: int,
        suspend_timeout_millis: int,
        subscription: SubscriptionData,
    ) -> dict[str, str]:
        key = (
            group,
            topic,
            queue_id,
            max_msg_nums,
            suspend_timeout_millis,
            subscription.sub_version,
            subscription.sub_string,
            subscription.expression_type,
        )
        if key != self._key:
            self._key = key
            self._last = pull_ext_fields(
                group,
                topic,
                queue_id,
                queue_offset,
                max_msg_nums,
                sys_flag,
                commit_offset,
                suspend_timeout_millis,
                subscription,
            )
            return self._last.copy()  # a hook may change the request's fields: not ours
        fields = self._last.copy()
        fields["queueOffset"] = str(queue_offset)
        fields["sysFlag"] = str(sys_flag)
        fields["commitOffset"] = str(commit_offset)
        return fields


def process_pull_body(
    body: bytes, subscription: SubscriptionData, result: PullResult
) -> list[MessageExt]:
    """A FOUND pull's messages as the listener gets them (PullAPIWrapper.processPullResult):
    decoded with decompression, those whose TAGS the subscription does not take dropped, each
    with its UNIQ_KEY as ``msg_id`` and the pull's MIN_OFFSET / MAX_OFFSET.

    In C (``decode_records`` given the two offsets) when the record paths are compiled and
    every record is one the C walk decodes; else :func:`process_pull_body_reference`."""
    compiled = native_record.RECORD
    min_offset, max_offset = str(result.min_offset), str(result.max_offset)  # once a pull
    if compiled is None:
        return process_pull_body_reference(body, subscription, min_offset, max_offset)
    msgs, _pos, stopped = compiled.decode_records(
        body, 0, False, True, True, MessageExt, bytes_to_host, min_offset, max_offset
    )
    if stopped:  # a record the C walk leaves to Python (compressed, corrupt): all of it there
        return process_pull_body_reference(body, subscription, min_offset, max_offset)
    if subscription.matches_all or not subscription.tags_set:
        return msgs
    return [m for m in msgs if is_tag_matched(subscription, m.tags)]


def process_pull_body_reference(
    body: bytes, subscription: SubscriptionData, min_offset: str, max_offset: str
) -> list[MessageExt]:
    """:func:`process_pull_body` in Python: the reference of its C path."""
    msgs = decode_messages(body, decompress=True)
    kept = []
    for msg in msgs:
        if not is_tag_matched(subscription, msg.tags):
            continue
        properties = msg.properties
        msg.msg_id = properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or msg.msg_id
        properties[mc.PROPERTY_MIN_OFFSET] = min_offset
        properties[mc.PROPERTY_MAX_OFFSET] = max_offset
        kept.append(msg)
    return kept


def _pull_addr(instance: MQClientInstance, mq: MessageQueue) -> str | None:
    broker_id = instance.pull_from_which_node.get(mq, MASTER_ID)
    found = instance.find_broker_address_in_subscribe(mq.broker_name, broker_id)
    return None if found is None else found[0]


async def route_moved(instance: MQClientInstance, mq: MessageQueue, exc: BaseException) -> bool:
    """After a failed pull: True when a re-read route sends ``mq``'s next pull elsewhere.

    A route read a moment after a broker died may still list it (the name server learns of
    the closed connection a moment later): one more read after the rate-limit window.
    """
    if not needs_route_refresh(exc):
        return False
    before = instance.pull_addr_table.get(mq) or _pull_addr(instance, mq)
    refresher = instance.route_refresher
    for refresh in (refresher.refresh_now, refresher.refresh_next_window):
        await refresh(mq.topic)
        if instance.find_broker_addr(mq.broker_name) is not None:
            instance.pull_from_which_node[mq] = MASTER_ID  # a master again: read from it
        after = _pull_addr(instance, mq)
        if after is None or after != before:
            return after is not None
    return False
