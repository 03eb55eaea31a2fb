"""MQClientInstance: what every producer and consumer of one client id shares.

Theory of operation (MQClientInstance.java): one ``RemotingClient`` (connections to the name
server and brokers), the route table, the broker address table and four timers: route refresh
(``poll_name_server_interval_s``), heartbeat to every broker, consumer offset persistence, and
rebalance, which also runs at once when a broker sends NOTIFY_CONSUMER_IDS_CHANGED or a member
asks for it. ``MQClientInstance.get`` returns the instance of a client id on the running loop,
creating it; the last member to leave shuts it down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ClassVar, Protocol

from rocketq.client.aio.api import MQClientAPI
from rocketq.client.aio.client_remoting_processor import ClientRemotingProcessor
from rocketq.client.aio.consumer_member import ConsumerMember
from rocketq.client.aio.request_reply import RequestFutureHolder
from rocketq.client.aio.route_refresher import RouteRefresher
from rocketq.client.config import ClientConfig
from rocketq.client.consumer_stats import ConsumerStatsManager
from rocketq.client.fault import TopicPublishInfo
from rocketq.common import message_const as mc
from rocketq.common.message import MessageQueue
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic_config import PERM_READ, PERM_WRITE
from rocketq.errors import RocketQError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.bodies import HeartbeatData, ProducerData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.topic_route import MASTER_ID, TopicRouteData

log = logging.getLogger(__name__)


class ProducerMember(Protocol):
    group: str

    def publish_topics(self) -> set[str]: ...
    def update_topic_publish_info(self, topic: str, info: TopicPublishInfo) -> None: ...


def publish_info_of(topic: str, route: TopicRouteData, max_queues: int = 0) -> TopicPublishInfo:
    """topicRouteData2TopicPublishInfo: the write queues of brokers that have a master."""
    masters = {b.broker_name for b in route.broker_datas if MASTER_ID in b.broker_addrs}
    queues: list[MessageQueue] = []
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        if qd.perm & PERM_WRITE and qd.broker_name in masters:
            count = min(qd.write_queue_nums, max_queues) if max_queues else qd.write_queue_nums
            queues.extend(MessageQueue(topic, qd.broker_name, i) for i in range(count))
    return TopicPublishInfo(message_queue_list=queues, have_topic_router_info=True)


def subscribe_info_of(topic: str, route: TopicRouteData) -> set[MessageQueue]:
    return {
        MessageQueue(topic, qd.broker_name, i)
        for qd in route.queue_datas
        if qd.perm & PERM_READ
        for i in range(qd.read_queue_nums)
    }


class MQClientInstance:
    _instances: ClassVar[dict[tuple[int, str, str], MQClientInstance]] = {}

    @classmethod
    def get(cls, config: ClientConfig) -> MQClientInstance:
        loop = asyncio.get_running_loop()
        # clients with other credentials must not share a connection signed with these
        key = (id(loop), config.build_client_id(), config.access_key)
        instance = cls._instances.get(key)
        if instance is None:
            instance = cls._instances[key] = cls(config, key[1])
            instance._key = key
        return instance

    def __init__(self, config: ClientConfig, client_id: str) -> None:
        self.config = config
        self.client_id = client_id
        self.remoting = RemotingClient(
            namesrv_addrs=config.namesrv_addrs, rpc_hook=config.rpc_hook()
        )
        self.api = MQClientAPI(self.remoting, config.request_timeout_s)
        self.topic_route_table: dict[str, TopicRouteData] = {}
        self.broker_addr_table: dict[str, dict[int, str]] = {}
        # PullAPIWrapper.pullFromWhichNodeTable: the broker id each queue pulls from next
        self.pull_from_which_node: dict[MessageQueue, int] = {}
        self.pull_addr_table: dict[MessageQueue, str] = {}  # where each queue last pulled
        self.producers: dict[str, ProducerMember] = {}
        self.consumers: dict[str, ConsumerMember] = {}
        self._key: tuple[int, str, str] = (0, client_id, config.access_key)
        self._tasks: list[asyncio.Task[None]] = []
        self._rebalance_wakeup = asyncio.Event()
        self._route_lock = asyncio.Lock()
        # a route read again at once when a broker fails (rate-limited; route_refresher.py)
        self.route_refresher = RouteRefresher(self.update_topic_route)
        self.remoting.register_processor(
            RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, self._on_notify_consumer_ids_changed
        )
        self.remoting.register_processor(
            RequestCode.CHECK_TRANSACTION_STATE, self._on_check_transaction_state
        )
        self._checks: set[asyncio.Task[None]] = set()
        self.request_futures = RequestFutureHolder()
        self.consumer_stats_manager = ConsumerStatsManager()
        ClientRemotingProcessor(self.remoting, self.consumers, self.request_futures).register()

    # ------------------------------------------------------------------ membership

    def register_producer(self, member: ProducerMember) -> None:
        if member.group in self.producers:
            raise RocketQError(f"producer group {member.group} is already in {self.client_id}")
        self.producers[member.group] = member
        self._start()

    def register_consumer(self, member: ConsumerMember) -> None:
        if member.group in self.consumers:
            raise RocketQError(f"consumer group {member.group} is already in {self.client_id}")
        self.consumers[member.group] = member
        self._start()

    async def unregister(self, *, producer: str | None = None, consumer: str | None = None) -> None:
        """Forget a member, tell every broker (UNREGISTER_CLIENT); the last one stops us."""
        if producer is not None:
            self.producers.pop(producer, None)
        if consumer is not None:
            self.consumers.pop(consumer, None)
        for addr in self.all_broker_addrs():
            with contextlib.suppress(RocketQError, OSError):
                await self.api.unregister_client(addr, self.client_id, producer, consumer)
        if not self.producers and not self.consumers:
            await self.shutdown()

    def _start(self) -> None:
        if self._tasks:
            return
        c = self.config
        self._tasks = [
            self._spawn(self._every(c.poll_name_server_interval_s, self.update_all_routes)),
            self._spawn(self._every(c.heartbeat_broker_interval_s, self.send_heartbeat_to_all)),
            self._spawn(self._every(c.persist_consumer_offset_interval_s, self._persist_all)),
            self._spawn(self._rebalance_loop()),
        ]

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return asyncio.get_running_loop().create_task(coro)

    async def shutdown(self) -> None:
        MQClientInstance._instances.pop(self._key, None)
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.route_refresher.shutdown()
        await self.remoting.shutdown()

    # ------------------------------------------------------------------ timers

    async def _every(self, interval_s: float, job: Callable[[], Awaitable[None]]) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                await job()
            except Exception:  # a timer outlives one failed round, as ScheduledExecutorService
                log.exception("%s: %s failed", self.client_id, job.__name__)

    async def _persist_all(self) -> None:
        for consumer in list(self.consumers.values()):
            await consumer.persist_consumer_offset()

    async def _rebalance_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.config.rebalance_interval_s):
                    await self._rebalance_wakeup.wait()
            self._rebalance_wakeup.clear()
            await self.do_rebalance()

    def rebalance_immediately(self) -> None:
        self._rebalance_wakeup.set()

    async def do_rebalance(self) -> None:
        for consumer in list(self.consumers.values()):
            try:
                await consumer.do_rebalance()
            except Exception:  # one group's failure must not stop the rebalance service
                log.exception("rebalance of %s failed", consumer.group)

    async def _on_notify_consumer_ids_changed(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        log.info("consumer ids of %s changed", request.ext_fields.get("consumerGroup"))
        self.rebalance_immediately()
        return None

    async def _on_check_transaction_state(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand | None:
        """ClientRemotingProcessor.checkTransactionState: the half's group's producer decides.

        The listener runs in its own task so a slow check never holds the connection's reader.
        """
        msg = decode_message(request.body, check_crc=False, decompress=True)
        group = msg.properties.get(mc.PROPERTY_PRODUCER_GROUP, "")
        check = getattr(self.producers.get(group), "check_transaction_state", None)
        if check is None:
            log.warning("transaction check for group %r: no transaction producer here", group)
            return None
        task = asyncio.get_running_loop().create_task(check(channel, msg, request.ext_fields))
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)
        return None

    # ------------------------------------------------------------------ routes

    async def refresh_now(self, topic: str, timeout_s: float | None = None) -> bool:
        """Re-read ``topic``'s route after a broker failed (rate-limited, coalesced)."""
        return await self.route_refresher.refresh_now(topic, timeout_s)

    async def update_all_routes(self) -> None:
        topics: set[str] = set()
        for producer in list(self.producers.values()):
            topics |= producer.publish_topics()
        for consumer in list(self.consumers.values()):
            topics |= consumer.subscribed_topics()
        for topic in sorted(topics):
            with contextlib.suppress(RocketQError, OSError):
                await self.update_topic_route(topic)

    async def update_topic_route(self, topic: str, default_topic: str | None = None) -> bool:
        """Fetch a topic's route and hand it to every member; False when it has none."""
        async with self._route_lock:
            route = await self.api.get_topic_route(topic)
            max_queues = 0
            if route is None and default_topic is not None:
                route = await self.api.get_topic_route(default_topic)
                max_queues = getattr(self.config, "default_topic_queue_nums", 4)
            if route is None:
                return False
            self.topic_route_table[topic] = route
            for bd in route.broker_datas:
                self.broker_addr_table[bd.broker_name] = dict(bd.broker_addrs)
            info = publish_info_of(topic, route, max_queues)
            for producer in list(self.producers.values()):
                producer.update_topic_publish_info(topic, info)
            mqs = subscribe_info_of(topic, route)
            for consumer in list(self.consumers.values()):
                if topic in consumer.subscribed_topics():
                    consumer.update_topic_subscribe_info(topic, mqs)
            return True

    def find_broker_addr(self, broker_name: str, *, only_master: bool = True) -> str | None:
        addrs = self.broker_addr_table.get(broker_name) or {}
        master = addrs.get(MASTER_ID)
        if master is not None or only_master:
            return master
        return next(iter(addrs.values()), None)

    async def find_broker_addr_or_refresh(self, broker_name: str, topic: str) -> str:
        addr = self.find_broker_addr(broker_name)
        if addr is None:
            await self.update_topic_route(topic)
            addr = self.find_broker_addr(broker_name)
        if addr is None:
            raise RocketQError(f"the broker {broker_name} is not in the route of {topic}")
        return addr

    def find_broker_address_in_subscribe(
        self, broker_name: str, broker_id: int = MASTER_ID, *, only_this_broker: bool = False
    ) -> tuple[str, bool] | None:
        """(address, is_slave) to read from: the asked id, its next slave, else any address.

        A consumer reads from a slave when the master suggests it or when the master is
        gone from the route (findBrokerAddressInSubscribe).
        """
        addrs = self.broker_addr_table.get(broker_name) or {}
        addr = addrs.get(broker_id)
        if addr is None and broker_id != MASTER_ID:
            addr, broker_id = addrs.get(broker_id + 1), broker_id + 1
        if addr is None and not only_this_broker and addrs:
            broker_id, addr = next(iter(sorted(addrs.items())))
        return None if addr is None else (addr, broker_id != MASTER_ID)

    async def find_broker_addr_in_subscribe_or_refresh(
        self, broker_name: str, topic: str, broker_id: int = MASTER_ID
    ) -> tuple[str, bool]:
        """The subscribe address, refreshing the route once; the master when it is there."""
        found = self.find_broker_address_in_subscribe(
            broker_name, broker_id, only_this_broker=broker_id == MASTER_ID
        )
        if found is None:  # the master left the route: read it again (rate-limited), else a slave
            await self.refresh_now(topic)
            found = self.find_broker_address_in_subscribe(broker_name, broker_id)
        if found is None:
            raise RocketQError(f"the broker {broker_name} is not in the route of {topic}")
        return found

    def all_broker_addrs(self) -> list[str]:
        return sorted({a for addrs in self.broker_addr_table.values() for a in addrs.values()})

    # ------------------------------------------------------------------ heartbeat

    def clean_offline_brokers(self) -> None:
        """Forget the broker addresses no topic route names any more (cleanOfflineBroker).

        A broker that stopped, or restarted on a new address, leaves its old address in
        ``broker_addr_table`` until this runs before each heartbeat round, as the Java client's
        heartbeat timer does; without it the old address is heartbeaten forever.
        """
        live = {
            addr
            for route in self.topic_route_table.values()
            for bd in route.broker_datas
            for addr in bd.broker_addrs.values()
        }
        for name, addrs in list(self.broker_addr_table.items()):
            kept = {broker_id: addr for broker_id, addr in addrs.items() if addr in live}
            for broker_id, addr in addrs.items():
                if broker_id not in kept:
                    log.info("the broker %s[%d] %s is offline: forgotten", name, broker_id, addr)
            if kept:
                self.broker_addr_table[name] = kept
            else:
                del self.broker_addr_table[name]

    async def send_heartbeat_to_all(self) -> None:
        self.clean_offline_brokers()
        data = HeartbeatData(
            client_id=self.client_id,
            producer_data_set=[ProducerData(group_name=g) for g in sorted(self.producers)],
            consumer_data_set=[c.consumer_data() for c in list(self.consumers.values())],
        )
        if not data.producer_data_set and not data.consumer_data_set:
            return
        for name, addrs in list(self.broker_addr_table.items()):
            for broker_id, addr in addrs.items():
                if broker_id != MASTER_ID and not data.consumer_data_set:
                    continue
                try:
                    await self.api.send_heartbeat(addr, data)
                except (RocketQError, OSError) as exc:
                    log.warning("heartbeat to %s (%s) failed: %r", name, addr, exc)
