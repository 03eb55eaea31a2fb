"""BrokerOuterAPI: the broker's requests to name servers (REGISTER_BROKER, UNREGISTER_BROKER).

Registration goes to every name server concurrently; one unreachable name server is logged
and does not stop the others (RocketMQ's ``registerBrokerAll``).

At scale (issue 22): a topic create registers only the new topics (``registerIncrementBrokerData``:
a body of the changed configs with the table's new DataVersion); the periodic full registration
goes in bodies of ``splitRegistrationSize`` topics when ``enableSplitRegistration`` is on (RocketMQ
5's BrokerController.registerBrokerAll), and also when one body would pass
``MAX_REGISTER_BODY_BYTES``: RocketMQ's default breaks there (a 16 MiB frame at 60-70k topics),
rocketq splits instead. The name server adds a topic of a later body whose version it has
already seen because the topic is new to it (RouteInfoManager.isTopicConfigChanged).
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from rocketq.common.topic_config import TopicConfig
from rocketq.errors import RemotingError
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol import fastjson
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.data_version import DataVersion
from rocketq.remoting.protocol.json_body import to_json
from rocketq.remoting.protocol.namesrv_headers import (
    QueryDataVersionRequestHeader,
    QueryDataVersionResponseHeader,
    RegisterBrokerRequestHeader,
    UnRegisterBrokerRequestHeader,
)
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)

#: a full registration body larger than this goes split even when splitting is off (half the
#: 16 MiB frame RocketMQ and rocketq accept)
MAX_REGISTER_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_SPLIT_REGISTRATION_SIZE = 800  # BrokerConfig.splitRegistrationSize
#: above this many topics the body is not even encoded whole (it would pass the bound anyway)
MAX_UNSPLIT_TOPICS = 20_000
#: the base of an increment that does not follow the last registration sent (a version no
#: table has): the name server then records the broker's version as unknown
NO_BASE_VERSION = DataVersion(timestamp=-1, counter=-1)


class RegisterBodyCache:
    """REGISTER_BROKER bodies from each topic's JSON encoded once: the periodic registration
    of 100,000 topics joins cached bytes instead of encoding the table on the event loop
    every 30 s. The bytes equal ``RegisterBrokerBody.encode()`` (keys sorted, compact)."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[TopicConfig, bytes]] = {}

    def encode(self, wrapper: TopicConfigSerializeWrapper) -> bytes:
        table = wrapper.topic_config_table
        parts = [self._entry(name, table[name]) for name in sorted(table)]
        if len(self._entries) > 2 * len(table) + 1024:  # deleted topics: forget them
            self._entries = {n: self._entries[n] for n in table if n in self._entries}
        version = fastjson.dumps(wrapper.data_version.to_json())
        return b"".join(
            (
                b'{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":',
                version,
                b',"topicConfigTable":{',
                b",".join(parts),
                b"}}}",
            )
        )

    def _entry(self, name: str, config: TopicConfig) -> bytes:
        cached = self._entries.get(name)
        if cached is not None and cached[0] is config:
            return cached[1]
        data = fastjson.dumps(name) + b":" + fastjson.dumps(to_json(config))
        self._entries[name] = (config, data)
        return data


def split_wrapper(
    wrapper: TopicConfigSerializeWrapper, split_size: int
) -> list[TopicConfigSerializeWrapper]:
    """The table in parts of ``split_size`` topics, each with the table's DataVersion; the last
    part (possibly empty) always goes, as registerBrokerAll's final doRegisterBrokerAll."""
    items = list(wrapper.topic_config_table.items())
    size = max(1, split_size)
    parts = [
        TopicConfigSerializeWrapper(
            topic_config_table=dict(items[i : i + size]), data_version=wrapper.data_version
        )
        for i in range(0, len(items), size)
    ]
    if not parts or len(items) % size == 0:
        parts.append(TopicConfigSerializeWrapper(data_version=wrapper.data_version))
    return parts


@dataclass(frozen=True, kw_only=True, slots=True)
class BrokerIdentity:
    cluster_name: str
    broker_name: str
    broker_addr: str
    broker_id: int
    ha_server_addr: str


class BrokerOuterAPI:
    def __init__(self, client: RemotingClient, *, timeout_s: float = 6.0) -> None:
        self.client = client
        self.timeout_s = timeout_s
        #: the body sizes of the last registration (one per part), for the scale bench and tests
        self.last_register_body_sizes: list[int] = []
        self.body_cache = RegisterBodyCache()

    async def register_broker_all(
        self,
        namesrv_addrs: list[str],
        who: BrokerIdentity,
        wrapper: TopicConfigSerializeWrapper,
        on_response: Callable[[dict[str, str]], None] | None = None,
        *,
        split_size: int = 0,
        base_version: DataVersion | None = None,
    ) -> dict[str, bool]:
        """Register with every name server; returns addr -> success (of every part). With
        ``split_size`` > 0 and more topics than that, the table goes in parts, in order.
        ``base_version``: the body is an increment on the registration of that version."""
        if 0 < split_size < len(wrapper.topic_config_table):
            return await self._register_parts(
                namesrv_addrs, who, split_wrapper(wrapper, split_size), on_response
            )
        count = len(wrapper.topic_config_table)
        body = b"" if count > MAX_UNSPLIT_TOPICS else self.body_cache.encode(wrapper)
        if count > MAX_UNSPLIT_TOPICS or len(body) > MAX_REGISTER_BODY_BYTES:
            log.info(
                "registration body of %d topics is %d bytes: sent in parts of %d topics",
                len(wrapper.topic_config_table),
                len(body),
                DEFAULT_SPLIT_REGISTRATION_SIZE,
            )
            parts = split_wrapper(wrapper, DEFAULT_SPLIT_REGISTRATION_SIZE)
            return await self._register_parts(namesrv_addrs, who, parts, on_response)
        self.last_register_body_sizes = [len(body)]
        return await self._register_body(namesrv_addrs, who, body, on_response, base_version)

    async def _register_parts(
        self,
        namesrv_addrs: list[str],
        who: BrokerIdentity,
        parts: list[TopicConfigSerializeWrapper],
        on_response: Callable[[dict[str, str]], None] | None,
    ) -> dict[str, bool]:
        results = dict.fromkeys(namesrv_addrs, True)
        sizes = []
        for i, part in enumerate(parts):
            body = self.body_cache.encode(part)
            sizes.append(len(body))
            # a later part names the table's version as its base: the name server takes its
            # new topics and leaves the version it holds (a create registered meanwhile, on
            # the first part's version, stays the version held)
            base = part.data_version if i else None
            done = await self._register_body(namesrv_addrs, who, body, on_response, base)
            for addr, ok in done.items():
                results[addr] = results[addr] and ok
        self.last_register_body_sizes = sizes
        return results

    async def _register_body(
        self,
        namesrv_addrs: list[str],
        who: BrokerIdentity,
        body: bytes,
        on_response: Callable[[dict[str, str]], None] | None,
        base_version: DataVersion | None = None,
    ) -> dict[str, bool]:
        base = base_version.encode().decode() if base_version is not None else None
        header = RegisterBrokerRequestHeader(
            broker_name=who.broker_name,
            broker_addr=who.broker_addr,
            cluster_name=who.cluster_name,
            ha_server_addr=who.ha_server_addr,
            broker_id=who.broker_id,
            compressed=False,
            body_crc32=zlib.crc32(body) & 0x7FFFFFFF,
            base_data_version=base,
        )
        return await self._to_all(
            namesrv_addrs, RequestCode.REGISTER_BROKER, header.to_ext_fields(), body, on_response
        )

    async def need_register(
        self, namesrv_addrs: list[str], who: BrokerIdentity, data_version: DataVersion
    ) -> dict[str, DataVersion | None]:
        """BrokerOuterAPI.needRegister: the name servers whose DataVersion of this broker is
        not ``data_version`` (or that did not answer), each with the version it holds (the
        answer's body; None when it holds none or did not answer). One that answers
        "unchanged" has refreshed the broker's liveness, as a registration would."""
        header = QueryDataVersionRequestHeader(
            broker_name=who.broker_name,
            broker_addr=who.broker_addr,
            cluster_name=who.cluster_name,
            broker_id=who.broker_id,
        ).to_ext_fields()
        body = data_version.encode()

        async def changed(addr: str) -> tuple[bool, DataVersion | None]:
            request = RemotingCommand.create_request(RequestCode.QUERY_DATA_VERSION, header, body)
            try:
                response = await self.client.invoke(addr, request, self.timeout_s)
            except (RemotingError, OSError) as exc:
                log.warning("data version query to name server %s failed: %s", addr, exc)
                return True, None
            if response.code != ResponseCode.SUCCESS:
                return True, None
            fields = response.ext_fields or {}
            if not QueryDataVersionResponseHeader.from_ext_fields(fields).changed:
                return False, None
            try:
                return True, DataVersion.decode(response.body) if response.body else None
            except ValueError:  # RemotingCommandError: not a DataVersion
                return True, None

        results = await asyncio.gather(*(changed(a) for a in namesrv_addrs))
        return {a: held for a, (c, held) in zip(namesrv_addrs, results, strict=True) if c}

    async def unregister_broker_all(
        self, namesrv_addrs: list[str], who: BrokerIdentity
    ) -> dict[str, bool]:
        header = UnRegisterBrokerRequestHeader(
            broker_name=who.broker_name,
            broker_addr=who.broker_addr,
            cluster_name=who.cluster_name,
            broker_id=who.broker_id,
        )
        return await self._to_all(
            namesrv_addrs, RequestCode.UNREGISTER_BROKER, header.to_ext_fields(), b""
        )

    async def _to_all(
        self,
        addrs: list[str],
        code: int,
        ext_fields: dict[str, str],
        body: bytes,
        on_response: Callable[[dict[str, str]], None] | None = None,
    ) -> dict[str, bool]:
        async def one(addr: str) -> bool:
            request = RemotingCommand.create_request(code, ext_fields, body)
            try:
                response = await self.client.invoke(addr, request, self.timeout_s)
            except (RemotingError, OSError) as exc:
                log.warning("request %d to name server %s failed: %s", code, addr, exc)
                return False
            if response.code != ResponseCode.SUCCESS:
                log.warning("name server %s answered %d: %s", addr, response.code, response.remark)
                return False
            if on_response is not None:  # a slave learns masterAddr and haServerAddr here
                on_response(dict(response.ext_fields or {}))
            return True

        results = await asyncio.gather(*(one(a) for a in addrs))
        return dict(zip(addrs, results, strict=True))
