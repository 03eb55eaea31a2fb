"""The broker's requests to the controllers (RocketMQ 5's ``BrokerOuterAPI`` controller half:
``getControllerMetaData``, ``getNextBrokerId``, ``applyBrokerId``, ``registerBrokerToController``,
``getReplicaInfo``, ``brokerElect``, ``alterSyncStateSet``, ``sendHeartbeatToController``).

The controllers are reached over remoting only, with a client of their own: a controller
notices a broker's death when the connection its heartbeats use closes, so that connection
must not be shared with name-server traffic. Writes and the replica reads go to the leader,
found by asking each ``controllerAddr`` for its metadata (1005); a CONTROLLER_NOT_LEADER
answer forgets the leader so that the next call asks again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from rocketq.errors import RemotingError, RemotingTimeoutError
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.controller_bodies import ElectMasterResponseBody, SyncStateSet
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    AlterSyncStateSetResponseHeader,
    ApplyBrokerIdRequestHeader,
    BrokerHeartbeatRequestHeader,
    ElectMasterRequestHeader,
    ElectMasterResponseHeader,
    GetMetaDataResponseHeader,
    GetNextBrokerIdRequestHeader,
    GetNextBrokerIdResponseHeader,
    GetReplicaInfoRequestHeader,
    GetReplicaInfoResponseHeader,
    RegisterBrokerToControllerRequestHeader,
    RegisterBrokerToControllerResponseHeader,
)
from rocketq.remoting.protocol.custom_header import CommandCustomHeader
from rocketq.response_code import ResponseCode

log = logging.getLogger(__name__)


class ControllerRequestError(Exception):
    """A controller answered a code other than SUCCESS (or none could be reached: code -1)."""

    def __init__(self, code: int, remark: str) -> None:
        super().__init__(f"controller answered {code}: {remark}")
        self.code = code
        self.remark = remark


@dataclass(frozen=True, slots=True)
class ReplicaView:
    """What the controller says of a broker set: its master and in-sync replicas."""

    master_broker_id: int | None
    master_address: str
    master_epoch: int
    sync_state_set_epoch: int
    sync_state_set: frozenset[int]

    @property
    def has_master(self) -> bool:
        return self.master_broker_id is not None and bool(self.master_address)


class ControllerClient:
    def __init__(
        self,
        controller_addrs: list[str],
        *,
        timeout_s: float = 3.0,
        close_silent_after_s: float = 10.0,
    ) -> None:
        self.controller_addrs = controller_addrs
        self.timeout_s = timeout_s
        self.close_silent_after_s = close_silent_after_s
        self._unanswered_since: dict[str, float] = {}  # addr -> first unanswered request
        self.client = RemotingClient()
        self.leader_addr = ""

    async def shutdown(self) -> None:
        await self.client.shutdown()

    # ------------------------------------------------------------------ transport

    async def _call(
        self, addr: str, code: int, header: CommandCustomHeader | None, body: bytes = b""
    ) -> RemotingCommand:
        fields = header.to_ext_fields() if header is not None else {}
        request = RemotingCommand.create_request(code, fields, body)
        sent = time.monotonic()
        try:
            response = await self.client.invoke(addr, request, self.timeout_s)
        except RemotingTimeoutError as exc:
            self.note_timeout(addr, sent)
            raise ControllerRequestError(-1, f"{addr}: {exc}") from exc
        except (RemotingError, OSError) as exc:
            raise ControllerRequestError(-1, f"{addr}: {exc}") from exc
        self._unanswered_since.pop(addr, None)
        return response

    def note_timeout(self, addr: str, sent: float) -> None:
        """A request sent at ``sent`` (monotonic) got no answer in time. Once nothing has
        come back on the connection for ``close_silent_after_s``, it is closed, as
        NettyRemotingClient.invokeSync does on a timeout (clientCloseSocketIfTimeout): a stream
        that lost bytes mid-frame, or a link that swallows them, would otherwise time out every
        later request on it, and a deposed master would never hear of its successor. Not at
        the first timeout: the controller takes a closed connection for a dead broker, and
        after silence longer than its heartbeat timeout it already does (the ReplicasManager
        waits twice that)."""
        since = self._unanswered_since.setdefault(addr, sent)
        if time.monotonic() - since >= self.close_silent_after_s:
            log.warning(
                "no answer from controller %s for %.1f s: reconnecting",
                addr,
                time.monotonic() - since,
            )
            self._unanswered_since.pop(addr, None)
            self.client.close_channel(addr)

    async def _leader_call(
        self,
        code: int,
        header: CommandCustomHeader,
        body: bytes = b"",
        accept: frozenset[int] = frozenset({ResponseCode.SUCCESS}),
    ) -> RemotingCommand:
        leader = self.leader_addr or await self.find_leader()
        try:
            response = await self._call(leader, code, header, body)
        except ControllerRequestError:
            self.leader_addr = ""  # unreachable: the next call asks the group for the leader
            raise
        if response.code == ResponseCode.CONTROLLER_NOT_LEADER:
            self.leader_addr = ""
        if response.code not in accept:
            raise ControllerRequestError(response.code, response.remark or "")
        return response

    async def find_leader(self) -> str:
        """Ask each controller for its metadata (1005) until one names the leader."""
        for addr in self.controller_addrs:
            try:
                response = await self._call(addr, RequestCode.CONTROLLER_GET_METADATA_INFO, None)
            except ControllerRequestError:
                continue
            meta = GetMetaDataResponseHeader.from_ext_fields(response.ext_fields)
            if response.code == ResponseCode.SUCCESS and meta.controller_leader_address:
                if meta.controller_leader_address != self.leader_addr:
                    log.info("controller leader is %s", meta.controller_leader_address)
                self.leader_addr = meta.controller_leader_address
                return self.leader_addr
        raise ControllerRequestError(-1, f"no controller leader among {self.controller_addrs}")

    # ------------------------------------------------------------------ registration

    async def get_next_broker_id(self, cluster: str, broker_name: str) -> int:
        header = GetNextBrokerIdRequestHeader(cluster_name=cluster, broker_name=broker_name)
        response = await self._leader_call(RequestCode.CONTROLLER_GET_NEXT_BROKER_ID, header)
        answer = GetNextBrokerIdResponseHeader.from_ext_fields(response.ext_fields)
        if answer.next_broker_id is None:
            raise ControllerRequestError(-1, "no nextBrokerId in the answer")
        return answer.next_broker_id

    async def apply_broker_id(
        self, cluster: str, broker_name: str, broker_id: int, check_code: str
    ) -> None:
        header = ApplyBrokerIdRequestHeader(
            cluster_name=cluster,
            broker_name=broker_name,
            applied_broker_id=broker_id,
            register_check_code=check_code,
        )
        await self._leader_call(RequestCode.CONTROLLER_APPLY_BROKER_ID, header)

    async def register(
        self, cluster: str, broker_name: str, broker_id: int, broker_addr: str
    ) -> ReplicaView:
        header = RegisterBrokerToControllerRequestHeader(
            cluster_name=cluster,
            broker_name=broker_name,
            broker_id=broker_id,
            broker_address=broker_addr,
        )
        response = await self._leader_call(RequestCode.CONTROLLER_REGISTER_BROKER, header)
        h = RegisterBrokerToControllerResponseHeader.from_ext_fields(response.ext_fields)
        return _view(h.master_broker_id, h.master_address, h.master_epoch, response.body)

    # ------------------------------------------------------------------ roles

    async def get_replica_info(self, broker_name: str) -> ReplicaView:
        header = GetReplicaInfoRequestHeader(broker_name=broker_name)
        response = await self._leader_call(RequestCode.CONTROLLER_GET_REPLICA_INFO, header)
        h = GetReplicaInfoResponseHeader.from_ext_fields(response.ext_fields)
        return _view(h.master_broker_id, h.master_address, h.master_epoch, response.body)

    async def elect(self, cluster: str, broker_name: str, broker_id: int) -> ReplicaView:
        """CONTROLLER_ELECT_MASTER for itself; MASTER_STILL_EXIST also names the master."""
        header = ElectMasterRequestHeader(
            cluster_name=cluster,
            broker_name=broker_name,
            broker_id=broker_id,
            designate_elect=False,
        )
        accept = frozenset({ResponseCode.SUCCESS, ResponseCode.CONTROLLER_MASTER_STILL_EXIST})
        response = await self._leader_call(
            RequestCode.CONTROLLER_ELECT_MASTER, header, accept=accept
        )
        h = ElectMasterResponseHeader.from_ext_fields(response.ext_fields)
        members: set[int] = set()
        if response.body:
            members = ElectMasterResponseBody.decode(response.body).sync_state_set
        return ReplicaView(
            h.master_broker_id,
            h.master_address or "",
            h.master_epoch or 0,
            h.sync_state_set_epoch or 0,
            frozenset(members),
        )

    async def alter_sync_state_set(
        self,
        broker_name: str,
        master_id: int,
        master_epoch: int,
        proposal: frozenset[int],
        sync_state_set_epoch: int,
    ) -> SyncStateSet:
        """CONTROLLER_ALTER_SYNC_STATE_SET: the committed set and its new epoch."""
        header = AlterSyncStateSetRequestHeader(
            broker_name=broker_name, master_broker_id=master_id, master_epoch=master_epoch
        )
        body = SyncStateSet(
            sync_state_set=set(proposal), sync_state_set_epoch=sync_state_set_epoch
        ).encode()
        response = await self._leader_call(
            RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, header, body
        )
        if response.body:
            return SyncStateSet.decode(response.body)
        h = AlterSyncStateSetResponseHeader.from_ext_fields(response.ext_fields)
        return SyncStateSet(
            sync_state_set=set(proposal), sync_state_set_epoch=h.new_sync_state_set_epoch
        )

    async def heartbeat(self, addr: str, header: BrokerHeartbeatRequestHeader) -> None:
        response = await self._call(addr, RequestCode.BROKER_HEARTBEAT, header)
        if response.code != ResponseCode.SUCCESS:
            raise ControllerRequestError(response.code, response.remark or "")


def _view(
    master_id: int | None, master_addr: str | None, master_epoch: int | None, body: bytes
) -> ReplicaView:
    sss = SyncStateSet.decode(body) if body else SyncStateSet()
    return ReplicaView(
        master_id,
        master_addr or "",
        master_epoch or 0,
        sss.sync_state_set_epoch,
        frozenset(sss.sync_state_set),
    )
