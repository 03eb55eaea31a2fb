"""A broker's registrations with the name servers (RocketMQ 5's BrokerController
``registerBrokerAll``, ``registerIncrementBrokerData`` and ``needRegister``).

Theory of operation. The name server holds, per broker address, the DataVersion of the topic
table it last got; it routes to the topics of id 0 only (RouteInfoManager.registerBroker).

- **Full**: the whole table (split past ``splitRegistrationSize`` or 8 MiB, ``outer_api``) at
  start-up, on a role or epoch change (controller mode, ``controller_mode/role.py``), and
  each period to a name server behind.
- **Increment**: a topic create sends its topics with the table's version after the change,
  naming as its base the version of the last registration sent when the create is the one
  change after it. A name server not holding the base (restarted, expired the broker, missed
  an increment) records the broker's version as unknown (``route_info.unknown_version``).
- **Periodic** (``registerNameServerPeriod``): with ``forceRegister`` the full table; else a
  master asks QUERY_DATA_VERSION and sends the table only to the name servers behind (the
  query refreshes the broker's liveness where it is current), in controller mode too, so at
  100,000 topics a round costs one small request, not 15 MB. A name server holding the
  version of a registration sent while the table moved on is behind only if it still holds
  it when the table is at the same version a round later: in between, the creates that moved
  the table are registering (a full registration for them would take seconds at 100,000
  topics, and race the creates after it).
- **Split**: the parts of a table after the first name its version as their base, so the
  name server takes their topics without going back to the table's version over the
  creates registered meanwhile. A slave registers each round
  (the answer names its master); a controller-mode slave without topics. A fenced
  controller-mode broker sends nothing and expires (BrokerController.isIsolated).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable
from typing import Protocol

from rocketq.broker.config import BrokerConfig
from rocketq.broker.configuration import apply_broker_permission
from rocketq.broker.outer_api import NO_BASE_VERSION, BrokerIdentity, BrokerOuterAPI
from rocketq.broker.topic_config import TopicConfigManager
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper


class Fence(Protocol):
    @property
    def fenced(self) -> bool: ...


class RegisteringBroker(Protocol):
    """What the registration uses of the BrokerController."""

    @property
    def config(self) -> BrokerConfig: ...

    @property
    def topic_config_manager(self) -> TopicConfigManager: ...

    @property
    def outer_api(self) -> BrokerOuterAPI: ...

    @property
    def replicas_manager(self) -> Fence | None: ...

    @property
    def started(self) -> bool: ...

    @property
    def is_slave(self) -> bool: ...

    @property
    def register_response_listener(self) -> Callable[[dict[str, str]], None] | None: ...

    def identity(self) -> BrokerIdentity: ...


class NameServerRegistration:
    def __init__(self, broker: RegisteringBroker) -> None:
        self.broker = broker
        #: the topic table's version in the last registration sent (an increment's base)
        self.registered_version: DataVersion | None = None
        #: the last increment sent in the background (register_broker_all_soon)
        self.pending: asyncio.Task[None] | None = None
        #: the versions of the last registrations sent
        self._recently_sent: collections.deque[DataVersion] = collections.deque(maxlen=64)
        #: name server -> the table's version when it held a version sent but not that one
        self._deferred: dict[str, DataVersion] = {}
        #: name servers a full registration did not fully reach (a part after the first
        #: failed: the version it holds says current while topics are missing)
        self._incomplete: set[str] = set()

    @property
    def _fenced(self) -> bool:
        rm = self.broker.replicas_manager
        return rm is not None and rm.fenced

    async def periodic(self) -> None:
        broker = self.broker
        addrs, config = broker.config.namesrv_addr_list, broker.config
        if self._fenced:
            return
        if config.force_register or broker.is_slave or not addrs:
            await self.register_all()
            return
        pending = self.pending  # a create's registration first: the query then finds it
        if pending is not None and not pending.done():
            await asyncio.wait([pending])  # not cancelled with this round
        manager = broker.topic_config_manager
        behind = await broker.outer_api.need_register(
            addrs, broker.identity(), manager.version_snapshot()
        )
        now = manager.version_snapshot()
        stale, deferred = [], {}
        for addr, held in behind.items():
            if addr in self._incomplete:
                stale.append(addr)
                continue
            if held == now:  # a create's registration overtook the query
                continue
            if held in self._recently_sent and self._deferred.get(addr) != now:
                # it holds what we sent: the creates that moved the table on may be
                # registering now; the same answer next round means a change never sent
                deferred[addr] = now
                continue
            stale.append(addr)
        self._deferred = deferred
        if stale:
            await self.register_all(stale)

    async def register_all(self, namesrv_addrs: list[str] | None = None) -> None:
        broker = self.broker
        broker.topic_config_manager.take_unregistered()  # the full table carries them
        addrs = broker.config.namesrv_addr_list if namesrv_addrs is None else namesrv_addrs
        if not addrs or not broker.started or self._fenced:
            return
        if broker.replicas_manager is not None and broker.is_slave:
            # the name server takes topics from id 0 only: a controller-mode slave's
            # registration is its liveness and the question "who is my master?"
            version = broker.topic_config_manager.version_snapshot()
            wrapper = TopicConfigSerializeWrapper(data_version=version)
        else:
            wrapper = broker.topic_config_manager.build_serialize_wrapper()
            wrapper = apply_broker_permission(wrapper, broker.config.broker_permission)
        self.registered_version = wrapper.data_version
        self._recently_sent.append(wrapper.data_version)
        config = broker.config
        split = config.split_registration_size if config.enable_split_registration else 0
        reached = await broker.outer_api.register_broker_all(
            addrs, broker.identity(), wrapper, broker.register_response_listener, split_size=split
        )
        for addr, ok in reached.items():
            if ok:
                self._incomplete.discard(addr)
            else:
                self._incomplete.add(addr)

    async def register_increment(
        self, configs: list[TopicConfig], data_version: DataVersion
    ) -> None:
        broker = self.broker
        addrs = broker.config.namesrv_addr_list
        if not addrs or not broker.started or not configs or self._fenced:
            return
        sent = self.registered_version
        chained = sent is not None and data_version.counter == sent.counter + 1
        base = sent if sent is not None and chained else NO_BASE_VERSION
        if sent is None or data_version.counter > sent.counter:
            self.registered_version = data_version
        self._recently_sent.append(data_version)
        wrapper = TopicConfigSerializeWrapper(
            topic_config_table={tc.topic_name: tc for tc in configs}, data_version=data_version
        )
        wrapper = apply_broker_permission(wrapper, broker.config.broker_permission)
        await broker.outer_api.register_broker_all(
            addrs,
            broker.identity(),
            wrapper,
            broker.register_response_listener,
            base_version=base,
        )

    def register_soon(self) -> None:
        """The topics changed since the last registration, in the background."""
        configs, version = self.broker.topic_config_manager.take_unregistered()
        if configs:
            self.pending = asyncio.get_running_loop().create_task(
                self.register_increment(configs, version)
            )
