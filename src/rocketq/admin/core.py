"""AdminCore: the connection and routing part every admin operation shares.

One ``RemotingClient`` (name servers + brokers). ``call`` sends a request and raises
``rocketq.errors.for_code`` on any code but SUCCESS (or the codes the caller accepts);
``master_addrs_of_topic`` gives the master of every broker in a topic's route, which is
where DefaultMQAdminExtImpl sends per-broker admin requests.
"""

from __future__ import annotations

from rocketq.client.config import client_rpc_hook
from rocketq.errors import ClientError, for_code
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.remoting.protocol.namesrv_headers import GetRouteInfoRequestHeader
from rocketq.remoting.protocol.topic_route import MASTER_ID, TopicRouteData
from rocketq.response_code import ResponseCode

DEFAULT_TIMEOUT_S = 5.0


class AdminCore:
    def __init__(
        self,
        namesrv_addr: str = "",
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        access_key: str = "",
        secret_key: str = "",
    ) -> None:
        """``access_key``/``secret_key``: an ACL account; every request is then signed."""
        addrs = [a.strip() for a in namesrv_addr.split(";") if a.strip()]
        hook = client_rpc_hook(access_key=access_key, secret_key=secret_key)
        self.remoting = RemotingClient(namesrv_addrs=addrs, rpc_hook=hook)
        self.timeout_s = timeout_s

    async def close(self) -> None:
        await self.remoting.shutdown()

    async def __aenter__(self) -> AdminCore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def call(
        self,
        addr: str | None,
        code: int,
        header: CommandCustomHeader | None = None,
        body: bytes = b"",
        *,
        accept: tuple[int, ...] = (),
        ext_fields: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> RemotingCommand:
        """Invoke ``code`` on ``addr`` (None: a name server); non-success codes raise."""
        fields = header.to_ext_fields() if header is not None else {}
        fields.update(ext_fields or {})
        request = RemotingCommand.create_request(code, fields, body)
        timeout = self.timeout_s if timeout_s is None else timeout_s
        response = await self.remoting.invoke(addr, request, timeout)
        if response.code != ResponseCode.SUCCESS and response.code not in accept:
            raise for_code(response.code, response.remark or "")
        return response

    async def examine_topic_route_info(self, topic: str) -> TopicRouteData:
        """GET_ROUTEINFO_BY_TOPIC (105); TopicNotExistError when the topic has no route."""
        response = await self.call(
            None, RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic)
        )
        return TopicRouteData.decode(response.body)

    async def master_addrs_of_topic(self, topic: str) -> dict[str, str]:
        """broker name -> master address for every broker in ``topic``'s route."""
        route = await self.examine_topic_route_info(topic)
        masters = {
            b.broker_name: b.broker_addrs[MASTER_ID]
            for b in route.broker_datas
            if MASTER_ID in b.broker_addrs
        }
        if not masters:
            raise ClientError(f"no master broker in the route of {topic}")
        return dict(sorted(masters.items()))

    async def broker_addr_by_name(self, topic: str, broker_name: str) -> str:
        masters = await self.master_addrs_of_topic(topic)
        addr = masters.get(broker_name)
        if addr is None:
            raise ClientError(f"the broker {broker_name} is not in the route of {topic}")
        return addr
