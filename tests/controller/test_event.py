"""The event codec: EventSerializer's layout (i16 type, then sorted compact JSON), strict
decoding, and a round trip of every event."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketq.controller.event import (
    AlterSyncStateSetEvent,
    ApplyBrokerIdEvent,
    CleanBrokerDataEvent,
    ElectMasterEvent,
    Event,
    EventDecodeError,
    UpdateBrokerAddressEvent,
    decode_event,
    encode_event,
)

GOLDEN: list[tuple[Event, bytes]] = [
    (
        AlterSyncStateSetEvent(
            broker_name="broker-a",
            new_sync_state_set=frozenset({2, 1}),
            master_broker_id=1,
            master_epoch=3,
            sync_state_set_epoch=4,
        ),
        b'\x00\x01{"brokerName":"broker-a","masterBrokerId":1,"masterEpoch":3,'
        b'"newSyncStateSet":[1,2],"syncStateSetEpoch":4}',
    ),
    (
        ApplyBrokerIdEvent(
            cluster_name="DefaultCluster",
            broker_name="broker-a",
            broker_address="127.0.0.1:30911",
            register_check_code="127.0.0.1:30911;1700000000000",
            new_broker_id=1,
        ),
        b'\x00\x02{"brokerAddress":"127.0.0.1:30911","brokerName":"broker-a",'
        b'"clusterName":"DefaultCluster","newBrokerId":1,'
        b'"registerCheckCode":"127.0.0.1:30911;1700000000000"}',
    ),
    (
        ElectMasterEvent(
            broker_name="broker-a",
            new_master_elected=False,
            new_master_broker_id=None,
            master_epoch=7,
        ),
        b'\x00\x03{"brokerName":"broker-a","masterEpoch":7,"newMasterElected":false}',
    ),
    (
        CleanBrokerDataEvent(broker_name="broker-a", broker_id_set_to_clean=frozenset({3})),
        b'\x00\x05{"brokerIdSetToClean":[3],"brokerName":"broker-a"}',
    ),
    (
        UpdateBrokerAddressEvent(
            cluster_name="c", broker_name="b", broker_address="10.0.0.1:1", broker_id=2
        ),
        b'\x00\x06{"brokerAddress":"10.0.0.1:1","brokerId":2,"brokerName":"b","clusterName":"c"}',
    ),
]


@pytest.mark.parametrize(("event", "data"), GOLDEN)
def test_events_encode_to_eventserializer_bytes(event: Event, data: bytes) -> None:
    assert encode_event(event) == data
    assert decode_event(data) == event


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00",
        b"\x00\x09{}",
        b"\x00\x04{}",  # READ_EVENT is never logged
        b"\x00\x01not json",
        b"\x00\x01[]",
        b'\x00\x06{"brokerAddress":"a","brokerId":"2","brokerName":"b","clusterName":"c"}',
        b'\x00\x06{"brokerAddress":"a","brokerId":true,"brokerName":"b","clusterName":"c"}',
        b'\x00\x05{"brokerIdSetToClean":[1,"2"],"brokerName":"b"}',
        b'\x00\x03{"brokerName":"b","newMasterElected":true}',
        b"\x00\x01\xff\xfe",
    ],
)
def test_decode_refuses_anything_but_a_well_formed_event(data: bytes) -> None:
    with pytest.raises(EventDecodeError):
        decode_event(data)


names = st.text(min_size=1, max_size=12)
ids = st.integers(min_value=-1, max_value=(1 << 63) - 1)
id_sets = st.frozensets(ids, max_size=5)
events = st.one_of(
    st.builds(
        AlterSyncStateSetEvent,
        broker_name=names,
        new_sync_state_set=id_sets,
        master_broker_id=ids,
        master_epoch=ids,
        sync_state_set_epoch=ids,
    ),
    st.builds(
        ApplyBrokerIdEvent,
        cluster_name=names,
        broker_name=names,
        broker_address=names,
        register_check_code=names,
        new_broker_id=ids,
    ),
    st.builds(
        ElectMasterEvent,
        broker_name=names,
        new_master_elected=st.booleans(),
        new_master_broker_id=st.none() | ids,
        master_epoch=ids,
    ),
    st.builds(CleanBrokerDataEvent, broker_name=names, broker_id_set_to_clean=st.none() | id_sets),
    st.builds(
        UpdateBrokerAddressEvent,
        cluster_name=names,
        broker_name=names,
        broker_address=names,
        broker_id=ids,
    ),
)


@given(events)
def test_every_event_round_trips(event: Event) -> None:
    assert decode_event(encode_event(event)) == event
