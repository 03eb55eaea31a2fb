"""The KV table of GET_BROKER_RUNTIME_INFO (AdminBrokerProcessor.prepareRuntimeInfo), read by
mqadmin brokerStatus and clusterList, the dashboard, rocketmq-exporter's BrokerRuntimeStats and
our own ``rocketmq_brokeruntime_*`` families (``rocketq.broker.exporter_runtime``).

Every key BrokerRuntimeStats parses is present, so rocketmq-exporter pointed at this broker
reads it. Keys of thread pools rocketq does not have (it answers every request on the event
loop: no send, pull or query pool, so no queue and no head wait) are ``0``, and
``getMessageEntireTimeMax`` (not measured) is ``0``; ``remainTransientStoreBufferNumbs`` is
Integer.MAX_VALUE, TransientStorePool's answer when the pool is off (rocketq has none).
It reads the store and the file systems: call it off the event loop.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rocketq.broker.disk_info import disk_runtime_info, human_size
from rocketq.remoting.protocol.codes import CURRENT_VERSION, version_desc

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

# BrokerController.getRuntimeInfo: MQVersion.CURRENT_VERSION's ordinal and its name
BROKER_VERSION = CURRENT_VERSION
BROKER_VERSION_DESC = version_desc(CURRENT_VERSION)
JAVA_INT_MAX = 2**31 - 1

# rocketq has no send/pull/query/... thread pools (BrokerController's *ThreadPoolQueue)
_NO_THREAD_POOL = {
    f"{pool}ThreadPoolQueue{what}": "0"
    for pool in ("send", "pull", "litePull", "query")
    for what in ("Size", "Capacity", "HeadWaitTimeMills")
}


def broker_runtime_info(broker: BrokerContext) -> dict[str, str]:
    table = {
        "brokerVersionDesc": BROKER_VERSION_DESC,
        "brokerVersion": str(BROKER_VERSION),
        "bootTimestamp": str(broker.start_time_ms),
        "runtime": runtime_text(broker.start_time_ms),
        "brokerName": broker.config.broker_name,
        "brokerAddr": broker.broker_addr,
    }
    store = broker.message_store
    table.update(store.get_runtime_info())
    table.update(broker.broker_stats_manager.runtime_info())
    table.update(disk_runtime_info(broker))
    table.update(_NO_THREAD_POOL)
    queue = store.commit_log.mapped_file_queue
    to_flush = max(0, queue.get_max_offset() - queue.flushed_where)
    table["remainHowManyDataToFlush"] = human_size(to_flush)
    table["remainTransientStoreBufferNumbs"] = str(JAVA_INT_MAX)
    table["dispatchMaxBuffer"] = "0"  # DefaultMessageStore.dispatchMaxBuffer: always 0
    table["getMessageEntireTimeMax"] = "0"
    return table


def runtime_text(start_ms: int) -> str:
    seconds = max(0, int(time.time() - start_ms / 1000))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"[ {days} days, {hours} hours, {minutes} minutes, {secs} seconds ]"
