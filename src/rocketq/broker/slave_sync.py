"""SlaveSynchronize: a slave copies its master's metadata (RocketMQ 4.x).

Every ``slave_sync_interval_ms`` (10 s, first after 3 s) a slave asks its master
(``masterAddr`` from the name server's REGISTER_BROKER answer) for the topic configs
(GET_ALL_TOPIC_CONFIG), consumer offsets (GET_ALL_CONSUMER_OFFSET), delay offsets
(GET_ALL_DELAY_OFFSET) and subscription groups (GET_ALL_SUBSCRIPTIONGROUP_CONFIG), and
persists them. Topic configs and subscription groups are replaced when the master's
DataVersion differs; consumer offsets are merged per ``topic@group`` (``putAll``), so what
the slave holds for groups the master does not know survives. While the master is down the
sync fails (logged, tried again next period) and offsets committed on the slave stay.

Beyond RocketMQ 4.x: offsets committed on the slave (consumers commit there while the master
is out of their route) are handed to the master with UPDATE_CONSUMER_OFFSET before the
slave takes the master's table, where the master's offset is lower; so they survive the
master's return even when no consumer is left to commit them again (4.x would overwrite
them with the master's older offsets). A master's higher offset is never lowered.

Controller mode (beyond RocketMQ 5, whose slaves keep the 10 s poll): the ReplicasManager runs
a round every ``METADATA_POLL_S`` and sets ``broker_id``; the topic-config request then carries
the slave's id and the version it took from this master, so the master answers with the
version alone while nothing moved and knows which version each in-sync slave holds
(broker/metadata_acks.py). The topic table is not part of that round there: it follows the
master by long polls (``follow_topic_config``, broker/topic_config_feed.py), each answer's
changes applied and the next poll, the ack of a create, sent at once. Tables are persisted
only when they changed. Each round's time per table, and the offsets it took, are logged at
DEBUG (a slow round at INFO): the evidence when a change of master replays more than expected
(RELIABILITY.md, "Re-consumption past 2 s after a paused master").
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import Any, Protocol

from rocketq.broker.metadata_acks import (
    CHECK_POINT_FLOOR,
    METADATA_POLL_S,
    SLAVE_BROKER_ID,
    TOPIC_DATA_VERSION,
)
from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.schedule import ScheduleMessageService
from rocketq.broker.subscription_group import SubscriptionGroupManager
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.broker.topic_config_feed import TOPIC_CONFIG_CHANGES, TOPIC_WAIT_MILLIS
from rocketq.errors import RocketQError
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import UpdateConsumerOffsetRequestHeader
from rocketq.response_code import ResponseCode


class SlaveSyncBroker(Protocol):
    """What the slave's copy of the master's tables uses of its broker."""

    topic_config_manager: TopicConfigManager
    consumer_offset_manager: ConsumerOffsetManager
    subscription_group_manager: SubscriptionGroupManager
    remoting_client: RemotingClient

    @property
    def schedule_message_service(self) -> ScheduleMessageService | None: ...


log = logging.getLogger(__name__)

SYNC_TIMEOUT_S = 3.0
#: how long a controller-mode slave lets its master hold a topic-config poll
TOPIC_WAIT_MS = 5000
#: a round longer than this is logged at INFO (every round at DEBUG, with the offsets it took):
#: what a change of master replays grows with the time offsets take to reach the slave
SLOW_ROUND_S = 1.0


class SlaveSynchronize:
    def __init__(self, controller: SlaveSyncBroker) -> None:
        self.broker = controller
        self.master_addr: str | None = None
        self.sync_count = 0
        self.committed_here: dict[tuple[str, int], int] = {}  # not yet handed to the master
        self.broker_id: int | None = None  # controller mode: reported with the topic poll
        self._synced_topic_version: str | None = None  # taken from ``_synced_from``
        self._synced_from: str | None = None
        self._followers = 0  # follow_topic_config loops running (a cancelled one may linger)
        #: the master's check point floor with the last offsets taken (None: not sent)
        self.check_point_floor: int | None = None

    def note_local_commit(self, key: str, queue_id: int, offset: int) -> None:
        """ConsumerOffsetManager.commit_listener on a slave."""
        self.committed_here[(key, queue_id)] = offset

    async def sync_all(self) -> bool:
        """One round; True when all four tables came from the master."""
        addr = self.master_addr
        if not addr:
            return False
        self._note_master(addr)
        began = time.monotonic()
        steps = []
        try:
            for step in (
                self._sync_topic_config,
                self._sync_consumer_offset,
                self._sync_delay_offset,
                self._sync_subscription_group_config,
            ):
                if step != self._sync_topic_config or not self.topic_follower:
                    await step(addr)
                steps.append(time.monotonic())
        except (OSError, ValueError, TimeoutError, RocketQError) as exc:
            log.warning(
                "slave sync from master %s failed after %.3f s: %r",
                addr,
                time.monotonic() - began,
                exc,
            )
            return False
        self.sync_count += 1
        took = steps[-1] - began
        level = logging.INFO if took > SLOW_ROUND_S else logging.DEBUG
        if log.isEnabledFor(level):
            marks = [began, *steps]
            log.log(
                level,
                "metadata round %d from %s: %.3f s (topics, offsets, delay, groups: %s)",
                self.sync_count,
                addr,
                took,
                ", ".join(f"{b - a:.3f}" for a, b in itertools.pairwise(marks)),
            )
        return True

    @property
    def topic_follower(self) -> bool:
        """True while follow_topic_config runs: the rounds leave the topic table to it."""
        return self._followers > 0

    def _note_master(self, addr: str) -> None:
        if addr != self._synced_from:  # a new master: what the last one said does not count
            self._synced_from, self._synced_topic_version = addr, None

    async def follow_topic_config(self) -> None:
        """Controller mode: the master's topic table followed by long polls until cancelled
        (each answer applied, the next poll sent at once; a failed one retried after
        ``METADATA_POLL_S``)."""
        self._followers += 1
        try:
            while True:
                addr = self.master_addr
                if not addr:
                    await asyncio.sleep(METADATA_POLL_S)
                    continue
                self._note_master(addr)
                started = time.monotonic()
                try:
                    moved = await self._sync_topic_config(addr, TOPIC_WAIT_MS)
                except (OSError, ValueError, TimeoutError, RocketQError) as exc:
                    log.warning("slave topic sync from master %s failed: %r", addr, exc)
                    await asyncio.sleep(METADATA_POLL_S)
                    continue
                if not moved and time.monotonic() - started < TOPIC_WAIT_MS / 2000:
                    await asyncio.sleep(METADATA_POLL_S)  # not held (a master that holds none)
        finally:
            self._followers -= 1

    async def _fetch(
        self,
        addr: str,
        code: int,
        fields: dict[str, str] | None = None,
        timeout_s: float = SYNC_TIMEOUT_S,
    ) -> Any:
        request = RemotingCommand.create_request(code, fields or {})
        response = await self.broker.remoting_client.invoke(addr, request, timeout_s)
        if response.code != ResponseCode.SUCCESS:
            raise ValueError(f"master answered {code} with {response.code}: {response.remark}")
        obj = fastjson.loads(bytes(response.body or b"").decode("utf-8"))
        if not isinstance(obj, dict):
            raise ValueError(f"master's answer to {code} is not a JSON object")  # noqa: TRY004 -- a malformed master answer, not a caller's bug
        return obj

    async def _sync_topic_config(self, addr: str, wait_ms: int = 0) -> bool:
        """One topic-config request (held up to ``wait_ms`` by the master while unchanged);
        True when the table moved."""
        manager = self.broker.topic_config_manager
        fields: dict[str, str] = {}
        if self.broker_id is not None:
            fields[SLAVE_BROKER_ID] = str(self.broker_id)
            mine = fastjson.dumps(manager.data_version.to_json()).decode("utf-8")
            if mine == self._synced_topic_version:  # unchanged since we took it: the master
                fields[TOPIC_DATA_VERSION] = mine  # answers with the version alone if it holds
                if wait_ms:  # or holds the request until it moves (topic_config_feed)
                    fields[TOPIC_WAIT_MILLIS] = str(wait_ms)
        timeout_s = SYNC_TIMEOUT_S + wait_ms / 1000
        obj = await self._fetch(addr, RequestCode.GET_ALL_TOPIC_CONFIG, fields, timeout_s)
        if addr != self.master_addr:  # the master changed (or the sync stopped) meanwhile
            return False
        changes = obj.get(TOPIC_CONFIG_CHANGES)
        if changes is not None:
            await self._apply_topic_changes(changes, obj.get("dataVersion"))
            return True
        moved = bool(obj.get("dataVersion") != manager.data_version.to_json())
        if moved:
            if "topicConfigTable" not in obj:
                raise ValueError("the master answered a topic-config version without its table")
            manager.topic_config_table.clear()
            manager.decode(obj)
            await asyncio.to_thread(manager.persist)
            log.info("slave synced the master's topic configs")
        self._synced_topic_version = fastjson.dumps(manager.data_version.to_json()).decode()
        return moved

    async def _apply_topic_changes(self, changes: Any, version: Any) -> None:
        if not isinstance(version, dict) or not (
            isinstance(changes, list) and all(isinstance(c, dict) for c in changes)
        ):
            raise ValueError("the master's topic-config changes are malformed")
        manager = self.broker.topic_config_manager
        if manager.sync_flush:  # answered (and so acked) after the fsync
            await asyncio.to_thread(manager.apply_master_changes, changes, version)
        else:
            manager.apply_master_changes(changes, version)
        self._synced_topic_version = fastjson.dumps(manager.data_version.to_json()).decode()

    async def _sync_consumer_offset(self, addr: str) -> None:
        obj = await self._fetch(addr, RequestCode.GET_ALL_CONSUMER_OFFSET)
        floor = obj.get(CHECK_POINT_FLOOR)
        self.check_point_floor = floor if isinstance(floor, int) else None
        theirs = obj.get("offsetTable") or {}
        await self._hand_over_local_commits(addr, theirs)
        manager = self.broker.consumer_offset_manager
        before = manager.encode()
        merged = manager.encode()
        merged["offsetTable"].update(theirs)
        manager.decode(merged)
        after = manager.encode()
        if after != before:
            if log.isEnabledFor(logging.DEBUG):
                log.debug("offsets taken: %s", offset_changes(before, after))
            await asyncio.to_thread(manager.persist)

    async def _hand_over_local_commits(self, addr: str, theirs: dict[str, Any]) -> None:
        """Commits made on this slave go to the master where its offset is lower; ``theirs``
        (the master's table) is updated to what the master now holds."""
        for (key, queue_id), offset in list(self.committed_here.items()):
            table = theirs.get(key)
            known = fastjson.int_keys(table) if isinstance(table, dict) else {}
            if int(known.get(queue_id, -1)) < offset:
                topic, _, group = key.partition("@")
                header = UpdateConsumerOffsetRequestHeader(
                    consumer_group=group, topic=topic, queue_id=queue_id, commit_offset=offset
                )
                request = RemotingCommand.create_request(
                    RequestCode.UPDATE_CONSUMER_OFFSET, header.to_ext_fields()
                )
                response = await self.broker.remoting_client.invoke(addr, request, SYNC_TIMEOUT_S)
                if response.code != ResponseCode.SUCCESS:
                    raise ValueError(f"master refused offset {key}:{queue_id}: {response.remark}")
                theirs[key] = {**known, queue_id: offset}
                log.info("slave handed offset %s:%d=%d to the master", key, queue_id, offset)
            if self.committed_here.get((key, queue_id)) == offset:  # no newer commit since
                del self.committed_here[(key, queue_id)]

    async def _sync_delay_offset(self, addr: str) -> None:
        service = self.broker.schedule_message_service
        if service is None:
            return
        obj = await self._fetch(addr, RequestCode.GET_ALL_DELAY_OFFSET)
        before = dict(service.offset_table)
        service.decode(obj)
        if service.offset_table != before:
            await asyncio.to_thread(service.persist)

    async def _sync_subscription_group_config(self, addr: str) -> None:
        obj = await self._fetch(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
        manager = self.broker.subscription_group_manager
        if obj.get("dataVersion") != manager.data_version.to_json():
            manager.subscription_group_table.clear()
            manager.decode(obj)
            await asyncio.to_thread(manager.persist)
            log.info("slave synced the master's subscription groups")


def offset_changes(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The offsets that differ between two encoded offset tables, as ``key q: old->new``."""
    old, new = before["offsetTable"], after["offsetTable"]
    changes = []
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key, {}), new.get(key, {})
        changes += [
            f"{key} q{q}: {was.get(q)}->{now.get(q)}"
            for q in sorted(set(was) | set(now))
            if was.get(q) != now.get(q)
        ]
    return "; ".join(changes)
