"""A single controller leader for tests, without Raft: requests go through the real request
handlers, their events through the real codec and ``ControllerStateMachine.apply`` in log
order, liveness through a real ``BrokerHeartbeatManager`` on a virtual clock."""

from __future__ import annotations

from dataclasses import dataclass, field

from rocketq.controller.event import encode_event
from rocketq.controller.heartbeat import AlivePredicate, BrokerHeartbeatManager
from rocketq.controller.registration import apply_broker_id, get_next_broker_id, register_broker
from rocketq.controller.replicas_info import (
    ApplyResult,
    ControllerStateMachine,
    ReplicasInfoManager,
)
from rocketq.controller.request_handler import ControllerResult, elect_master
from rocketq.remoting.protocol.controller_headers import (
    ApplyBrokerIdRequestHeader,
    ElectMasterRequestHeader,
    GetNextBrokerIdRequestHeader,
    RegisterBrokerToControllerRequestHeader,
)
from rocketq.response_code import ResponseCode

CLUSTER = "DefaultCluster"


@dataclass
class Leader:
    machine: ControllerStateMachine = field(default_factory=ControllerStateMachine)
    heartbeats: BrokerHeartbeatManager = field(default_factory=BrokerHeartbeatManager)
    now_ms: int = 1_000
    index: int = 0
    log: list[bytes] = field(default_factory=list)
    accepted: list[bytes] = field(default_factory=list)  # the entries whose apply succeeded

    @property
    def state(self) -> ReplicasInfoManager:
        return self.machine.replicas_info

    def commit(self, result: ControllerResult) -> tuple[ResponseCode, ControllerResult]:
        """Propose and apply the result's events; the code the server would answer."""
        for event in result.events:
            outcome = self.append(encode_event(event))
            if not outcome.ok:
                return outcome.code, result
        return result.code, result

    def append(self, data: bytes) -> ApplyResult:
        self.index += 1
        self.log.append(data)
        outcome = self.machine.apply(self.index, data)
        if outcome.ok:
            self.accepted.append(data)
        return outcome

    def alive(self) -> AlivePredicate:
        return self.heartbeats.alive_predicate(self.now_ms)

    def heartbeat(
        self,
        name: str,
        broker_id: int,
        *,
        epoch: int = 0,
        max_offset: int = 0,
        priority: int | None = None,
    ) -> None:
        self.heartbeats.on_broker_heartbeat(
            self.now_ms,
            cluster_name=CLUSTER,
            broker_name=name,
            broker_addr=addr(broker_id),
            broker_id=broker_id,
            timeout_ms=3_000,
            epoch=epoch,
            max_offset=max_offset,
            election_priority=priority,
        )

    def register(self, name: str) -> int:
        """The registration of a new broker: next id, apply it, register, heartbeat."""
        nxt = get_next_broker_id(
            self.state, GetNextBrokerIdRequestHeader(cluster_name=CLUSTER, broker_name=name)
        )
        broker_id = nxt.header.next_broker_id  # type: ignore[union-attr]
        code = f"{addr(broker_id)};{self.now_ms}"
        applied = apply_broker_id(
            self.state,
            ApplyBrokerIdRequestHeader(
                cluster_name=CLUSTER,
                broker_name=name,
                applied_broker_id=broker_id,
                register_check_code=code,
            ),
        )
        assert self.commit(applied)[0] == ResponseCode.SUCCESS
        reg = register_broker(
            self.state,
            RegisterBrokerToControllerRequestHeader(
                cluster_name=CLUSTER,
                broker_name=name,
                broker_id=broker_id,
                broker_address=addr(broker_id),
            ),
            self.alive(),
        )
        assert self.commit(reg)[0] == ResponseCode.SUCCESS
        self.heartbeat(name, broker_id)
        return broker_id

    def elect(
        self, name: str, broker_id: int = -1, *, designate: bool = False, unclean: bool = False
    ) -> tuple[ResponseCode, ControllerResult]:
        header = ElectMasterRequestHeader(
            cluster_name=CLUSTER, broker_name=name, broker_id=broker_id, designate_elect=designate
        )
        result = elect_master(
            self.state,
            header,
            is_alive=self.alive(),
            live_info=self.heartbeats.get_broker_live_info,
            enable_elect_unclean_master=unclean,
        )
        return self.commit(result)


def addr(broker_id: int) -> str:
    return f"127.0.0.1:{30910 + broker_id}"
