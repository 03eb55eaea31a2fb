"""Three ControllerServers on 127.0.0.1: election, proposals through the leader only, reads
behind a ReadIndex barrier, failover with nothing committed lost, and full restarts."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.controller.metadata_log import NotLeaderError
from rocketq.controller.raft_transport import RAFT_MESSAGE
from rocketq.errors import IllegalStateError
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.controller_group import WAIT_S, Group, cas_command, set_command
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def group(tmp_path: Path) -> AsyncIterator[Group]:
    running = Group(tmp_path)
    try:
        await running.start_all()
        yield running
    finally:
        await running.stop_all()


async def propose(group: Group, data: bytes) -> tuple[int, object]:
    leader = await group.leader()
    async with asyncio.timeout(WAIT_S):
        return await leader.metadata_log.propose(data)


async def test_three_controllers_elect_one_leader_that_all_follow(group: Group) -> None:
    leader = await group.leader()
    assert leader.leader_addr == leader.addr
    followers = [s for s in group.servers.values() if s is not leader]
    assert all(f.leader_addr == leader.addr and not f.is_leader for f in followers)


async def test_a_proposal_through_the_leader_is_applied_on_every_controller(group: Group) -> None:
    _, first = await propose(group, cas_command("broker-a", None, "master=1"))
    index, second = await propose(group, cas_command("broker-a", None, "master=2"))
    assert (first, second) == (True, False)  # the second CAS saw the first's write
    for machine in group.machines.values():
        assert await until(lambda m=machine: index in m.applied, WAIT_S)  # type: ignore[misc]
        assert machine.values == {"broker-a": "master=1"}


async def test_a_follower_refuses_proposals_and_reads_naming_the_leader(group: Group) -> None:
    leader = await group.leader()
    follower = next(s for s in group.servers.values() if s is not leader)
    with pytest.raises(NotLeaderError) as refused:
        await follower.metadata_log.propose(set_command("k", "v"))
    assert refused.value.leader_id == leader.raft_node.config.node_id
    with pytest.raises(NotLeaderError):
        await follower.metadata_log.read_barrier()


async def test_a_read_barrier_covers_every_acknowledged_write(group: Group) -> None:
    index, _ = await propose(group, set_command("k", "v1"))
    leader = await group.leader()
    async with asyncio.timeout(WAIT_S):
        applied = await leader.metadata_log.read_barrier()
    assert applied >= index
    assert group.machines[leader.self_id].values["k"] == "v1"


async def test_a_new_leader_serves_after_the_leader_stops_and_loses_nothing_committed(
    group: Group,
) -> None:
    written = {f"k{i}": f"v{i}" for i in range(5)}
    for key, value in written.items():
        await propose(group, set_command(key, value))
    old = await group.leader()
    await group.stop(old.self_id)

    new = await group.leader()
    assert new.self_id != old.self_id
    await propose(group, set_command("after", "failover"))
    assert group.machines[new.self_id].values == {**written, "after": "failover"}

    await group.start(old.self_id)  # the old leader comes back as a follower and catches up
    machine = group.machines[old.self_id]
    assert await until(lambda: machine.values.get("after") == "failover", WAIT_S)
    assert machine.values == {**written, "after": "failover"}


async def test_a_leader_cut_off_from_its_followers_fails_its_pending_proposal(
    group: Group,
) -> None:
    leader = await group.leader()
    for name in [n for n in group.servers if n != leader.self_id]:
        await group.stop(name)
    with pytest.raises(NotLeaderError, match=r"outcome unknown|not the serving"):
        async with asyncio.timeout(WAIT_S):
            await leader.metadata_log.propose(set_command("alone", "x"))
    assert not leader.is_leader  # CheckQuorum stepped it down


async def test_a_full_restart_of_all_three_recovers_log_and_snapshots(tmp_path: Path) -> None:
    group = Group(tmp_path, snapshot_entries=4)
    try:
        await group.start_all()
        for i in range(10):
            await propose(group, set_command(f"k{i}", str(i)))
        expected = dict(group.machines[(await group.leader()).self_id].values)
        await group.stop_all()
        snapshots = [tmp_path / n / f"raft-{n}" / "snapshot" for n in ("n0", "n1", "n2")]
        assert all(path.exists() for path in snapshots)

        await group.start_all()
        await propose(group, set_command("after", "restart"))
        for machine in group.machines.values():
            assert await until(lambda m=machine: "after" in m.values, WAIT_S)  # type: ignore[misc]
            assert machine.values == {**expected, "after": "restart"}
    finally:
        await group.stop_all()


async def test_requests_the_controller_does_not_serve_are_refused_not_dropped(
    group: Group,
) -> None:
    server = next(iter(group.servers.values()))
    async with RemotingClient() as client:
        request = RemotingCommand.create_request(1004, {"brokerName": "broker-a"})
        response = await client.invoke(server.addr, request, WAIT_S)
    assert response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
    assert "not served by controller n" in (response.remark or "")


async def test_garbage_on_the_raft_code_closes_that_connection_only(group: Group) -> None:
    leader = await group.leader()
    transport = leader.transport
    async with RemotingClient() as client:
        channel = await client.get_channel(leader.addr)
        await channel.invoke_oneway(RemotingCommand.create_request(RAFT_MESSAGE, body=b"\x01"))
        assert await until(lambda: channel.is_closed, WAIT_S)
    assert transport.rejected_count == 1
    await propose(group, set_command("still", "serving"))


async def test_a_controller_whose_disk_fails_halts_and_stops_claiming_leadership(
    tmp_path: Path,
) -> None:
    group = Group(tmp_path, size=1)
    try:
        await group.start_all()
        leader = await group.leader()
        await propose(group, set_command("before", "failure"))
        storage = leader.raft_node.storage
        read_only = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(read_only, storage._log_fd)  # the log's appends now fail with EBADF
        finally:
            os.close(read_only)
        with pytest.raises(NotLeaderError, match="halted"):
            async with asyncio.timeout(WAIT_S):
                await leader.metadata_log.propose(set_command("after", "failure"))
        assert not leader.is_leader
        assert leader.raft_node.halted is not None
        with pytest.raises(IllegalStateError, match="halted"):
            await leader.metadata_log.read_barrier()
    finally:
        await group.stop_all()
