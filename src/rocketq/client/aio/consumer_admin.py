"""What a consumer answers when an admin asks through the broker (ClientRemotingProcessor's
consumer side): its running info (307), consuming one message on demand (309) and moving its
queues to offsets a reset chose (220).

Theory of operation: each consumer answers for itself (``ConsumerMember``) by calling these
functions with its own parts: its config, rebalance (process queues and subscriptions), offset
store, consume service, pull tasks, the instance's statistics and a rebalance-now callable.
A consumer without a part (not started, or a lite pull consumer) passes None or asks for the
refusal that fits.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import sys
import time
import traceback
from collections.abc import Callable
from enum import Enum

from rocketq.client.aio.consume_service import ConsumeService
from rocketq.client.aio.offset_store import OffsetStore, ReadOffsetType
from rocketq.client.aio.rebalance_impl import RebalanceImpl
from rocketq.client.config import ConsumerConfig
from rocketq.client.consumer_stats import ConsumerStatsManager
from rocketq.client.message import restore_retry_topic
from rocketq.client.status import ConsumeStatus
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.remoting.protocol.bodies import MessageQueueData
from rocketq.remoting.protocol.consumer_bodies import (
    PROP_CONSUME_ORDERLY,
    PROP_CONSUMER_START_TIMESTAMP,
    PROP_THREADPOOL_CORE_SIZE,
    CMResult,
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
    ProcessQueueInfo,
)
from rocketq.remoting.protocol.custom_header import camel_case

log = logging.getLogger(__name__)


def _mq_data(mq: MessageQueue) -> MessageQueueData:
    return MessageQueueData(topic=mq.topic, broker_name=mq.broker_name, queue_id=mq.queue_id)


def _config_properties(config: ConsumerConfig) -> dict[str, str]:
    """MixAll.object2Properties of the consumer's config: camelCase names (Java's for the
    settings without a unit, e.g. ``consumerGroup``, ``messageModel``, ``pullBatchSize``;
    the unit stays in the others, e.g. ``brokerSuspendMaxTimeS``), values as text."""
    props: dict[str, str] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        props[camel_case(f.name)] = str(value.name if isinstance(value, Enum) else value)
    return props


def jstack() -> str:
    """Every thread's stack, the way ``jstack`` shows a JVM's (jstackEnable)."""
    parts = []
    for ident, frame in sys._current_frames().items():
        parts.append(f"Thread {ident}:\n{''.join(traceback.format_stack(frame))}")
    return "\n".join(parts)


async def consumer_running_info(
    config: ConsumerConfig,
    *,
    orderly: bool,
    core_pool_size: int,
    start_timestamp_ms: int,
    rebalance: RebalanceImpl | None,
    offset_store: OffsetStore | None,
    stats: ConsumerStatsManager | None,
    with_jstack: bool,
) -> ConsumerRunningInfo:
    """The settings always; subscriptions, queues, statistics and stacks once it rebalances."""
    info = ConsumerRunningInfo(properties=_config_properties(config))
    info.properties[PROP_CONSUME_ORDERLY] = "true" if orderly else "false"
    info.properties[PROP_THREADPOOL_CORE_SIZE] = str(core_pool_size)
    info.properties[PROP_CONSUMER_START_TIMESTAMP] = str(start_timestamp_ms)
    if rebalance is None:
        return info
    info.subscription_set = list(rebalance.subscription_inner.values())
    for mq, pq in sorted(rebalance.process_queue_table.items()):
        commit = -1
        if offset_store is not None:
            commit = await offset_store.read_offset(mq, ReadOffsetType.MEMORY_FIRST_THEN_STORE)
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
    if stats is not None:
        for topic in sorted(rebalance.subscription_inner):
            info.status_table[topic] = stats.consume_status(config.consumer_group, topic)
    if with_jstack:
        info.jstack = jstack()
    return info


def _wall_ms(monotonic_s: float) -> int:
    return int((time.time() - (time.monotonic() - monotonic_s)) * 1000)


def no_message_listener() -> ConsumeMessageDirectlyResult:
    """The answer of a consumer that has no listener to run (lite pull, or not started)."""
    return ConsumeMessageDirectlyResult(
        consume_result=CMResult.CR_THROW_EXCEPTION,
        remark="this consumer has no message listener (not a started push consumer)",
    )


async def consume_message_directly(
    service: ConsumeService | None, group: str, msg: MessageExt, broker_name: str | None
) -> ConsumeMessageDirectlyResult:
    """ConsumeMessage*Service.consumeMessageDirectly: run the listener on this one message."""
    if service is None:
        return no_message_listener()
    restore_retry_topic(msg, group)
    orderly = bool(service.orderly)
    started = time.monotonic()
    try:
        status: object
        if inspect.iscoroutinefunction(service.listener):
            status = service.listener([msg])
            if inspect.isawaitable(status):
                status = await status
        else:
            status = await asyncio.to_thread(service.listener, [msg])
        if inspect.isawaitable(status):
            status = await status
    except Exception:  # noqa: BLE001 -- a listener's error: CR_THROW_EXCEPTION, as RocketMQ
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


def reset_offset_ignored(group: str, topic: str) -> None:
    """As Java: only push consumers are reset; any other consumer logs and goes on."""
    log.warning("reset offset of %s ignored: %s is not a push consumer", topic, group)


async def reset_offset(
    topic: str,
    offsets: dict[MessageQueue, int],
    *,
    group: str,
    rebalance: RebalanceImpl | None,
    store: OffsetStore | None,
    pull_tasks: dict[MessageQueue, asyncio.Task[None]],
    rebalance_now: Callable[[], None],
) -> None:
    """MQClientInstance.resetOffset: drop the topic's queues, store and persist the new
    offsets, then rebalance at once so the queues are pulled again from there."""
    if rebalance is None or store is None:
        return
    dropped: list[MessageQueue] = []
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
    log.info("offsets of %s in %s reset: %s", topic, group, offsets)
    rebalance_now()
