"""ControllerStateMachine under the real Raft driver: three ControllerServers on 127.0.0.1
apply the same events to the same state, a lost compare-and-set comes back to the proposer as
its refusal, and a controller restarted after compaction restores the same state."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.controller.event import ElectMasterEvent, Event, encode_event
from rocketq.controller.registration import apply_broker_id
from rocketq.controller.replicas_info import ApplyResult, ControllerStateMachine
from rocketq.controller.server import ControllerServer
from rocketq.remoting.protocol.controller_headers import ApplyBrokerIdRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.controller_group import WAIT_S, Group
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(60)


async def propose(leader: ControllerServer, event: Event) -> ApplyResult:
    async with asyncio.timeout(WAIT_S):
        _, result = await leader.metadata_log.propose(encode_event(event))
    assert isinstance(result, ApplyResult)
    return result


async def test_three_controllers_apply_the_same_events_and_restore_after_compaction(
    tmp_path: Path,
) -> None:
    group = Group(tmp_path, snapshot_entries=4)
    machines: dict[str, ControllerStateMachine] = {}
    try:
        for i in range(3):
            self_id = f"n{i}"
            machines[self_id] = ControllerStateMachine()
            server = ControllerServer(group.config(self_id), machines[self_id])
            await server.start()
            group.servers[self_id] = server
        leader = await group.leader()
        state = machines[leader.self_id].replicas_info
        for broker_id in (1, 2, 3):
            header = ApplyBrokerIdRequestHeader(
                cluster_name="c",
                broker_name="broker-a",
                applied_broker_id=broker_id,
                register_check_code=f"h:{broker_id};1",
            )
            (event,) = apply_broker_id(state, header).events
            assert (await propose(leader, event)).ok
        elect = ElectMasterEvent(
            broker_name="broker-a", new_master_elected=True, new_master_broker_id=2, master_epoch=0
        )
        assert (await propose(leader, elect)).ok
        lost = await propose(leader, elect)  # the same CAS again: epoch 0 is spent
        assert lost.code == ResponseCode.CONTROLLER_FENCED_MASTER_EPOCH
        bs = state.get("broker-a")
        assert bs is not None
        assert (bs.master_broker_id, bs.master_epoch, bs.sync_state_set) == (2, 1, {2})
        reference = machines[leader.self_id].snapshot()
        assert await until(
            lambda: all(m.snapshot() == reference for m in machines.values()), WAIT_S
        )

        follower = next(name for name in group.servers if name != leader.self_id)
        await group.stop(follower)
        machines[follower] = ControllerStateMachine()
        restarted = ControllerServer(group.config(follower), machines[follower])
        await restarted.start()
        group.servers[follower] = restarted
        assert await until(lambda: machines[follower].snapshot() == reference, WAIT_S)
    finally:
        await group.stop_all()
