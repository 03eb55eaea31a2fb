"""SlaveVersionAcks: which in-sync slaves hold a topic-config version (broker/metadata_acks.py)."""

from __future__ import annotations

import asyncio

from rocketq.broker.metadata_acks import SLAVE_BROKER_ID, TOPIC_DATA_VERSION, SlaveVersionAcks


def poll(broker_id: str, version: str) -> dict[str, str]:
    return {SLAVE_BROKER_ID: broker_id, TOPIC_DATA_VERSION: version}


def test_only_this_masters_epoch_and_a_counter_at_least_the_targets_count() -> None:
    acks = SlaveVersionAcks()
    assert acks.missing((3, 10)) == []  # not a controller-mode master: nothing to wait for
    acks.in_sync_slaves = lambda: frozenset({1, 2})
    assert acks.missing((3, 10)) == [1, 2]
    acks.note(poll("1", '{"counter":12,"stateVersion":3,"timestamp":5}'))
    acks.note(poll("2", '{"counter":40,"stateVersion":2,"timestamp":5}'))  # a former master's
    assert acks.missing((3, 10)) == [2]
    acks.note(poll("2", '{"counter":9,"stateVersion":3,"timestamp":5}'))  # behind
    assert acks.missing((3, 10)) == [2]
    acks.note(poll("2", "not json"))  # ignored, the last report stands
    acks.note({TOPIC_DATA_VERSION: '{"counter":10,"stateVersion":3}'})  # no id: ignored
    assert acks.missing((3, 10)) == [2]
    acks.note(poll("2", '{"counter":10,"stateVersion":3,"timestamp":6}'))
    assert acks.missing((3, 10)) == []
    acks.reset()
    assert acks.missing((3, 10)) == [1, 2]


async def test_a_waiter_wakes_on_the_report_and_times_out_without_it() -> None:
    acks = SlaveVersionAcks()
    acks.in_sync_slaves = lambda: frozenset({1})
    waiting = asyncio.create_task(acks.wait_for((1, 2), 5))
    await asyncio.sleep(0)  # let it check once and wait
    acks.note(poll("1", '{"counter":2,"stateVersion":1}'))
    assert await asyncio.wait_for(waiting, 5) == []
    assert await acks.wait_for((1, 3), 0.05) == [1]
