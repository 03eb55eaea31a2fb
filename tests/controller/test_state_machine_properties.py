"""Hypothesis state machine over the controller: requests through the handlers, raw events
(stale, replayed or made up), brokers dying and coming back, snapshots. After every step:
the master is a registered member of its SyncStateSet, epochs only grow, no two masters ever
share a (broker name, master epoch), and a snapshot restores the same state."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from rocketq.controller.event import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    UpdateBrokerAddressEvent,
    decode_event,
    encode_event,
)
from rocketq.controller.registration import clean_broker_data
from rocketq.controller.replicas_info import ControllerStateMachine
from rocketq.controller.request_handler import alter_sync_state_set, scan_need_reelect_broker_sets
from rocketq.remoting.protocol.controller_bodies import SyncStateSet
from rocketq.remoting.protocol.controller_headers import (
    AlterSyncStateSetRequestHeader,
    CleanControllerBrokerDataRequestHeader,
)
from tests.controller.leader import CLUSTER, Leader

NAMES = st.sampled_from(["broker-a", "broker-b"])
IDS = st.integers(min_value=1, max_value=4)
EPOCHS = st.integers(min_value=0, max_value=6)
raw_events = st.one_of(
    st.builds(
        AlterSyncStateSetEvent,
        broker_name=NAMES,
        new_sync_state_set=st.frozensets(IDS, max_size=4),
        master_broker_id=IDS,
        master_epoch=EPOCHS,
        sync_state_set_epoch=EPOCHS,
    ),
    st.builds(
        ApplyBrokerIdEvent,
        cluster_name=st.just(CLUSTER),
        broker_name=NAMES,
        broker_address=st.just("h:1"),
        register_check_code=st.sampled_from(["h:1;1", "h:2;2"]),
        new_broker_id=IDS,
    ),
    st.builds(
        ElectMasterEvent,
        broker_name=NAMES,
        new_master_elected=st.booleans(),
        new_master_broker_id=st.none() | IDS,
        master_epoch=EPOCHS,
    ),
    st.builds(
        CleanBrokerDataEvent,
        broker_name=NAMES,
        broker_id_set_to_clean=st.none() | st.frozensets(IDS, max_size=3),
    ),
    st.builds(
        UpdateBrokerAddressEvent,
        cluster_name=st.just(CLUSTER),
        broker_name=NAMES,
        broker_address=st.just("h:9"),
        broker_id=IDS,
    ),
)


class ControllerMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.leader = Leader()
        self.masters: dict[tuple[str, int], int | None] = {}
        self.epochs: dict[str, tuple[int, int]] = {}

    @rule(name=NAMES)
    def register(self, name: str) -> None:
        bs = self.leader.state.get(name)
        if bs is None or len(bs.brokers) < 4:
            self.leader.register(name)

    @rule(name=NAMES, broker_id=IDS, epoch=EPOCHS, offset=st.integers(0, 1 << 40))
    def heartbeat(self, name: str, broker_id: int, epoch: int, offset: int) -> None:
        self.leader.heartbeat(name, broker_id, epoch=epoch, max_offset=offset)

    @rule(ms=st.integers(0, 4_000))
    def time_passes(self, ms: int) -> None:
        self.leader.now_ms += ms
        self.leader.heartbeats.scan_not_active_broker(self.leader.now_ms)

    @rule(name=NAMES, broker_id=st.sampled_from([-1, 1, 2, 3]), designate=st.booleans())
    def elect(self, name: str, broker_id: int, designate: bool) -> None:
        self.leader.elect(name, broker_id, designate=designate and broker_id > 0)

    @rule()
    def reelect_where_the_master_is_gone(self) -> None:
        for name in scan_need_reelect_broker_sets(self.leader.state, self.leader.alive()):
            self.leader.elect(name)

    @rule(name=NAMES, data=st.data(), stale=st.booleans())
    def alter(self, name: str, data: st.DataObject, stale: bool) -> None:
        bs = self.leader.state.get(name)
        if bs is None or bs.master_broker_id is None:
            return
        members = data.draw(st.frozensets(st.sampled_from(sorted(bs.brokers))))
        header = AlterSyncStateSetRequestHeader(
            broker_name=name, master_broker_id=bs.master_broker_id, master_epoch=bs.master_epoch
        )
        proposed = SyncStateSet(
            sync_state_set=set(members | {bs.master_broker_id}),
            sync_state_set_epoch=bs.sync_state_set_epoch - int(stale),
        )
        result = alter_sync_state_set(self.leader.state, header, proposed, self.leader.alive())
        self.leader.commit(result)

    @rule(name=NAMES, ids=st.sampled_from(["", "1", "2;3"]), living=st.booleans())
    def clean(self, name: str, ids: str, living: bool) -> None:
        header = CleanControllerBrokerDataRequestHeader(
            broker_name=name,
            broker_controller_ids_to_clean=ids or None,
            is_clean_living_broker=living,
        )
        self.leader.commit(clean_broker_data(self.leader.state, header, self.leader.alive()))

    @rule(event=raw_events)
    def apply_any_event(self, event: object) -> None:
        self.leader.append(encode_event(event))  # type: ignore[arg-type]

    @rule(name=NAMES, data=st.data(), lag=st.sampled_from([0, 0, 1]))
    def forge_an_alter_against_the_current_epochs(
        self, name: str, data: st.DataObject, lag: int
    ) -> None:
        bs = self.leader.state.get(name)
        if bs is None or bs.master_broker_id is None:
            return
        members = data.draw(st.frozensets(st.sampled_from(sorted(bs.brokers))))
        if data.draw(st.booleans()):
            members |= {9}  # not a replica
        event = AlterSyncStateSetEvent(
            broker_name=name,
            new_sync_state_set=members,
            master_broker_id=bs.master_broker_id,
            master_epoch=bs.master_epoch,
            sync_state_set_epoch=bs.sync_state_set_epoch - lag,
        )
        self.leader.append(encode_event(event))

    @rule(name=NAMES, new_master=st.none() | IDS, lag=st.sampled_from([0, 0, 1]))
    def forge_an_election_against_the_current_epoch(
        self, name: str, new_master: int | None, lag: int
    ) -> None:
        bs = self.leader.state.get(name)
        if bs is None:
            return
        event = ElectMasterEvent(
            broker_name=name,
            new_master_elected=new_master is not None,
            new_master_broker_id=new_master,
            master_epoch=bs.master_epoch - lag,
        )
        self.leader.append(encode_event(event))

    @precondition(lambda self: bool(self.leader.log))
    @rule(data=st.data())
    def replay_an_old_entry(self, data: st.DataObject) -> None:
        """An election or an alter that took effect, applied again, is refused: its epochs
        are spent. Any other entry may apply again (an old address, say)."""
        entry = data.draw(st.sampled_from(self.leader.log))
        before = self.leader.machine.snapshot()
        spent = entry in self.leader.accepted
        self.leader.append(entry)
        if spent and isinstance(decode_event(entry), AlterSyncStateSetEvent | ElectMasterEvent):
            assert self.leader.machine.snapshot() == before

    @invariant()
    def the_master_is_a_registered_member_of_its_sync_state_set(self) -> None:
        for bs in self.leader.state.broker_sets.values():
            assert bs.sync_state_set <= bs.brokers.keys()
            if bs.master_broker_id is not None:
                assert bs.master_broker_id in bs.sync_state_set

    @invariant()
    def epochs_only_grow_and_one_master_per_epoch(self) -> None:
        for name, bs in self.leader.state.broker_sets.items():
            before = self.epochs.get(name, (0, 0))
            assert bs.master_epoch >= before[0]
            assert bs.sync_state_set_epoch >= before[1]
            self.epochs[name] = (bs.master_epoch, bs.sync_state_set_epoch)
            key = (name, bs.master_epoch)
            assert self.masters.setdefault(key, bs.master_broker_id) == bs.master_broker_id

    @invariant()
    def a_snapshot_restores_the_same_state(self) -> None:
        copy = ControllerStateMachine()
        copy.restore(self.leader.machine.snapshot())
        assert copy.snapshot() == self.leader.machine.snapshot()


ControllerMachine.TestCase.settings = settings(
    max_examples=60, stateful_step_count=40, deadline=None
)
test_controller_state_machine = ControllerMachine.TestCase
