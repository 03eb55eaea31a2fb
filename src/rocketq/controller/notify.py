"""NotifyService: NOTIFY_BROKER_ROLE_CHANGED (1008) pushed oneway to a broker set's live
members after a new master (RocketMQ 5's ``ControllerManager.NotifyService`` and
``doNotifyBrokerRoleChanged``).

One push in flight per broker address: a push of a newer master epoch cancels one still in
flight to the same broker, so a broker never hears an older master last. A push that fails is
logged; the broker's periodic CONTROLLER_GET_REPLICA_INFO is the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from rocketq.errors import RocketQError
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_headers import NotifyBrokerRoleChangedRequestHeader

log = logging.getLogger(__name__)

#: ControllerManager.doNotifyBrokerRoleChanged's oneway timeout
NOTIFY_TIMEOUT_S = 3.0


class NotifyService:
    def __init__(self) -> None:
        self._client: RemotingClient | None = None
        self._in_flight: dict[str, tuple[int, asyncio.Task[None]]] = {}

    async def start(self) -> None:
        self._client = RemotingClient()

    async def shutdown(self) -> None:
        tasks = [task for _, task in self._in_flight.values()]
        self._in_flight.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        client, self._client = self._client, None
        if client is not None:
            await client.shutdown()

    def notify_broker(
        self, addr: str, header: NotifyBrokerRoleChangedRequestHeader, body: bytes
    ) -> None:
        if self._client is None:
            return
        epoch = header.master_epoch or 0
        previous = self._in_flight.get(addr)
        if previous is not None and epoch > previous[0]:
            previous[1].cancel()
        request = RemotingCommand.create_request(
            RequestCode.NOTIFY_BROKER_ROLE_CHANGED, header.to_ext_fields(), body
        )
        task = asyncio.ensure_future(self._notify(self._client, addr, request))
        self._in_flight[addr] = (epoch, task)
        task.add_done_callback(lambda done: self._forget(addr, done))

    def _forget(self, addr: str, task: asyncio.Task[None]) -> None:
        if self._in_flight.get(addr, (0, None))[1] is task:
            del self._in_flight[addr]

    @staticmethod
    async def _notify(client: RemotingClient, addr: str, request: RemotingCommand) -> None:
        log.info("notify broker %s that its role changed: %s", addr, request.ext_fields)
        try:
            await asyncio.wait_for(client.invoke_oneway(addr, request), NOTIFY_TIMEOUT_S)
        except (OSError, RocketQError) as exc:  # a broker that is gone
            log.warning("could not notify broker %s that its role changed: %r", addr, exc)
