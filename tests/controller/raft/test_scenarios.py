"""Scripted scenarios: the Raft paper's Figure 8, a full-cluster restart, an asymmetric
partition, and a leader isolated with one follower of five."""

from __future__ import annotations

import pytest

from rocketq.controller.raft import Entry, MessageType, Role
from rocketq.testing.raft_simulation import Simulation, SimulationConfig
from rocketq.testing.raft_simulation.invariants import InvariantViolation
from rocketq.testing.raft_simulation.scripted import ScriptedCluster, between

APPEND = MessageType.APPEND
ELECTION_TICK = 10


def expire_leases(cluster: ScriptedCluster, *node_ids: int) -> None:
    """Let an election timeout pass on ``node_ids`` (what they send meanwhile is lost)."""
    for node_id in node_ids:
        cluster.tick(node_id, ELECTION_TICK)
    cluster.drop()


def figure_8(unsafe: bool) -> ScriptedCluster:
    """Figure 8 of the Raft paper with no-ops: S1 leads and gets index 2 onto S2 only; S5 leads
    a later term with its own index 2; S1 leads again and re-replicates its index 2 to S3 (one
    entry per append), so index 2 is on a majority before S1's own no-op is; S1 then fails and
    S5, whose log is "more up to date", wins with S3 and S4 and overwrites index 2."""
    cluster = ScriptedCluster(5, max_entries_per_append=1,
                              unsafe_commit_previous_term_by_counting=unsafe)  # fmt: skip
    everyone = set(cluster.nodes)
    cluster.campaign(1)
    cluster.deliver()
    assert cluster.leaders() == [1]
    assert cluster.propose(1, key=0, expected=0, new=7) is not None
    cluster.deliver(lambda m: m.to in (1, 2))  # (2, term 1) reaches S2 only
    cluster.drop()
    expire_leases(cluster, 3, 4)
    cluster.campaign(5)  # S5 with S3 and S4: elected, appends its no-op at index 2, sends nothing
    cluster.deliver(lambda m: m.type is not APPEND and m.sender in {3, 4, 5} and m.to in {3, 4, 5})
    assert cluster.raw(5).role is Role.LEADER
    cluster.drop()
    expire_leases(cluster, 2, 3)
    for _ in range(2):  # S1 learns term 2 from S3's refusal, then wins term 3 with S2 and S3
        cluster.campaign(1)
        cluster.deliver(lambda m: m.type is not APPEND and {m.sender, m.to} <= {1, 2, 3})
    assert cluster.raw(1).role is Role.LEADER
    # S1 probes S3 at index 2 (refused), re-sends index 2 (acknowledged); index 3 stays unsent
    assert cluster.deliver(lambda m: {m.sender, m.to} <= {1, 3}, limit=4) == 4
    cluster.deliver(lambda m: {m.sender, m.to} <= {1, 2})
    cluster.crash(1)
    cluster.drop()
    expire_leases(cluster, 3, 4)  # their leader is gone: the election timeout passes
    for _ in range(2):  # S5 learns term 3 from S3's refusal, then wins term 4 with S3 and S4
        cluster.campaign(5)
        cluster.deliver(between(everyone - {1, 2}))
    return cluster


def test_figure_8_an_older_terms_entry_is_not_committed_by_counting() -> None:
    cluster = figure_8(unsafe=False)
    assert cluster.raw(5).role is Role.LEADER
    assert 1 not in cluster.results  # index 2 was never reported committed
    assert cluster.raw(3).log.term(2) == 2  # S5 overwrote it, which was safe


def test_figure_8_committing_an_older_terms_entry_by_counting_is_caught() -> None:
    with pytest.raises(InvariantViolation, match="Leader Completeness"):
        figure_8(unsafe=True)


def quiet_simulation(nodes: int, seed: int = 7, **unsafe: bool) -> Simulation:
    """A cluster with clients and no random faults: the test brings its own."""
    config = SimulationConfig(node_count=nodes, faults=False, **unsafe)
    simulation = Simulation(seed, config)
    simulation.start()
    simulation.run_until(5_000_000)
    assert len(simulation.leaders()) == 1
    return simulation


def settle(simulation: Simulation, until_us: int) -> None:
    """Heal, run to ``until_us``: one serving leader, every node caught up, history linearizable."""
    simulation.network.heal()
    simulation.run_until(until_us - 5_000_000)
    simulation.clients_stopped = True
    simulation.run_until(until_us)
    simulation.workload.finish()
    (leader,) = simulation.leaders()
    raw = simulation.nodes[leader].raw
    assert raw is not None
    assert raw.is_serving()
    assert {n.raw.log.committed for n in simulation.nodes.values() if n.raw} == {raw.log.committed}
    assert simulation.workload.check() is None


def test_a_full_cluster_restart_keeps_every_committed_entry() -> None:
    simulation = quiet_simulation(3)
    simulation.run_until(15_000_000)
    committed = dict(simulation.invariants.committed)
    assert len(committed) > 20
    for node_id in simulation.nodes:
        simulation.crash(node_id)
    simulation.run_until(16_000_000)
    for node_id in simulation.nodes:
        simulation.restart(node_id)  # those not yet restarted
    settle(simulation, 40_000_000)
    for node in simulation.nodes.values():
        assert node.raw is not None
        for index, (term, data) in committed.items():
            if index > node.raw.log.snapshot.index:
                assert node.raw.log.slice(index, index + 1) == [Entry(index, term, data)]
    assert simulation.workload.completed > 30


def asymmetric_partition(**unsafe: bool) -> tuple[int, int, Simulation]:
    """The leader's messages to one follower are lost; that follower still reaches everyone."""
    simulation = quiet_simulation(3, **unsafe)
    (leader,) = simulation.leaders()
    term = simulation.nodes[leader].raw.term  # type: ignore[union-attr]
    follower = next(i for i in simulation.nodes if i != leader)
    simulation.network.cut_one_way(leader, follower)
    simulation.run_until(25_000_000)
    return leader, term, simulation


def test_an_asymmetric_partition_does_not_disrupt_the_leader() -> None:
    leader, term, simulation = asymmetric_partition()
    assert simulation.leaders() == [leader]
    assert {n.raw.term for n in simulation.nodes.values() if n.raw} == {term}
    settle(simulation, 35_000_000)


def test_without_pre_vote_and_check_quorum_an_asymmetric_partition_disrupts() -> None:
    _, term, simulation = asymmetric_partition(unsafe_disable_prevote_checkquorum=True)
    assert max(n.raw.term for n in simulation.nodes.values() if n.raw) > term


def isolate_leader_with_one_follower(**unsafe: bool) -> tuple[int, int, Simulation]:
    simulation = quiet_simulation(5, **unsafe)
    (leader,) = simulation.leaders()
    term = simulation.nodes[leader].raw.term  # type: ignore[union-attr]
    follower = next(i for i in simulation.nodes if i != leader)
    rest = [i for i in simulation.nodes if i not in (leader, follower)]
    simulation.network.partition([[leader, follower], rest])
    simulation.run_until(15_000_000)
    return leader, term, simulation


def test_a_leader_isolated_with_one_follower_steps_down_and_the_majority_moves_on() -> None:
    leader, term, simulation = isolate_leader_with_one_follower()
    (new_leader,) = simulation.leaders()
    assert new_leader != leader
    assert simulation.nodes[new_leader].raw.term > term  # type: ignore[union-attr]
    answered = simulation.workload.completed
    simulation.run_until(25_000_000)
    assert simulation.workload.completed > answered  # the majority side serves
    settle(simulation, 40_000_000)


def test_without_check_quorum_a_leader_isolated_with_one_follower_is_caught() -> None:
    with pytest.raises(InvariantViolation, match="CheckQuorum"):
        isolate_leader_with_one_follower(unsafe_disable_prevote_checkquorum=True)
