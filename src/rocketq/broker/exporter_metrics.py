"""rocketmq-exporter's topic, group and broker families, computed by this broker at scrape time.

rocketmq-exporter (MetricsCollectTask) walks the name server's topics and asks every master;
here each master answers for itself, with the exporter's names, label lists and formulas:

- ``rocketmq_producer_tps`` / ``_message_size`` {cluster, broker, topic}: TOPIC_PUT_NUMS /
  TOPIC_PUT_SIZE per second over the last minute (VIEW_BROKER_STATS_DATA's statsMinute.tps,
  two decimals); retry and DLQ topics left out, as collectBrokerStatsTopic does;
- ``rocketmq_consumer_tps`` / ``_message_size`` {cluster, broker, topic, group}: GROUP_GET_NUMS
  / GROUP_GET_SIZE the same way; ``rocketmq_send_back_nums``: SNDBCK_PUT_NUMS' minute sum;
- ``rocketmq_producer_offset`` {cluster, broker, topic}: the sum of the write queues' max
  offsets (GET_TOPIC_STATS_INFO); ``rocketmq_topic_retry_offset`` for %RETRY% topics and
  ``rocketmq_topic_dlq_offset`` {cluster, broker, group} for %DLQ% ones;
- per (topic, group) that QUERY_TOPIC_CONSUME_BY_WHO names, from GET_CONSUME_STATS
  (``rocketq.broker.consume_stats``, counting a queue with no committed offset from 0):
  ``rocketmq_consumer_offset`` {cluster, broker, topic, group} (committed offsets summed),
  and for CLUSTERING groups ``rocketmq_group_diff`` / ``_retrydiff`` / ``_dlqdiff`` {group,
  topic, countOfOnlineConsumers, msgModel} (computeTotalDiff; msgModel is the MessageModel
  ordinal, "1") plus ``cluster`` and ``broker`` because each broker reports its own queues
  (the dashboards sum by group and topic), and ``rocketmq_group_get_latency_by_storetime``
  (ms since the store time of the oldest unconsumed message, the maximum over the queues);
  ``rocketmq_group_count`` {caddr, localaddr, group}: the consumers online;
- ``rocketmq_producer_count`` {cluster, broker, group}: producers online per group;
- ``rocketmq_broker_tps`` / ``_qps`` {cluster, brokerIP, broker}: BROKER_PUT_NUMS /
  BROKER_GET_NUMS per second over the last minute.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from rocketq.broker.broker_stats_manager import (
    BROKER_GET_NUMS,
    BROKER_PUT_NUMS,
    GROUP_GET_NUMS,
    GROUP_GET_SIZE,
    SNDBCK_PUT_NUMS,
    TOPIC_PUT_NUMS,
    TOPIC_PUT_SIZE,
)
from rocketq.broker.consume_stats import consume_stats, topic_consumed_by
from rocketq.common.topic import DLQ_GROUP_TOPIC_PREFIX, is_dlq_topic, is_retry_topic
from rocketq.remoting.protocol.admin_bodies import ConsumeStats
from rocketq.remoting.protocol.bodies import MessageModel

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext

TOPIC_LABELS = ("cluster", "broker", "topic")
GROUP_LABELS = ("cluster", "broker", "topic", "group")
DLQ_LABELS = ("cluster", "broker", "group")
DIFF_LABELS = ("group", "topic", "countOfOnlineConsumers", "msgModel", "cluster", "broker")


def _gauge(name: str, help_text: str, labels: tuple[str, ...]) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, help_text, labels=labels)


class ExporterFamilies:
    """One scrape's worth of rocketmq-exporter families for ``broker``."""

    def __init__(self, broker: BrokerContext) -> None:
        self.broker = broker
        config = broker.config
        self.cluster, self.name = config.broker_cluster_name, config.broker_name

    def collect(self) -> Iterator[Metric]:
        yield from self._stats()
        yield from self._offsets()
        yield from self._groups()
        yield from self._broker()

    def _minute_tps(self, stats_name: str, family: GaugeMetricFamily, consumer: bool) -> None:
        manager = self.broker.broker_stats_manager
        now = manager.clock_ms()
        for item in sorted(manager.sets[stats_name].items(), key=lambda i: i.stats_key):
            topic, _, group = item.stats_key.partition("@")
            if is_retry_topic(topic) or is_dlq_topic(topic):
                continue
            values = [self.cluster, self.name, topic] + ([group] if consumer else [])
            family.add_metric(values, round(item.stats_in_minute(now).tps, 2))

    def _stats(self) -> Iterator[Metric]:
        put_tps = _gauge("rocketmq_producer_tps", "TopicPutNums", TOPIC_LABELS)
        put_size = _gauge("rocketmq_producer_message_size", "TopicPutMessageSize", TOPIC_LABELS)
        get_tps = _gauge("rocketmq_consumer_tps", "GroupGetNums", GROUP_LABELS)
        get_size = _gauge("rocketmq_consumer_message_size", "GroupGetMessageSize", GROUP_LABELS)
        self._minute_tps(TOPIC_PUT_NUMS, put_tps, consumer=False)
        self._minute_tps(TOPIC_PUT_SIZE, put_size, consumer=False)
        self._minute_tps(GROUP_GET_NUMS, get_tps, consumer=True)
        self._minute_tps(GROUP_GET_SIZE, get_size, consumer=True)
        send_back = _gauge("rocketmq_send_back_nums", "SendBackNums", GROUP_LABELS)
        manager = self.broker.broker_stats_manager
        now = manager.clock_ms()
        for item in sorted(manager.sets[SNDBCK_PUT_NUMS].items(), key=lambda i: i.stats_key):
            topic, _, group = item.stats_key.partition("@")
            values = [self.cluster, self.name, topic, group]
            send_back.add_metric(values, item.stats_in_minute(now).sum)
        yield from (put_tps, put_size, get_tps, get_size, send_back)

    def _offsets(self) -> Iterator[Metric]:
        offset = _gauge("rocketmq_producer_offset", "TopicOffset", TOPIC_LABELS)
        retry = _gauge("rocketmq_topic_retry_offset", "TopicRetryOffset", TOPIC_LABELS)
        dlq = _gauge("rocketmq_topic_dlq_offset", "TopicRetryOffset", DLQ_LABELS)
        store = self.broker.message_store
        table = dict(self.broker.topic_config_manager.topic_config_table)
        for topic, config in sorted(table.items()):
            total = sum(
                max(0, store.get_max_offset_in_queue(topic, queue_id))
                for queue_id in range(config.write_queue_nums)
            )
            if is_retry_topic(topic):
                retry.add_metric([self.cluster, self.name, topic], total)
            elif is_dlq_topic(topic):
                group = topic.replace(DLQ_GROUP_TOPIC_PREFIX, "")
                dlq.add_metric([self.cluster, self.name, group], total)
            else:
                offset.add_metric([self.cluster, self.name, topic], total)
        producers = _gauge(
            "rocketmq_producer_count", "producer instance counter", ("cluster", "broker", "group")
        )
        channels = dict(self.broker.producer_manager.group_channel_table)
        for group, table_of_group in sorted(channels.items()):
            producers.add_metric([self.cluster, self.name, group], len(table_of_group))
        yield from (offset, retry, dlq, producers)

    def _groups(self) -> Iterator[Metric]:
        diffs = {
            kind: _gauge(f"rocketmq_group_{kind}", help_text, DIFF_LABELS)
            for kind, help_text in (
                ("diff", "GroupDiff"),
                ("retrydiff", "GroupRetryDiff"),
                ("dlqdiff", "GroupDLQDiff"),
            )
        }
        count = _gauge("rocketmq_group_count", "GroupCount", ("caddr", "localaddr", "group"))
        offset = _gauge("rocketmq_consumer_offset", "GroupBrokerTotalOffset", GROUP_LABELS)
        latency = _gauge(
            "rocketmq_group_get_latency_by_storetime", "GroupGetLatencyByStoreTime", GROUP_LABELS
        )
        counted: set[str] = set()
        table = dict(self.broker.topic_config_manager.topic_config_table)
        for topic in sorted(table):
            if is_dlq_topic(topic):
                continue
            for group in sorted(topic_consumed_by(self.broker, topic)):
                info = self.broker.consumer_manager.get_consumer_group_info(group)
                channels = list(info.channel_info_table.values()) if info is not None else []
                if group not in counted:
                    counted.add(group)
                    addrs = ",".join(c.channel.remote_addr for c in channels)
                    ids = ",".join(c.client_id for c in channels)
                    count.add_metric([addrs, ids, group], len(channels))
                stats = consume_stats(self.broker, group, {topic})
                if not stats.offset_table:
                    continue
                values = [self.cluster, self.name, topic, group]
                committed = sum(w.consumer_offset for w in stats.offset_table.values())
                offset.add_metric(values, committed)
                model = info.message_model if info is not None else MessageModel.CLUSTERING
                if model != MessageModel.CLUSTERING:
                    continue
                kind = "retrydiff" if is_retry_topic(topic) else "diff"
                diff_values = [group, topic, str(len(channels)), str(int(model)), self.cluster]
                diffs[kind].add_metric([*diff_values, self.name], stats.compute_total_diff())
                latency.add_metric(values, self._latency_ms(topic, stats))
        yield from (*diffs.values(), count, offset, latency)

    def _latency_ms(self, topic: str, stats: ConsumeStats) -> int:
        """MetricsCollectTask's lag time: now minus the store time of the message at the
        committed offset (at the queue's min offset when that one is gone), 0 when caught up."""
        store = self.broker.message_store
        now, worst = store.now_ms(), 0
        for queue, wrapper in stats.offset_table.items():
            if wrapper.consumer_offset >= wrapper.broker_offset:
                continue
            at = max(wrapper.consumer_offset, store.get_min_offset_in_queue(topic, queue.queue_id))
            stored = store.get_message_store_timestamp(topic, queue.queue_id, at)
            if stored > 0:
                worst = max(worst, now - stored)
        return worst

    def _broker(self) -> Iterator[Metric]:
        manager = self.broker.broker_stats_manager
        now = manager.clock_ms()
        labels = ("cluster", "brokerIP", "broker")
        values = [self.cluster, self.broker.broker_addr, self.name]
        for name, stats_name, help_text in (
            ("rocketmq_broker_tps", BROKER_PUT_NUMS, "BrokerPutNums"),
            ("rocketmq_broker_qps", BROKER_GET_NUMS, "BrokerGetNums"),
        ):
            family = _gauge(name, help_text, labels)
            item = manager.sets[stats_name].get(self.cluster)
            tps = item.stats_in_minute(now).tps if item is not None else 0.0
            family.add_metric(values, round(tps, 2))
            yield family
