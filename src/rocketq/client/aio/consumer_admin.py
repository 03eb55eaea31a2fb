"""What a consumer answers when an admin asks through the broker (ClientRemotingProcessor's
consumer side): its running info (307), consuming one message on demand (309) and moving its
queues to offsets a reset chose (220).

Works on the push consumer's parts (rebalance process queues, offset store, consume
service) and, for running info, on any consumer core.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
import time
import traceback
from typing import Any

from rocketq.client.aio.offset_store import ReadOffsetType
from rocketq.client.message import restore_retry_topic
from rocketq.client.status import ConsumeStatus
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.remoting.bodies import MessageQueueData
from rocketq.remoting.consumer_bodies import (
    PROP_CONSUME_ORDERLY,
    PROP_CONSUMER_START_TIMESTAMP,
    PROP_THREADPOOL_CORE_SIZE,
    CMResult,
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
    ProcessQueueInfo,
)
from rocketq.remoting.header_base import camel_case

log = logging.getLogger(__name__)


def _mq_data(mq: MessageQueue) -> MessageQueueData:
    return MessageQueueData(topic=mq.topic, broker_name=mq.broker_name, queue_id=mq.queue_id)


def _config_properties(config: Any) -> dict[str, str]:
    """MixAll.object2Properties of the consumer's config: camelCase names (Java's for the
    settings without a unit, e.g. ``consumerGroup``, ``messageModel``, ``pullBatchSize``;
    the unit stays in the others, e.g. ``brokerSuspendMaxTimeS``), values as text."""
    props: dict[str, str] = {}
    for name in getattr(config, "__dataclass_fields__", {}):
        value = getattr(config, name)
        props[camel_case(name)] = str(getattr(value, "name", value))
    return props


def jstack() -> str:
    """Every thread's stack, the way ``jstack`` shows a JVM's (jstackEnable)."""
    parts = []
    for ident, frame in sys._current_frames().items():
        parts.append(f"Thread {ident}:\n{''.join(traceback.format_stack(frame))}")
    return "\n".join(parts)


async def consumer_running_info(consumer: Any, *, with_jstack: bool) -> ConsumerRunningInfo:
    info = ConsumerRunningInfo(properties=_config_properties(consumer.config))
    orderly = bool(getattr(consumer, "_orderly", False))
    info.properties[PROP_CONSUME_ORDERLY] = "true" if orderly else "false"
    info.properties[PROP_THREADPOOL_CORE_SIZE] = str(
        getattr(consumer.config, "consume_thread_max", 1)
    )
    info.properties[PROP_CONSUMER_START_TIMESTAMP] = str(consumer.start_timestamp_ms)
    rebalance = getattr(consumer, "_rebalance", None)
    if rebalance is None:
        return info
    info.subscription_set = list(rebalance.subscription_inner.values())
    store = consumer.offset_store
    for mq, pq in sorted(rebalance.process_queue_table.items()):
        commit = -1
        if store is not None:
            commit = await store.read_offset(mq, ReadOffsetType.MEMORY_FIRST_THEN_STORE)
        cached = list(pq.msg_tree_map)
        consuming = list(pq.consuming)
        info.mq_table[_mq_data(mq)] = ProcessQueueInfo(
            commit_offset=commit,
            cached_msg_min_offset=cached[0] if cached else 0,
            cached_msg_max_offset=cached[-1] if cached else 0,
            cached_msg_count=len(cached),
            cached_msg_size_in_mib=pq.msg_size // (1024 * 1024),
            transaction_msg_min_offset=min(consuming) if consuming else 0,
            transaction_msg_max_offset=max(consuming) if consuming else 0,
            transaction_msg_count=len(consuming),
            locked=pq.locked,
            droped=pq.dropped,
            last_pull_timestamp=_wall_ms(pq.last_pull_monotonic),
            last_lock_timestamp=_wall_ms(pq.last_lock_monotonic) if pq.last_lock_monotonic else 0,
        )
    stats = consumer._instance.consumer_stats_manager
    for topic in sorted(rebalance.subscription_inner):
        info.status_table[topic] = stats.consume_status(consumer.group, topic)
    if with_jstack:
        info.jstack = jstack()
    return info


def _wall_ms(monotonic_s: float) -> int:
    return int((time.time() - (time.monotonic() - monotonic_s)) * 1000)


async def consume_message_directly(
    consumer: Any, msg: MessageExt, broker_name: str | None
) -> ConsumeMessageDirectlyResult:
    """ConsumeMessage*Service.consumeMessageDirectly: run the listener on this one message."""
    service = getattr(consumer, "_consume", None)
    if service is None:
        return ConsumeMessageDirectlyResult(
            consume_result=CMResult.CR_THROW_EXCEPTION,
            remark="this consumer has no message listener (not a started push consumer)",
        )
    restore_retry_topic(msg, consumer.group)
    orderly = bool(service.orderly)
    started = time.monotonic()
    try:
        if inspect.iscoroutinefunction(service.listener):
            status = await service.listener([msg])
        else:
            status = await asyncio.to_thread(service.listener, [msg])
        if inspect.isawaitable(status):
            status = await status
    except Exception:
        return ConsumeMessageDirectlyResult(
            consume_result=CMResult.CR_THROW_EXCEPTION,
            order=orderly,
            remark=traceback.format_exc(),
            spent_time_mills=int((time.monotonic() - started) * 1000),
        )
    spent = int((time.monotonic() - started) * 1000)
    if status is None:
        result = CMResult.CR_RETURN_NULL
    elif status is ConsumeStatus.CONSUME_SUCCESS:
        result = CMResult.CR_SUCCESS
    else:
        result = CMResult.CR_LATER
    log.info("consumed %s directly (broker %s): %s", msg.msg_id, broker_name, result.name)
    return ConsumeMessageDirectlyResult(
        consume_result=result, order=orderly, auto_commit=True, spent_time_mills=spent
    )


async def reset_offset(consumer: Any, topic: str, offsets: dict[MessageQueue, int]) -> None:
    """MQClientInstance.resetOffset: drop the topic's queues, store and persist the new
    offsets, then rebalance at once so the queues are pulled again from there."""
    rebalance = getattr(consumer, "_rebalance", None)
    store = consumer.offset_store
    if not hasattr(consumer, "_pull_tasks"):  # as Java: only push consumers are reset
        log.warning("reset offset of %s ignored: %s is not a push consumer", topic, consumer.group)
        return
    if rebalance is None or store is None:
        return
    dropped = []
    pull_tasks: dict[MessageQueue, asyncio.Task[None]] = consumer._pull_tasks
    for mq, pq in list(rebalance.process_queue_table.items()):
        if mq.topic == topic:
            pq.dropped = True
            task = pull_tasks.pop(mq, None)
            if task is not None:
                task.cancel()
            pq.clear()
            dropped.append(mq)
    for mq, offset in offsets.items():
        store.update_offset(mq, offset, increase_only=False)
    await store.persist_all(set(offsets))
    for mq in dropped:
        rebalance.process_queue_table.pop(mq, None)
        if mq in offsets:
            store.remove_offset(mq)
    log.info("offsets of %s in %s reset: %s", topic, consumer.group, offsets)
    instance = getattr(consumer, "_instance", None)
    if instance is not None:
        instance.rebalance_immediately()
