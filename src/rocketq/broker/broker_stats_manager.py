"""BrokerStatsManager: the broker's own figures, kept as RocketMQ keeps them.

- per topic and group: ``TOPIC_PUT_NUMS``/``TOPIC_PUT_SIZE`` (key: topic),
  ``GROUP_GET_NUMS``/``GROUP_GET_SIZE`` (key: ``topic@group``), ``SNDBCK_PUT_NUMS``,
  ``BROKER_PUT_NUMS``/``BROKER_GET_NUMS`` (key: cluster), each a ``StatsItemSet`` with minute,
  hour and day windows (VIEW_BROKER_STATS_DATA, mqadmin statsAll);
- StoreStatsService's: put count and bytes, the put latency distribution and maximum, found,
  missed and transferred pulls, and their TPS over 10 s, 1 min and 10 min (``putTps`` ...);
- BrokerStats' daily totals: at the first sample of a new local day, today's morning totals
  become yesterday's (``msgPutTotalYesterdayMorning`` ...).

Everything is counted once here; GET_BROKER_RUNTIME_INFO and the Prometheus collector
(``rocketq.broker.metrics``) only read it. Threading: every ``record_*`` and ``sample`` call
runs on the broker's event loop thread, so the hot path takes no lock; the collector's thread
only reads ints and copies dicts (consistent under the GIL).
"""

from __future__ import annotations

import bisect
import datetime
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from rocketq.broker.stats_item import StatsItemSet
from rocketq.common.clock import now_ms
from rocketq.remoting import native_frames
from rocketq.remoting.native_frames import PUT_LATENCIES, SIZES

try:  # the put figures of a flush in one C call (stats.c); ROCKETQ_NATIVE=0: the Python below
    from rocketq._native import _stats as _native_stats
except ImportError:  # pragma: no cover - a source tree without the built extension
    _native_stats = None  # type: ignore[assignment]

TOPIC_PUT_NUMS = "TOPIC_PUT_NUMS"
TOPIC_PUT_SIZE = "TOPIC_PUT_SIZE"
GROUP_GET_NUMS = "GROUP_GET_NUMS"
GROUP_GET_SIZE = "GROUP_GET_SIZE"
SNDBCK_PUT_NUMS = "SNDBCK_PUT_NUMS"
BROKER_PUT_NUMS = "BROKER_PUT_NUMS"
BROKER_GET_NUMS = "BROKER_GET_NUMS"
STATS_NAMES = (
    TOPIC_PUT_NUMS,
    TOPIC_PUT_SIZE,
    GROUP_GET_NUMS,
    GROUP_GET_SIZE,
    SNDBCK_PUT_NUMS,
    BROKER_PUT_NUMS,
    BROKER_GET_NUMS,
)

# StoreStatsService's put latency buckets (ms upper bounds; the last is open)
PUT_LATENCY_BOUNDS_MS = (0, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000)
PUT_LATENCY_LABELS = (
    "<=0ms",
    "0~10ms",
    "10~50ms",
    "50~100ms",
    "100~200ms",
    "200~500ms",
    "500ms~1s",
    "1~2s",
    "2~3s",
    "3~4s",
    "4~5s",
    "5~10s",
    "10s~",
)
TPS_WINDOWS_S = (10, 60, 600)
# rocketmq_message_size buckets (bytes): 1 KB, 4 KB, 512 KB, 1 MB, 2 MB, 4 MB, then overflow
MESSAGE_SIZE_BOUNDS = (1024, 4096, 512 * 1024, 1024 * 1024, 2 * 1024 * 1024, 4 * 1024 * 1024)
SAMPLE_RING_SIZE = 601


@dataclass(frozen=True, slots=True)
class CallCounts:
    """A per-second sample of the store counters (StoreStatsService's CallSnapshot ring)."""

    timestamp_ms: int
    put_times: int
    get_found: int
    get_miss: int
    get_transfered: int


class BrokerStatsManager:
    def __init__(self, cluster_name: str, *, clock_ms: Callable[[], int] = now_ms):
        self.cluster_name = cluster_name
        self.clock_ms = clock_ms
        self.sets = {name: StatsItemSet(name, clock_ms) for name in STATS_NAMES}
        self._topic_put_nums = self.sets[TOPIC_PUT_NUMS]
        self._topic_put_size = self.sets[TOPIC_PUT_SIZE]
        self._broker_put_nums = self.sets[BROKER_PUT_NUMS]
        self.put_message_times_total = 0
        self.put_message_size_total = 0
        self.put_message_entire_time_max_ms = 0
        self.put_latency_counts = [0] * len(PUT_LATENCY_LABELS)
        self.get_message_times_total_found = 0
        self.get_message_times_total_miss = 0
        self.get_message_transfered_msg_count = 0
        # (topic, message_type) -> [messages, bytes]: the message_type label of the metrics
        self.put_by_type: dict[tuple[str, str], list[int]] = {}
        # topic -> message counts per MESSAGE_SIZE_BOUNDS bucket (a batch: its average size)
        self.message_sizes: dict[str, list[int]] = {}
        # (topic, group, queue id) -> next offset handed out by a pull (in-flight = it - commit)
        self.pull_offsets: dict[tuple[str, str, int], int] = {}
        # what stats.c's count_puts writes: these very dicts (never rebound), so the readers
        # (metrics, runtime info, VIEW_BROKER_STATS_DATA) see the same values either way
        self._put_tables = (
            self._topic_put_nums._items,
            self._topic_put_size._items,
            self._broker_put_nums._items,
            cluster_name,
            self.put_by_type,
            self.message_sizes,
            MESSAGE_SIZE_BOUNDS,
            self.put_latency_counts,
            PUT_LATENCY_BOUNDS_MS,
        )
        self._ring: deque[CallCounts] = deque([self._counts()], maxlen=SAMPLE_RING_SIZE)
        self.msg_put_total_yesterday_morning = 0
        self.msg_put_total_today_morning = 0
        self.msg_get_total_yesterday_morning = 0
        self.msg_get_total_today_morning = 0
        self._day = self._local_day(clock_ms())

    # ------------------------------------------------------------------ recording

    def record_put(
        self, topic: str, msg_num: int, wrote_bytes: int, *, message_type: str = "Normal"
    ) -> None:
        """A successful put (SendMessageProcessor.handlePutMessageResult)."""
        self._topic_put_nums.add_value(topic, msg_num, 1)
        self._topic_put_size.add_value(topic, wrote_bytes, 1)
        self._broker_put_nums.add_value(self.cluster_name, msg_num, 1)
        self.put_message_times_total += msg_num
        self.put_message_size_total += wrote_bytes
        pair = self.put_by_type.get((topic, message_type))
        if pair is None:
            pair = self.put_by_type[(topic, message_type)] = [0, 0]
        pair[0] += msg_num
        pair[1] += wrote_bytes
        sizes = self.message_sizes.get(topic)
        if sizes is None:
            sizes = self.message_sizes[topic] = [0] * (len(MESSAGE_SIZE_BOUNDS) + 1)
        sizes[bisect.bisect_left(MESSAGE_SIZE_BOUNDS, wrote_bytes // max(msg_num, 1))] += msg_num

    def record_flush(
        self, elapsed_s: list[float], by_topic: dict[str, list[int]], message_type: str
    ) -> None:
        """``record_put_latencies(elapsed_s)`` then ``record_puts_by_topic(by_topic, ...)``:
        a flush's figures, in one C call (stats.c's ``count_flush``) when the native paths are
        on and it reads them all (a topic's first put goes the Python way)."""
        native = _native_stats if native_frames.FRAMES is not None else None
        if native is not None:
            left = native.count_flush(self, self._put_tables, by_topic, message_type, elapsed_s)
            if left is not None:
                for topic in left:
                    self._record_single_puts(topic, by_topic[topic], message_type)
                return
        self.record_put_latencies(elapsed_s)
        self.record_puts_by_topic(by_topic, message_type)

    def record_puts_by_topic(self, by_topic: dict[str, list[int]], message_type: str) -> None:
        """``record_single_puts`` of each topic's sizes (a flush's single sends, answered
        together: send_answer.py): one C call for them all (stats.c's ``count_puts``, the same
        writes) when the native paths are on; the topics it leaves (a first put creates the
        entries) and ``ROCKETQ_NATIVE=0`` go the Python way."""
        native = _native_stats if native_frames.FRAMES is not None else None
        if native is not None:
            left = native.count_puts(self, self._put_tables, by_topic, message_type)
            if not left:
                return
            for topic in left:
                self._record_single_puts(topic, by_topic[topic], message_type)
            return
        for topic, sizes in by_topic.items():
            self._record_single_puts(topic, sizes, message_type)

    def record_single_puts(self, topic: str, sizes: list[int], message_type: str) -> None:
        """``record_put(topic, 1, size, message_type=...)`` for each size, in one call (the
        single sends of one flush, answered together: send_answer.py); the same figures."""
        self.record_puts_by_topic({topic: sizes}, message_type)

    def _record_single_puts(self, topic: str, sizes: list[int], message_type: str) -> None:
        """``record_single_puts``' Python (stats.c's reference)."""
        n = len(sizes)
        total = sum(sizes)
        self._topic_put_nums.add_value(topic, n, n)
        self._topic_put_size.add_value(topic, total, n)
        self._broker_put_nums.add_value(self.cluster_name, n, n)
        self.put_message_times_total += n
        self.put_message_size_total += total
        pair = self.put_by_type.get((topic, message_type))
        if pair is None:
            pair = self.put_by_type[(topic, message_type)] = [0, 0]
        pair[0] += n
        pair[1] += total
        counts = self.message_sizes.get(topic)
        if counts is None:
            counts = self.message_sizes[topic] = [0] * (len(MESSAGE_SIZE_BOUNDS) + 1)
        native = native_frames.FRAMES  # the loop below in one C call (None: it declines)
        if (
            native is not None
            and native.count_figures(counts, MESSAGE_SIZE_BOUNDS, sizes, 1.0, SIZES, 0) is not None
        ):
            return
        last, index = -1, 0
        for size in sizes:
            if size != last:  # a burst's sizes often repeat
                last, index = size, bisect.bisect_left(MESSAGE_SIZE_BOUNDS, size)
            counts[index] += 1

    def record_put_latency(self, elapsed_ms: float) -> None:
        """StoreStatsService.setPutMessageEntireTimeMax: the distribution and the maximum."""
        value = int(elapsed_ms)
        # <=0 -> 0; then the first bucket whose bound is above the value (10s~ past the last)
        index = 0 if value <= 0 else bisect.bisect_right(PUT_LATENCY_BOUNDS_MS, value, lo=1)
        self.put_latency_counts[index] += 1
        if value > self.put_message_entire_time_max_ms:
            self.put_message_entire_time_max_ms = value

    def record_put_latencies(self, elapsed_s: list[float]) -> None:
        """``record_put_latency`` of each put (seconds here), in one call (the single sends of
        one flush, answered together: send_answer.py); the same figures."""
        counts = self.put_latency_counts
        top = self.put_message_entire_time_max_ms
        native = native_frames.FRAMES  # the loop below in one C call (None: it declines)
        if native is not None:
            counted = native.count_figures(
                counts, PUT_LATENCY_BOUNDS_MS, elapsed_s, 1000.0, PUT_LATENCIES, top
            )
            if counted is not None:
                self.put_message_entire_time_max_ms = counted
                return
        for elapsed in elapsed_s:
            value = int(elapsed * 1000)
            counts[
                0 if value <= 0 else bisect.bisect_right(PUT_LATENCY_BOUNDS_MS, value, lo=1)
            ] += 1
            if value > top:
                top = value
        self.put_message_entire_time_max_ms = top

    def record_send_back(self, group: str, topic: str) -> None:
        self.sets[SNDBCK_PUT_NUMS].add_value(f"{topic}@{group}", 1, 1)

    def record_get(
        self,
        group: str,
        topic: str,
        queue_id: int,
        msg_count: int,
        size_bytes: int,
        next_offset: int,
    ) -> None:
        """A pull that found messages (PullMessageProcessor on FOUND)."""
        key = f"{topic}@{group}"
        self.sets[GROUP_GET_NUMS].add_value(key, msg_count, 1)
        self.sets[GROUP_GET_SIZE].add_value(key, size_bytes, 1)
        self.sets[BROKER_GET_NUMS].add_value(self.cluster_name, msg_count, 1)
        self.get_message_times_total_found += 1
        self.get_message_transfered_msg_count += msg_count
        self.pull_offsets[(topic, group, queue_id)] = next_offset

    def record_get_miss(self) -> None:
        self.get_message_times_total_miss += 1

    def on_topic_deleted(self, topic: str) -> None:
        """DELETE_TOPIC_IN_BROKER: the topic's items go (RocketMQ's onTopicDeleted)."""
        for name in (TOPIC_PUT_NUMS, TOPIC_PUT_SIZE):
            self.sets[name].remove(topic)
        for name in (GROUP_GET_NUMS, GROUP_GET_SIZE, SNDBCK_PUT_NUMS):
            self.sets[name].remove_by_prefix(f"{topic}@")
        for key in [k for k in self.pull_offsets if k[0] == topic]:
            del self.pull_offsets[key]
        for pair in [k for k in self.put_by_type if k[0] == topic]:
            del self.put_by_type[pair]

    # ------------------------------------------------------------------ sampling

    def sample(self) -> None:
        """Called every second: snapshots of every item, the TPS ring and the day roll."""
        now = self.clock_ms()
        for stats in self.sets.values():
            stats.sample(now)
        self._ring.append(self._counts(now))
        day = self._local_day(now)
        if day != self._day:  # BrokerStats.record at midnight
            self._day = day
            self.msg_put_total_yesterday_morning = self.msg_put_total_today_morning
            self.msg_get_total_yesterday_morning = self.msg_get_total_today_morning
            self.msg_put_total_today_morning = self.put_message_times_total
            self.msg_get_total_today_morning = self.get_message_transfered_msg_count

    def _counts(self, now_ms: int | None = None) -> CallCounts:
        return CallCounts(
            self.clock_ms() if now_ms is None else now_ms,
            self.put_message_times_total,
            self.get_message_times_total_found,
            self.get_message_times_total_miss,
            self.get_message_transfered_msg_count,
        )

    @staticmethod
    def _local_day(now_ms: int) -> datetime.date:
        return datetime.datetime.fromtimestamp(now_ms / 1000).date()

    def tps(self, field: str, window_s: int) -> float:
        """Per-second rate of a CallCounts field over the last ``window_s`` seconds."""
        last = self._counts()
        ring = tuple(self._ring)  # a copy: /metrics and runtime info read off the loop
        first = next(
            (c for c in ring if last.timestamp_ms - c.timestamp_ms <= window_s * 1000), ring[-1]
        )
        elapsed_ms = max(last.timestamp_ms - first.timestamp_ms, 1)
        delta = int(getattr(last, field)) - int(getattr(first, field))
        return delta * 1000.0 / elapsed_ms

    def _tps_text(self, field: str) -> str:
        return " ".join(f"{self.tps(field, w):.2f}" for w in TPS_WINDOWS_S)

    def _total_tps_text(self) -> str:
        return " ".join(
            f"{self.tps('get_found', w) + self.tps('get_miss', w):.2f}" for w in TPS_WINDOWS_S
        )

    # ------------------------------------------------------------------ runtime info

    def runtime_info(self) -> dict[str, str]:
        """The keys of GET_BROKER_RUNTIME_INFO that the broker's stats answer."""
        distribution = " ".join(
            f"[{label}]:{count}"
            for label, count in zip(PUT_LATENCY_LABELS, self.put_latency_counts, strict=True)
        )
        put_total, put_size = self.put_message_times_total, self.put_message_size_total
        get_total = self.get_message_transfered_msg_count
        info = {
            "msgPutTotalYesterdayMorning": str(self.msg_put_total_yesterday_morning),
            "msgPutTotalTodayMorning": str(self.msg_put_total_today_morning),
            "msgPutTotalTodayNow": str(put_total),
            "msgGetTotalYesterdayMorning": str(self.msg_get_total_yesterday_morning),
            "msgGetTotalTodayMorning": str(self.msg_get_total_today_morning),
            "msgGetTotalTodayNow": str(get_total),
            "putMessageTimesTotal": str(put_total),
            "putMessageSizeTotal": str(put_size),
            "putMessageAverageSize": f"{put_size / put_total if put_total else 0.0:.1f}",
            "putMessageEntireTimeMax": str(self.put_message_entire_time_max_ms),
            "putMessageDistributeTime": distribution,
            "getMessageTimesTotalFound": str(self.get_message_times_total_found),
            "getMessageTimesTotalMiss": str(self.get_message_times_total_miss),
            "getMessageTransferedMsgCount": str(get_total),
        }
        info["putTps"] = self._tps_text("put_times")
        info["getFoundTps"] = self._tps_text("get_found")
        info["getMissTps"] = self._tps_text("get_miss")
        info["getTransferedTps"] = self._tps_text("get_transfered")
        info["getTotalTps"] = self._total_tps_text()
        return info
