"""BrokerController: builds the broker's parts, starts and stops them in order.

Start: load topics/offsets/subscription groups (falling back to ``.bak``), open the store
(recovery happens there), start the remoting server, register with every name server, then
run the periodic tasks: re-register every 30 s, persist consumer offsets every 5 s, expire
silent clients every 10 s. Shutdown reverses it: stop accepting, answer held pulls, unregister
from the name servers, persist configs, shut the store down (it flushes and removes ``abort``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping

from rocketq.broker.acl.access_validator import PlainAccessValidator, create_access_validator
from rocketq.broker.broker_stats_manager import BrokerStatsManager
from rocketq.broker.client_manager import (
    ClientChannel,
    ConsumerGroupEvent,
    ConsumerIdsChangeNotifier,
    ConsumerManager,
    ProducerManager,
)
from rocketq.broker.config import BrokerConfig, BrokerRole
from rocketq.broker.controller_mode.processor import register_controller_mode_processors
from rocketq.broker.controller_mode.replicas_manager import ReplicasManager
from rocketq.broker.long_polling import (
    PullRequest,
    PullRequestHoldService,
    loop_dispatch_scheduler,
)
from rocketq.broker.metadata_acks import SlaveVersionAcks
from rocketq.broker.metrics import BrokerMetricsCollector, MetricsExporter
from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.outer_api import BrokerIdentity, BrokerOuterAPI
from rocketq.broker.pop.pop_service import PopService
from rocketq.broker.processors import register_all
from rocketq.broker.rebalance_lock import RebalanceLockManager
from rocketq.broker.registration import NameServerRegistration
from rocketq.broker.schedule import ScheduleMessageService
from rocketq.broker.slave_sync import SlaveSynchronize
from rocketq.broker.subscription_group import SubscriptionGroupManager
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.broker.transaction import TransactionalMessageService
from rocketq.broker.transaction_check import TransactionalMessageCheckService
from rocketq.common.clock import now_ms
from rocketq.common.topic_config import TopicConfig
from rocketq.errors import IllegalStateError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.rpc_stats import RpcLatencyStats
from rocketq.remoting.server import RemotingServer
from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.message_store import MessageStore

log = logging.getLogger(__name__)

CLIENT_HOUSEKEEPING_INTERVAL_S = 10.0
STATS_SAMPLE_INTERVAL_S = 1.0


class BrokerController:
    def __init__(self, config: BrokerConfig, *, message_store: MessageStore | None = None) -> None:
        if config.enable_controller_mode:  # fenced, a slave's store, until the controller says
            config = dataclasses.replace(config, broker_role=BrokerRole.SLAVE)
        self.config = config
        root = config.store_path_root_dir
        self.topic_config_manager = TopicConfigManager(config, root)
        self.consumer_offset_manager = ConsumerOffsetManager(root)
        self.subscription_group_manager = SubscriptionGroupManager(
            root, auto_create=config.auto_create_subscription_group
        )
        self.producer_manager = ProducerManager(
            channel_expired_timeout_ms=config.channel_expired_timeout_ms
        )
        self.consumer_manager = ConsumerManager(
            self._on_consumer_ids_changed,
            channel_expired_timeout_ms=config.channel_expired_timeout_ms,
        )
        self.rebalance_lock_manager = RebalanceLockManager(
            lock_max_live_time_ms=config.rebalance_lock_max_live_time_ms
        )
        self.remoting_server = RemotingServer(
            channel_idle_timeout_s=config.channel_expired_timeout_ms / 1000
        )
        self.remoting_client = RemotingClient()
        self.outer_api = BrokerOuterAPI(self.remoting_client)
        self._message_store = message_store
        self.pull_request_hold_service = PullRequestHoldService(self._wakeup_pull)
        self.pull_wakeup: Callable[[PullRequest], Awaitable[None]] | None = None
        self._notifier: ConsumerIdsChangeNotifier | None = None
        self.schedule_message_service: ScheduleMessageService | None = None
        self.transactional_message_service = TransactionalMessageService(self)
        self.transactional_message_check_service: TransactionalMessageCheckService | None = None
        self.slave_synchronize = SlaveSynchronize(self)
        self.slave_version_acks = SlaveVersionAcks()  # controller mode: see metadata_acks
        self.pop_service = PopService(self)
        if config.broker_role is BrokerRole.SLAVE:  # its commits go to the master later
            self.consumer_offset_manager.commit_listener = self.slave_synchronize.note_local_commit
        self.access_validator: PlainAccessValidator | None = None
        self.broker_stats_manager = BrokerStatsManager(config.broker_cluster_name)
        self.metrics_exporter: MetricsExporter | None = None
        self.rpc_latency_stats = RpcLatencyStats()
        self.remoting_server.add_response_listener(
            self.rpc_latency_stats.on_response, self.rpc_latency_stats.on_responses
        )
        #: controller mode (enableControllerMode): roles from the controller, RocketMQ 5's
        self.replicas_manager = ReplicasManager(self) if config.enable_controller_mode else None
        self._tasks: list[asyncio.Task[None]] = []
        self.registration = NameServerRegistration(self)
        self._pop_revive_started = False
        self._started = False
        self.port = 0
        self.start_time_ms = 0

    # ------------------------------------------------------------------ identity

    @property
    def message_store(self) -> MessageStore:
        if self._message_store is None:
            raise IllegalStateError("the broker's message store is not open: start() first")
        return self._message_store

    @property
    def broker_addr(self) -> str:
        return f"{self.config.broker_ip1}:{self.port}"

    @property
    def store_host(self) -> tuple[str, int]:
        return (self.config.broker_ip1, self.port)

    def identity(self) -> BrokerIdentity:
        return BrokerIdentity(
            cluster_name=self.config.broker_cluster_name,
            broker_name=self.config.broker_name,
            broker_addr=self.broker_addr,
            broker_id=self.config.broker_id,
            ha_server_addr=f"{self.config.broker_ip2 or self.config.broker_ip1}:{self.ha_port}",
        )

    @property
    def ha_port(self) -> int:
        """The port the store's HAService listens on (listenPort + 1 unless configured)."""
        store = self._message_store
        port = store.ha_service.listen_port if store is not None else 0
        return port or self.port + 1

    @property
    def is_slave(self) -> bool:
        return self.config.broker_role is BrokerRole.SLAVE

    # ------------------------------------------------------------------ lifecycle

    def load(self) -> None:
        for manager in (
            self.topic_config_manager,
            self.consumer_offset_manager,
            self.subscription_group_manager,
        ):
            if not manager.load():
                log.info("no %s yet; starting empty", manager.path)

    async def start(self) -> int:
        """Load, open the store, listen, register; returns the bound port."""
        loop = asyncio.get_running_loop()
        self._notifier = ConsumerIdsChangeNotifier(
            loop, enabled=self.config.notify_consumer_ids_changed_enable
        )
        self.load()
        self._start_acl()
        self._register_processors()
        # bind first: the store stamps STOREHOST (ip1:listen port) into every record; serve
        # only once the store is open, so no request finds the broker half started
        self.port = await self.remoting_server.start(
            self.config.listen_host, self.config.listen_port, serve=False
        )
        try:
            if self._message_store is None:
                self._message_store = await asyncio.to_thread(self._open_store)
            flush = self._message_store.config.flush_disk_type  # topic changes follow it too
            self.topic_config_manager.sync_flush = flush is FlushDiskType.SYNC_FLUSH
            # a put's records are dispatched on this loop (held pulls answered without a
            # hop through the reput thread, at once while pulls are held); see long_polling
            hold = self.pull_request_hold_service
            self._message_store.reput_service.set_dispatch_scheduler(
                loop_dispatch_scheduler(loop, lambda: hold.has_held)
            )
            await self.remoting_server.start_serving()
        except BaseException:
            await self.remoting_server.stop()
            raise
        self.schedule_message_service = ScheduleMessageService(self)
        self.schedule_message_service.start(deliver=not self.is_slave)
        self.transactional_message_check_service = TransactionalMessageCheckService(
            self, self.transactional_message_service
        )
        self.transactional_message_check_service.start()
        if not self.is_slave:
            self.pop_service.start()  # the revive topic and its service (POP, issue 18)
            self._pop_revive_started = True
        if self.access_validator is not None:
            self.access_validator.manager.start()  # reload plain_acl.yml when it changes
        self.remoting_server.add_channel_close_listener(self._on_channel_close)
        self.topic_config_manager.persist()
        self.start_time_ms = now_ms()
        self._started = True
        if self.replicas_manager is not None:
            self.replicas_manager.start()  # registers with the name servers once it has a role
        await self.register_broker_all()
        self._tasks = [
            loop.create_task(
                self._every(
                    self.config.register_name_server_period_ms / 1000, self._register_periodically
                )
            ),
            loop.create_task(
                self._every(
                    self.config.flush_consumer_offset_interval_ms / 1000, self._persist_offsets
                )
            ),
            loop.create_task(self._every(CLIENT_HOUSEKEEPING_INTERVAL_S, self._scan_clients)),
            loop.create_task(
                self._every(STATS_SAMPLE_INTERVAL_S, self.broker_stats_manager.sample)
            ),
        ]
        if self.is_slave and self.replicas_manager is None:
            self._tasks.append(
                loop.create_task(
                    self._every(
                        self.config.slave_sync_interval_ms / 1000,
                        self.slave_synchronize.sync_all,
                        first_s=min(3.0, self.config.slave_sync_interval_ms / 1000),
                    )
                )
            )
        self._start_metrics()
        log.info(
            "broker %s (cluster %s) listening on %s, store %s, name servers %s",
            self.config.broker_name,
            self.config.broker_cluster_name,
            self.broker_addr,
            self.config.store_path_root_dir,
            self.config.namesrv_addr_list or "none",
        )
        return self.port

    def _open_store(self) -> MessageStore:
        """Build the StoreConfig from broker.conf's store keys, open (recover), start, and
        start replication (the HA port is listenPort + 1 unless haListenPort says)."""
        props = self.config.store_properties
        if "haListenPort" in props:
            ha_port = int(props["haListenPort"])
        else:  # BrokerStartup: listenPort + 1 (a test broker on port 0 takes any free port)
            ha_port = self.config.listen_port + 1 if self.config.listen_port else 0
        store_config, unknown = StoreConfig.from_properties(
            props,
            store_path_root_dir=self.config.store_path_root_dir,
            store_host=self.store_host,
            max_message_size=self.config.max_message_size,
            broker_role=self.config.broker_role,
            ha_listen_port=ha_port,
            ha_listen_host=self.config.listen_host,
        )
        for key in sorted(unknown):
            log.info("broker.conf store key %s is not used by this store", key)
        store = MessageStore(
            store_config,
            message_arriving_listener=self._on_message_arriving,
            arrival_wanted=self._arrival_wanted,
        )
        store.load()
        store.start()
        try:
            store.start_ha()
        except BaseException:
            store.shutdown()
            raise
        return store

    def _start_acl(self) -> None:
        """aclEnable: one hook checks every request before its processor (RocketMQ's RPC hook)."""
        if not self.config.acl_enable or self.access_validator is not None:
            return
        self.access_validator = create_access_validator(self.config)
        self.remoting_server.register_rpc_hook(self.access_validator)

    def _start_metrics(self) -> None:
        """metricsExporterType=PROM: /metrics on metricsPromExporterHost:Port."""
        if self.config.metrics_exporter_type.upper() != "PROM":
            return
        self.metrics_exporter = MetricsExporter(BrokerMetricsCollector(self))
        self.metrics_exporter.start(
            self.config.metrics_prom_exporter_host or self.config.broker_ip1,
            self.config.metrics_prom_exporter_port,
        )

    def _register_processors(self) -> None:
        register_all(self)
        register_controller_mode_processors(
            self.remoting_server, self.replicas_manager, lambda: self.message_store.ha_service
        )

    async def shutdown(self) -> None:
        if not self._started:
            return
        self._started = False
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.replicas_manager is not None:
            await self.replicas_manager.shutdown()
        await self.remoting_server.stop()
        if self.metrics_exporter is not None:
            await asyncio.to_thread(self.metrics_exporter.stop)
        if self.access_validator is not None:
            await self.access_validator.manager.shutdown()
        if self._message_store is not None:
            self._message_store.reput_service.set_dispatch_scheduler(None)
        await self.pull_request_hold_service.shutdown()
        await self.pop_service.shutdown()
        if self.schedule_message_service is not None:
            await self.schedule_message_service.shutdown()
        if self.transactional_message_check_service is not None:
            await self.transactional_message_check_service.shutdown()
        if self._register_task is not None:
            with contextlib.suppress(Exception):
                await self._register_task
        if self.config.namesrv_addr_list:
            await self.outer_api.unregister_broker_all(
                self.config.namesrv_addr_list, self.identity()
            )
        await self.remoting_client.shutdown()
        self.consumer_offset_manager.persist()
        self.topic_config_manager.persist()
        self.subscription_group_manager.persist()
        if self._message_store is not None:
            await asyncio.to_thread(self._message_store.shutdown)
        log.info("broker %s on %s shut down", self.config.broker_name, self.broker_addr)

    async def __aenter__(self) -> BrokerController:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.shutdown()

    # ------------------------------------------------------------------ name servers

    @property
    def started(self) -> bool:
        return self._started

    @property
    def _register_task(self) -> asyncio.Task[None] | None:
        return self.registration.pending

    @property
    def register_response_listener(self) -> Callable[[dict[str, str]], None] | None:
        return self._on_register_response if self.is_slave else None

    async def _register_periodically(self) -> None:
        """Each ``registerNameServerPeriod``: the table only to name servers behind
        (``registration``: needRegister, in controller mode too)."""
        await self.registration.periodic()

    async def register_broker_all(self, namesrv_addrs: list[str] | None = None) -> None:
        await self.registration.register_all(namesrv_addrs)

    async def register_increment_broker_data(
        self, configs: list[TopicConfig], data_version: DataVersion
    ) -> None:
        """A topic create or change registers only those topics, with the table's version
        after the change (BrokerController.registerIncrementBrokerData): the cost of a create
        does not grow with the table."""
        await self.registration.register_increment(configs, data_version)

    def _on_register_response(self, ext_fields: dict[str, str]) -> None:
        """A slave learns its master's addresses from the name server (registerBrokerAll)."""
        if self.replicas_manager is not None:  # only the master the controller named
            self.replicas_manager.accept_register_response(
                ext_fields.get("masterAddr"), ext_fields.get("haServerAddr")
            )
            return
        master_addr = ext_fields.get("masterAddr")
        if master_addr:
            self.slave_synchronize.master_addr = master_addr
        ha_addr = ext_fields.get("haServerAddr")
        client = self.message_store.ha_service.ha_client
        if ha_addr and client is not None and not self.message_store.config.ha_master_address:
            client.update_ha_master_address(ha_addr)

    async def apply_role(self, role: BrokerRole, broker_id: int) -> None:
        """Controller mode: the role and id the controller gave (the frozen config replaced,
        as RocketMQ sets brokerId and brokerRole), the store's role, and the special services
        (delayed-message delivery on a master only: ``changeSpecialServiceStatus``)."""
        self.config = dataclasses.replace(self.config, broker_role=role, broker_id=broker_id)
        self.message_store.set_role_only(role)  # puts refused or taken at once
        # in a thread: a demotion stops the timer wheel, which ends its slot first
        await asyncio.to_thread(self.message_store.switch_timer_for_role)
        slave = role is BrokerRole.SLAVE
        listener = self.slave_synchronize.note_local_commit if slave else None
        self.consumer_offset_manager.commit_listener = listener
        if self.schedule_message_service is not None:
            await self.schedule_message_service.shutdown()
            self.schedule_message_service = ScheduleMessageService(self)
            self.schedule_message_service.start(deliver=not slave)
        if slave and self._pop_revive_started:  # POP revive runs on the master only
            await self.pop_service.revive.shutdown()
        elif not slave and not self._pop_revive_started:
            self.pop_service.start()
        self._pop_revive_started = not slave

    def register_broker_all_soon(self) -> None:
        """Register the topics created since the last registration now, in the background (a
        topic a send, a retry or a DLQ created must be routable at once): only those topics,
        as RocketMQ 5's TopicConfigManager.registerBrokerData (registerIncrementBrokerData),
        not the whole table."""
        if self._started:
            self.registration.register_soon()

    # ------------------------------------------------------------------ periodic

    @staticmethod
    async def _every(
        period_s: float,
        action: Callable[[], Awaitable[object] | None],
        first_s: float | None = None,
    ) -> None:
        delay = period_s if first_s is None else first_s
        while True:
            await asyncio.sleep(delay)
            delay = period_s
            try:
                result = action()
                if result is not None:
                    await result
            except Exception:  # a periodic task outlives one failed round
                log.exception("periodic broker task failed")

    async def _persist_offsets(self) -> None:
        await asyncio.to_thread(self.consumer_offset_manager.persist)

    def _scan_clients(self) -> None:
        self.producer_manager.scan_not_active_channel()
        self.consumer_manager.scan_not_active_channel()

    # ------------------------------------------------------------------ events

    def _on_channel_close(self, channel: RemotingChannel) -> None:
        self.producer_manager.do_channel_close_event(channel)
        self.consumer_manager.do_channel_close_event(channel)

    def _on_consumer_ids_changed(
        self, event: ConsumerGroupEvent, group: str, channels: list[ClientChannel]
    ) -> None:
        if self._notifier is not None:
            self._notifier(event, group, channels)

    def _arrival_wanted(self) -> bool:
        """Whether a pull is held or a pop parked now: a dispatch run with neither calls
        no arriving listener (its calls, one a message, cost ~0.3 us each with no one to wake)."""
        return self.pull_request_hold_service.has_held or self.pop_service.long_polling.has_parked

    def _on_message_arriving(
        self,
        topic: str,
        queue_id: int,
        logic_offset: int,
        tags_code: int,
        store_timestamp: int,
        properties: Mapping[str, str],
    ) -> None:
        """The store's arriving listener (reput thread): wake held pulls on the loop."""
        self.pull_request_hold_service.notify_message_arriving_threadsafe(
            topic, queue_id, logic_offset + 1, tags_code, properties
        )
        self.pop_service.long_polling.notify_message_arriving_threadsafe(
            topic, queue_id, tags_code, properties
        )

    async def _wakeup_pull(self, pull: PullRequest) -> None:
        if self.pull_wakeup is not None:
            await self.pull_wakeup(pull)
