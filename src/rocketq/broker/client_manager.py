"""ProducerManager and ConsumerManager: who is connected, in which group, subscribed to what.

Heartbeats register a client's channel in its producer and consumer groups (ConsumerGroupInfo
keeps the group's subscriptions); UNREGISTER_CLIENT, a closed channel, or a channel silent for
``channel_expired_timeout_ms`` (ClientHousekeepingService, injectable clock) removes it. A
change in a consumer group's membership calls the ids-changed listener, which the broker wires
to ``ConsumerIdsChangeNotifier``: a oneway NOTIFY_CONSUMER_IDS_CHANGED to every member.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from rocketq.broker.proxied_channel import ProxiedChannel, carried_by
from rocketq.common.clock import Clock, now_ms
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.protocol.bodies import ConsumeFromWhere, ConsumeType, MessageModel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import NotifyConsumerIdsChangedRequestHeader
from rocketq.remoting.protocol.subscription import SubscriptionData, is_tag_type

log = logging.getLogger(__name__)

# A client's key: its own connection, or a gRPC client on a proxy's (proxied_channel.py)
ClientChannel = RemotingChannel | ProxiedChannel


class ConsumerGroupEvent(Enum):
    CHANGE = "CHANGE"
    UNREGISTER = "UNREGISTER"
    REGISTER = "REGISTER"


@dataclass(slots=True, eq=False)
class ClientChannelInfo:
    channel: ClientChannel
    client_id: str
    language: str = "JAVA"
    version: int = 0
    last_update_timestamp_ms: int = 0


@dataclass(slots=True, eq=False)
class ConsumerGroupInfo:
    group_name: str
    consume_type: ConsumeType
    message_model: MessageModel
    consume_from_where: ConsumeFromWhere
    channel_info_table: dict[ClientChannel, ClientChannelInfo] = field(default_factory=dict)
    subscription_table: dict[str, SubscriptionData] = field(default_factory=dict)
    # topic -> (clientVersion, bornTime) of a non-tag subscription: what RocketMQ's
    # ConsumerFilterManager keeps per group, for QUERY_CONSUME_QUEUE's filterData
    filter_born: dict[str, tuple[int, int]] = field(default_factory=dict)

    def all_client_ids(self) -> list[str]:
        return [info.client_id for info in self.channel_info_table.values()]

    def all_channels(self) -> list[ClientChannel]:
        return list(self.channel_info_table)

    def find_channel(self, client_id: str) -> ClientChannelInfo | None:
        for info in self.channel_info_table.values():
            if info.client_id == client_id:
                return info
        return None


def _note_filter_born(gi: ConsumerGroupInfo, now: int) -> None:
    """ConsumerFilterManager.register: a non-tag subscription is born when first seen or
    when its client version (subVersion) grows; tag subscriptions have no filter data."""
    for topic, sub in gi.subscription_table.items():
        seen = gi.filter_born.get(topic)
        if is_tag_type(sub.expression_type):
            if seen is not None:
                del gi.filter_born[topic]
        elif seen is None or sub.sub_version > seen[0]:
            gi.filter_born[topic] = (sub.sub_version, now)
    for topic in set(gi.filter_born) - set(gi.subscription_table):
        del gi.filter_born[topic]


IdsChangeListener = Callable[[ConsumerGroupEvent, str, list[ClientChannel]], None]


class ConsumerManager:
    def __init__(
        self,
        listener: IdsChangeListener | None = None,
        *,
        channel_expired_timeout_ms: int = 120_000,
        clock: Clock = now_ms,
    ) -> None:
        self.consumer_table: dict[str, ConsumerGroupInfo] = {}
        self._listener = listener
        self._expiry_ms = channel_expired_timeout_ms
        self._clock = clock
        self._lock = threading.RLock()

    def register_consumer(
        self,
        group: str,
        info: ClientChannelInfo,
        consume_type: ConsumeType,
        message_model: MessageModel,
        consume_from_where: ConsumeFromWhere,
        subscriptions: Iterable[SubscriptionData],
        *,
        is_notify: bool = True,
    ) -> bool:
        """Register or refresh; True when the group's members or subscriptions changed."""
        with self._lock:
            gi = self.consumer_table.get(group)
            if gi is None:
                gi = ConsumerGroupInfo(group, consume_type, message_model, consume_from_where)
                self.consumer_table[group] = gi
            gi.consume_type, gi.message_model = consume_type, message_model
            gi.consume_from_where = consume_from_where
            info.last_update_timestamp_ms = self._clock()
            old = gi.channel_info_table.get(info.channel)
            members_changed = old is None or old.client_id != info.client_id
            gi.channel_info_table[info.channel] = info
            new_subs = {s.topic: s for s in subscriptions}
            subs_changed = set(new_subs) != set(gi.subscription_table)
            gi.subscription_table = new_subs
            _note_filter_born(gi, info.last_update_timestamp_ms)
            channels = gi.all_channels()
        if (members_changed or subs_changed) and is_notify:
            self._notify(ConsumerGroupEvent.CHANGE, group, channels)
        return members_changed or subs_changed

    def unregister_consumer(
        self, group: str, channel: ClientChannel, *, is_notify: bool = True
    ) -> None:
        with self._lock:
            gi = self.consumer_table.get(group)
            if gi is None or gi.channel_info_table.pop(channel, None) is None:
                return
            channels = gi.all_channels()
            if not channels:
                del self.consumer_table[group]
        if is_notify:
            self._notify(ConsumerGroupEvent.CHANGE, group, channels)

    def do_channel_close_event(self, channel: ClientChannel) -> list[str]:
        """Remove ``channel`` (and the gRPC clients it carries) from every group; returns the
        groups they left."""
        with self._lock:
            found = [
                (g, ch)
                for g, gi in self.consumer_table.items()
                for ch in gi.channel_info_table
                if carried_by(ch, channel)
            ]
        for group, ch in found:
            self.unregister_consumer(group, ch)
        return sorted({g for g, _ in found})

    def scan_not_active_channel(self) -> list[ClientChannel]:
        """Drop members silent for longer than the expiry; returns their channels."""
        deadline = self._clock() - self._expiry_ms
        with self._lock:
            stale = [
                (g, ch)
                for g, gi in self.consumer_table.items()
                for ch, info in gi.channel_info_table.items()
                if info.last_update_timestamp_ms < deadline
            ]
        for group, channel in stale:
            log.warning("consumer %s of group %s expired", channel.remote_addr, group)
            self.unregister_consumer(group, channel)
            channel.close()
        return [ch for _, ch in stale]

    def get_consumer_group_info(self, group: str) -> ConsumerGroupInfo | None:
        return self.consumer_table.get(group)

    def find_subscription_data(self, group: str, topic: str) -> SubscriptionData | None:
        gi = self.consumer_table.get(group)
        return None if gi is None else gi.subscription_table.get(topic)

    def consumer_filter_data(self, group: str, topic: str) -> dict[str, object] | None:
        """RocketMQ's ConsumerFilterData of an online non-tag subscription, as fastjson writes
        it (its getters: ``dead`` included, the transient compiled expression left out);
        None for a tag subscription or a group not online."""
        gi = self.consumer_table.get(group)
        sub = None if gi is None else gi.subscription_table.get(topic)
        born = None if gi is None else gi.filter_born.get(topic)
        if sub is None or born is None:
            return None
        return {
            "bornTime": born[1],
            "clientVersion": born[0],
            "consumerGroup": group,
            "dead": False,
            "deadTime": 0,
            "expression": sub.sub_string,
            "expressionType": sub.expression_type,
            "topic": topic,
        }

    def _notify(self, event: ConsumerGroupEvent, group: str, channels: list[ClientChannel]) -> None:
        if self._listener is not None:
            self._listener(event, group, channels)


class ProducerManager:
    def __init__(self, *, channel_expired_timeout_ms: int = 120_000, clock: Clock = now_ms) -> None:
        self.group_channel_table: dict[str, dict[ClientChannel, ClientChannelInfo]] = {}
        self._expiry_ms = channel_expired_timeout_ms
        self._clock = clock
        self._lock = threading.Lock()
        self._round_robin = 0

    def register_producer(self, group: str, info: ClientChannelInfo) -> None:
        info.last_update_timestamp_ms = self._clock()
        with self._lock:
            self.group_channel_table.setdefault(group, {})[info.channel] = info

    def unregister_producer(self, group: str, channel: ClientChannel) -> None:
        with self._lock:
            table = self.group_channel_table.get(group)
            if table is not None:
                table.pop(channel, None)
                if not table:
                    del self.group_channel_table[group]

    def do_channel_close_event(self, channel: ClientChannel) -> None:
        with self._lock:
            found = [
                (g, ch)
                for g, t in self.group_channel_table.items()
                for ch in t
                if carried_by(ch, channel)
            ]
        for group, ch in found:
            self.unregister_producer(group, ch)

    def scan_not_active_channel(self) -> list[ClientChannel]:
        deadline = self._clock() - self._expiry_ms
        with self._lock:
            stale = [
                (g, ch)
                for g, t in self.group_channel_table.items()
                for ch, info in t.items()
                if info.last_update_timestamp_ms < deadline
            ]
        for group, channel in stale:
            log.warning("producer %s of group %s expired", channel.remote_addr, group)
            self.unregister_producer(group, channel)
            channel.close()
        return [ch for _, ch in stale]

    def get_available_channel(self, group: str) -> ClientChannel | None:
        """An open channel of ``group``, round robin over calls (as RocketMQ picks one)."""
        with self._lock:
            channels = [ch for ch in self.group_channel_table.get(group, {}) if not ch.is_closed]
            self._round_robin += 1
            return channels[self._round_robin % len(channels)] if channels else None


class ConsumerIdsChangeNotifier:
    """Sends NOTIFY_CONSUMER_IDS_CHANGED (oneway) to every member of a group that changed.

    Safe to call from any thread: the sends are scheduled on ``loop``.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, *, enabled: bool = True) -> None:
        self._loop = loop
        self._enabled = enabled
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(
        self, event: ConsumerGroupEvent, group: str, channels: list[ClientChannel]
    ) -> None:
        if not self._enabled or event is not ConsumerGroupEvent.CHANGE or not channels:
            return
        self._loop.call_soon_threadsafe(self._schedule, group, channels)

    def _schedule(self, group: str, channels: list[ClientChannel]) -> None:
        task = self._loop.create_task(self._send_all(group, channels))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _send_all(self, group: str, channels: list[ClientChannel]) -> None:
        header = NotifyConsumerIdsChangedRequestHeader(consumer_group=group)
        for channel in channels:
            if channel.is_closed:
                continue
            request = RemotingCommand.create_request(
                RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, header.to_ext_fields()
            )
            request.mark_oneway_rpc()
            try:
                await channel.invoke_oneway(request)
            except Exception as exc:  # noqa: BLE001 -- a dead peer must not stop the others
                log.info("notify consumer ids changed to %s failed: %s", channel.remote_addr, exc)

    async def drain(self) -> None:
        """Wait for the notifications scheduled so far (tests, shutdown)."""
        await asyncio.sleep(0)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
