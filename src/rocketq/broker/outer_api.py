"""BrokerOuterAPI: the broker's requests to name servers (REGISTER_BROKER, UNREGISTER_BROKER).

Registration goes to every name server concurrently; one unreachable name server is logged
and does not stop the others (RocketMQ's ``registerBrokerAll``).
"""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from rocketq.errors import RemotingError
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import (
    RegisterBrokerRequestHeader,
    UnRegisterBrokerRequestHeader,
)
from rocketq.remoting.protocol.register_broker_body import (
    RegisterBrokerBody,
    TopicConfigSerializeWrapper,
)
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)


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

    async def register_broker_all(
        self,
        namesrv_addrs: list[str],
        who: BrokerIdentity,
        wrapper: TopicConfigSerializeWrapper,
        on_response: Callable[[dict[str, str]], None] | None = None,
    ) -> dict[str, bool]:
        """Register with every name server; returns addr -> success."""
        body = RegisterBrokerBody(topic_config_serialize_wrapper=wrapper).encode()
        header = RegisterBrokerRequestHeader(
            broker_name=who.broker_name,
            broker_addr=who.broker_addr,
            cluster_name=who.cluster_name,
            ha_server_addr=who.ha_server_addr,
            broker_id=who.broker_id,
            compressed=False,
            body_crc32=zlib.crc32(body) & 0x7FFFFFFF,
        )
        return await self._to_all(
            namesrv_addrs, RequestCode.REGISTER_BROKER, header.to_ext_fields(), body, on_response
        )

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
