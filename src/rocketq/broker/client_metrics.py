"""rocketmq-exporter's ``rocketmq_client_consume_*`` families: each online consumer's own
figures, asked at scrape time with GET_CONSUMER_RUNNING_INFO (307), as the exporter's
ClientMetricTaskRunnable asks them through a broker.

Labels ``clientAddr, clientId, group, topic``; values from the client's ``statusTable``
(ConsumerStatsManager.consumeStatus): ``consumeFailedMsgs`` (the last hour),
``consumeFailedTPS``, ``consumeOKTPS``, ``consumeRT``, ``pullRT``, ``pullTPS``.

Bounded: at most ``MAX_CLIENTS`` clients per scrape, asked at once on the broker's event loop,
and whatever has not answered within ``DEADLINE_S`` is left out of that scrape (the scrape
waits no longer). Counted once per cluster: every broker sees every consumer, so a broker
reports a client's topic only when it is the first broker by name among the queues of that
topic the client holds (of any topic when it holds none of it; itself when it holds none).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from rocketq.broker.broker2client import Broker2Client
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.consumer_bodies import ConsumerRunningInfo
from rocketq.remoting.protocol.headers import GetConsumerRunningInfoRequestHeader
from rocketq.response_code import ResponseCode

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

log = logging.getLogger(__name__)

MAX_CLIENTS = 128
DEADLINE_S = 1.5
CLIENT_LABELS = ("clientAddr", "clientId", "group", "topic")
# family name, help (RMQMetricsCollector's), the ConsumeStatus field it reads
FAMILIES = (
    (
        "rocketmq_client_consume_fail_msg_count",
        "consumerClientFailedMsgCounts",
        "consume_failed_msgs",
    ),
    ("rocketmq_client_consume_fail_msg_tps", "consumerClientFailedTPS", "consume_failed_tps"),
    ("rocketmq_client_consume_ok_msg_tps", "consumerClientOKTPS", "consume_ok_tps"),
    ("rocketmq_client_consume_rt", "consumerClientRT", "consume_rt"),
    ("rocketmq_client_consumer_pull_rt", "consumerClientPullRT", "pull_rt"),
    ("rocketmq_client_consumer_pull_tps", "consumerClientPullTPS", "pull_tps"),
)

Answer = tuple[str, str, str, ConsumerRunningInfo]  # group, client addr, client id, info


class ClientRuntimeFamilies:
    def __init__(self, broker: BrokerContext, loop: asyncio.AbstractEventLoop | None) -> None:
        self.broker = broker
        self.loop = loop

    def collect(self) -> Iterator[Metric]:
        families = [GaugeMetricFamily(n, h, labels=CLIENT_LABELS) for n, h, _ in FAMILIES]
        for group, addr, client_id, info in self._running_infos():
            for topic, status in sorted(info.status_table.items()):
                if not reports_topic(info, topic, self.broker.config.broker_name):
                    continue
                for family, (_, _, field_name) in zip(families, FAMILIES, strict=True):
                    value = float(getattr(status, field_name))
                    family.add_metric([addr, client_id, group, topic], value)
        yield from families

    def _running_infos(self) -> list[Answer]:
        loop = self.loop
        if loop is None or loop.is_closed():
            return []
        future = asyncio.run_coroutine_threadsafe(self._ask_all(), loop)
        try:
            return future.result(timeout=DEADLINE_S + 1.0)
        except (TimeoutError, concurrent.futures.CancelledError, RuntimeError):  # loop closing
            future.cancel()
            return []

    async def _ask_all(self) -> list[Answer]:
        clients = [
            (group, info.channel.remote_addr, info.client_id)
            for group, group_info in sorted(self.broker.consumer_manager.consumer_table.items())
            for info in list(group_info.channel_info_table.values())
        ][:MAX_CLIENTS]
        tasks = [asyncio.ensure_future(self._ask(*client)) for client in clients]
        if not tasks:
            return []
        done, pending = await asyncio.wait(tasks, timeout=DEADLINE_S)
        for task in pending:
            task.cancel()
        answers = [task.result() for task in done if task.exception() is None]
        return [answer for answer in answers if answer is not None]

    async def _ask(self, group: str, addr: str, client_id: str) -> Answer | None:
        header = GetConsumerRunningInfoRequestHeader(consumer_group=group, client_id=client_id)
        request = RemotingCommand.create_request(
            RequestCode.GET_CONSUMER_RUNNING_INFO, header.to_ext_fields()
        )
        response = await Broker2Client(self.broker).call_consumer(
            RequestCode.GET_CONSUMER_RUNNING_INFO, request, group, client_id
        )
        if response.code != ResponseCode.SUCCESS or not response.body:
            log.debug("running info of %s in %s: %s", client_id, group, response.remark)
            return None
        try:
            return group, addr, client_id, ConsumerRunningInfo.decode(response.body)
        except (ValueError, KeyError, TypeError) as exc:
            log.debug("running info of %s in %s does not decode: %s", client_id, group, exc)
            return None


def reports_topic(info: ConsumerRunningInfo, topic: str, broker_name: str) -> bool:
    """Whether the broker ``broker_name`` is the one that reports ``topic`` of this client: the
    first by name among the brokers of the queues of ``topic`` it holds (of any topic when it
    holds none of ``topic``; every broker when it holds no queue at all)."""
    held = [queue.broker_name for queue in info.mq_table if queue.topic == topic]
    brokers = held or [queue.broker_name for queue in info.mq_table]
    return not brokers or min(brokers) == broker_name
