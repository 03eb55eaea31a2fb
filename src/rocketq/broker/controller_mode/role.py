"""Becoming master or slave (RocketMQ 5's ``ReplicasManager.changeBrokerRole``,
``changeToMaster``, ``changeToSlave``, ``changeSyncStateSet``, ``handleSlaveSynchronize``).

Theory of operation. Every change is keyed on ``newMasterEpoch > masterEpoch`` and runs under
one lock, so a push and a poll that carry the same news act once.

- **Master**: the store's AutoSwitchHAService becomes master at the epoch (torn tail cut,
  ``<epoch, maxPhyOffset>`` appended); the committed SyncStateSet is adopted; the broker takes
  id 0 and role SYNC_MASTER (the store accepts puts again), stamps ``DataVersion.stateVersion``
  with the epoch (the name server keeps the id-0 claim with the higher one) and registers
  with every name server; the SyncStateSet check starts. Pops are refused (the fencing hook)
  until the pop offsets are moved past every pop the old master answered (``pop_offsets``);
  the POP revive, started with the role, revives nothing before then either.
- **Slave**: role SLAVE first (the store refuses puts at once), id = the controller's id, the
  HA service becomes a slave at the epoch; the metadata sync points at the new master. The
  master's HA address comes from the name servers' answer to our registration, accepted only
  when it names the master the controller named (until the new master registered there, the
  name server may still list the old one); registration is repeated until then.

A change the HA service refuses (an epoch below its epoch file's last) leaves the epoch where
it was, so the next poll tries again, and the broker as it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Protocol

from rocketq.broker.config import BrokerConfig, BrokerRole
from rocketq.broker.controller_mode.controller_client import ReplicaView
from rocketq.broker.controller_mode.pop_offsets import (
    CLOCK_MARGIN_MS,
    UNSYNCED_WINDOW_MS,
    advance_pop_offsets,
)
from rocketq.broker.metadata_acks import METADATA_POLL_S, SlaveVersionAcks
from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.slave_sync import SlaveSynchronize
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.errors import IllegalStateError
from rocketq.store.ha.autoswitch_client import AutoSwitchHAClient
from rocketq.store.ha.autoswitch_frames import HAConnectionState
from rocketq.store.ha.autoswitch_service import AutoSwitchHAService
from rocketq.store.message_store import MessageStore

if TYPE_CHECKING:
    from rocketq.broker.pop.pop_service import PopService

log = logging.getLogger(__name__)

MASTER_ID = 0


class ControllerModeBroker(Protocol):
    """What the ReplicasManager uses of the BrokerController."""

    config: BrokerConfig
    slave_synchronize: SlaveSynchronize
    slave_version_acks: SlaveVersionAcks
    topic_config_manager: TopicConfigManager
    consumer_offset_manager: ConsumerOffsetManager
    pop_service: PopService

    @property
    def message_store(self) -> MessageStore: ...

    @property
    def broker_addr(self) -> str: ...

    async def apply_role(self, role: BrokerRole, broker_id: int) -> None: ...

    async def register_broker_all(self) -> None: ...


class RoleSwitch:
    def __init__(self, broker: ControllerModeBroker) -> None:
        self.broker = broker
        self.broker_controller_id: int | None = None
        self.master_broker_id: int | None = None
        self.master_address = ""
        self.master_epoch = 0
        self.sync_state_set: frozenset[int] = frozenset()
        self.sync_state_set_epoch = 0
        self.is_master = False
        self.fenced = True
        self.master_ha_addr = ""
        self.offsets_synced_ms = 0  # wall time a metadata round that succeeded began
        self.offsets_synced_floor: int | None = None  # that round's check point floor
        self.pops_held = False  # a new master's pop offsets not yet past the old master's pops
        self._lock = asyncio.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._check_task: asyncio.Task[None] | None = None
        self._slave_task: asyncio.Task[None] | None = None
        self._topic_task: asyncio.Task[None] | None = None  # the topic table's long polls

    @property
    def config(self) -> BrokerConfig:
        return self.broker.config

    @property
    def ha(self) -> AutoSwitchHAService:
        service = self.broker.message_store.ha_service
        if not isinstance(service, AutoSwitchHAService):
            raise IllegalStateError("controller mode needs a store opened in controller mode")
        return service

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop

    def role_tasks(self) -> list[asyncio.Task[None]]:
        tasks = (self._check_task, self._slave_task, self._topic_task)
        return [t for t in tasks if t is not None]

    def start_check_sync_state_set(self) -> asyncio.Task[None]:
        raise NotImplementedError

    # ------------------------------------------------------------------ changes

    async def change_broker_role(self, view: ReplicaView) -> None:
        async with self._lock:
            if not view.has_master or self.broker_controller_id is None:
                return
            if view.master_epoch > self.master_epoch:
                if view.master_broker_id == self.broker_controller_id:
                    await self._change_to_master(view)
                else:
                    await self._change_to_slave(view)
            elif view.master_epoch == self.master_epoch and self.is_master:
                self.change_sync_state_set(view.sync_state_set, view.sync_state_set_epoch)

    async def _change_to_master(self, view: ReplicaView) -> None:
        me = self.broker_controller_id
        assert me is not None
        epoch = view.master_epoch
        log.info("broker %s id %d: becoming master at epoch %d", self.config.broker_name, me, epoch)
        self.pops_held = True  # from the first moment the store may take puts as master
        if not await asyncio.to_thread(self.ha.change_to_master, epoch):
            log.error("the HA service refused master epoch %d; role unchanged", epoch)
            self.pops_held = False
            return
        self.master_epoch, self.is_master = epoch, True
        self.master_broker_id, self.master_address = me, self.broker.broker_addr
        self.sync_state_set_epoch = -1  # adopt what the controller says, whatever its epoch
        self.change_sync_state_set(view.sync_state_set | {me}, view.sync_state_set_epoch)
        self._stop_slave_sync()
        await self.broker.apply_role(BrokerRole.SYNC_MASTER, MASTER_ID)
        await self._advance_pop_offsets()
        self.broker.pop_service.revive.open()  # it revives from here (pop/supersede.py)
        # only now: a promotion cut short (cancelled, failed) keeps its pops held, or a pop
        # served from offsets not moved past the old master's pops serves them again
        self.pops_held = False
        self.broker.topic_config_manager.data_version.next_version(state_version=epoch)
        acks = self.broker.slave_version_acks  # topic creates wait for the in-sync slaves
        acks.reset()
        acks.in_sync_slaves = lambda: self.sync_state_set - {me}
        if self._check_task is not None:
            self._check_task.cancel()
        self._check_task = self.start_check_sync_state_set()
        self.fenced = False
        await self.broker.register_broker_all()
        log.info(
            "broker %s id %d is MASTER at epoch %d, SyncStateSet %s",
            self.config.broker_name,
            me,
            epoch,
            sorted(self.sync_state_set),
        )

    async def _change_to_slave(self, view: ReplicaView) -> None:
        me = self.broker_controller_id
        assert me is not None
        assert view.master_broker_id is not None
        epoch = view.master_epoch
        self.is_master = False
        self.broker.slave_version_acks.in_sync_slaves = None
        if self._check_task is not None:
            self._check_task.cancel()
            self._check_task = None
        await self.broker.apply_role(BrokerRole.SLAVE, me)
        if not await asyncio.to_thread(self.ha.change_to_slave, "", epoch, me):
            log.error("the HA service refused slave epoch %d; still fenced", epoch)
            self.fenced = True
            return
        self.master_epoch = epoch
        self.master_broker_id, self.master_address = view.master_broker_id, view.master_address
        self.master_ha_addr = ""
        self.broker.topic_config_manager.data_version.next_version(state_version=epoch)
        self._start_slave_sync(view.master_address)
        self.fenced = False
        log.info(
            "broker %s id %d is SLAVE of %s (id %d) at epoch %d",
            self.config.broker_name,
            me,
            view.master_address,
            view.master_broker_id,
            epoch,
        )

    def change_sync_state_set(self, members: frozenset[int], epoch: int) -> None:
        """Adopt a committed set newer than ours (``changeSyncStateSet``)."""
        if epoch <= self.sync_state_set_epoch:
            return
        if members != self.sync_state_set:
            log.info(
                "SyncStateSet %s -> %s (epoch %d)",
                sorted(self.sync_state_set),
                sorted(members),
                epoch,
            )
        self.sync_state_set, self.sync_state_set_epoch = members, epoch
        self.ha.set_sync_state_set(members)

    async def _advance_pop_offsets(self) -> None:
        """Before serving: pop offsets past every pop the old master answered (pop_offsets)."""
        now = int(time.time() * 1000)
        synced = self.offsets_synced_ms
        since = synced - CLOCK_MARGIN_MS if synced else now - UNSYNCED_WINDOW_MS
        floor = self.offsets_synced_floor if synced else None
        cfg = self.config
        try:
            await asyncio.to_thread(
                advance_pop_offsets,
                self.broker.message_store,
                self.broker.consumer_offset_manager,
                cfg.broker_cluster_name,
                cfg.revive_queue_num,
                since,
                floor,
            )
        except Exception:  # serving with the synced offsets beats not serving
            log.exception("could not advance the pop offsets")

    # ------------------------------------------------------------------ the master's address

    def accept_register_response(self, master_addr: str | None, ha_addr: str | None) -> bool:
        """A name server's answer to a slave's registration: take the master's HA address
        if it names our master. True when the HA client has its address."""
        if self.is_master or not master_addr or master_addr != self.master_address:
            return False
        if ha_addr and ha_addr != self.master_ha_addr:
            client = self.ha.ha_client
            if client is None:
                return False
            client.update_ha_master_address(ha_addr)
            self.master_ha_addr = ha_addr
            log.info("HA master of %s is %s", master_addr, ha_addr)
        return bool(self.master_ha_addr)

    def _start_slave_sync(self, master_addr: str) -> None:
        self._stop_slave_sync()
        self.broker.slave_synchronize.master_addr = master_addr
        self.broker.slave_synchronize.broker_id = self.broker_controller_id
        self._slave_task = self.loop.create_task(self._slave_loop(master_addr))
        follow = self.broker.slave_synchronize.follow_topic_config()
        self._topic_task = self.loop.create_task(follow)

    def _stop_slave_sync(self) -> None:
        if self._slave_task is not None:
            self._slave_task.cancel()
            self._slave_task = None
        if self._topic_task is not None:
            self._topic_task.cancel()
            self._topic_task = None
        self.broker.slave_synchronize.master_addr = None

    async def _slave_loop(self, master_addr: str) -> None:
        """Register until the name server names our master's HA address (falling back to
        its port + 1 without name servers), then sync metadata every ``METADATA_POLL_S``
        (not slaveSyncInterval: metadata follows within 2 s, docs/controller.md)."""
        period_s = self.config.broker_heartbeat_interval_ms / 1000
        while not self.master_ha_addr and master_addr == self.master_address:
            if not self.config.namesrv_addr_list:
                host, _, port = master_addr.rpartition(":")
                self.accept_register_response(master_addr, f"{host}:{int(port) + 1}")
                break
            with contextlib.suppress(Exception):
                await self.broker.register_broker_all()
            if not self.master_ha_addr:
                await asyncio.sleep(period_s)
        while True:
            began = int(time.time() * 1000)
            link = self._transferring_link()
            with contextlib.suppress(Exception):
                synced = await self.broker.slave_synchronize.sync_all()
                # the round's offsets are the master's only if our HA link to it was up,
                # the same link, from before the round to after it: a broker answering on
                # the master's address while the link is down may be the old master
                # restarted, with offsets from before its last pops (pop_offsets.py)
                if synced and link is not None and link == self._transferring_link():
                    self.offsets_synced_ms = began
                    self.offsets_synced_floor = self.broker.slave_synchronize.check_point_floor
            await asyncio.sleep(METADATA_POLL_S)

    def _transferring_link(self) -> int | None:
        """The number of the HA link that is transferring from the master now, else None."""
        client = self.ha.ha_client
        if not isinstance(client, AutoSwitchHAClient) or not client.connected.is_set():
            return None
        return client.links if client.state is HAConnectionState.TRANSFER else None
