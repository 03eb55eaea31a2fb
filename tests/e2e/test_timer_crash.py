"""A broker SIGKILLed while timers are due and pending: after the restart on the same store
every timer is delivered, exactly one copy per UNIQ_KEY is in the target topic (RocketMQ's
timer can put a second copy after an abnormal recovery; ours does not) and none was stored
before its time. The kill lands while deliveries are going on, with the timer's checkpoint
(written once a second) behind them, so the restarted timer reads slots and wheel-topic
messages it had already handled: the restart window (``delivery_marks``) must skip them."""

from __future__ import annotations

import asyncio
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from rocketq.client import Message
from rocketq.client.aio import Producer
from rocketq.common import message_const as mc
from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore, StoreConfig
from rocketq.store.timer.timer_log import UNIT_SIZE
from rocketq.testing.broker import SMALL_INDEX, run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.cluster import FAST_CLIENT
from rocketq.testing.store import small_store_properties

pytestmark = pytest.mark.e2e
TOPIC = "TimerCrash"
QUEUES = 2
COUNT = 40
PRECISION_MS = 100
LATER = 5


async def start_broker(work_dir: Path, namesrv: str) -> BrokerProcess:
    conf = {
        "brokerName": "broker-a",
        "brokerIP1": "127.0.0.1",
        "namesrvAddr": namesrv,
        "storePathRootDir": str(work_dir / "store"),
        "timerPrecisionMs": str(PRECISION_MS),
        "defaultTopicQueueNums": str(QUEUES),
        **small_store_properties(),
        **SMALL_INDEX,
    }
    broker = BrokerProcess(work_dir, conf)
    await asyncio.to_thread(broker.start, 60.0)
    return broker


def open_store(store_root: Path) -> MessageStore:
    store = MessageStore(
        StoreConfig.from_properties(
            {**small_store_properties(), "storePathRootDir": str(store_root)}
        )[0]
    )
    store.load()
    return store


def pending_units(store: MessageStore) -> Counter[str]:
    """UNIQ_KEY -> timerlog units of the timers still ahead of the read time."""
    timer = store.timer_message_store
    assert timer is not None
    units: Counter[str] = Counter()
    log = timer.timer_log
    for mf in log.mapped_file_queue.mapped_files:
        for pos in range(0, mf.wrote_position - UNIT_SIZE + 1, UNIT_SIZE):
            unit = log.get_unit(mf.file_from_offset + pos)
            if unit is None or unit.delayed_time_ms < timer.curr_read_time_ms:
                continue
            data = store.select_one_message_by_offset(unit.offset_py, unit.size_py)
            assert data is not None
            msg = decode_message(data, check_crc=False)
            units[msg.properties[mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX]] += 1
    return units


def target_copies(store: MessageStore) -> dict[str, list[tuple[int, int]]]:
    """UNIQ_KEY -> [(store time, TIMER_DELIVER_MS)] of every copy in the target topic."""
    copies: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for queue_id in range(QUEUES):
        offset = 0
        while True:
            result = store.get_message("check", TOPIC, queue_id, offset, 32)
            if not result.message_buffers:
                break
            for data in result.message_buffers:
                msg = decode_message(data, check_crc=False)
                due = int(msg.properties[mc.PROPERTY_TIMER_DELIVER_MS])
                copies[msg.properties[mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX]].append(
                    (msg.store_timestamp, due)
                )
            offset = result.next_begin_offset
    return copies


async def test_timers_pending_at_a_kill_9_fire_once_each_and_never_early(tmp_path: Path) -> None:
    work_dir = tmp_path / "broker"
    sent: dict[str, int] = {}
    later: set[str] = set()
    async with run_namesrv() as ns:
        broker = await start_broker(work_dir, ns.addr)
        try:
            async with Producer("pg-timer-crash", namesrv_addr=ns.addr, **FAST_CLIENT) as p:
                start = int(time.time() * 1000)
                for i in range(COUNT):  # due from 0.6 s to ~3 s after the first send
                    msg = Message(TOPIC, f"t{i}".encode())
                    msg.deliver_time_ms = start + 600 + i * 60
                    result = await p.send(msg)
                    sent[result.msg_id] = msg.deliver_time_ms
                for i in range(LATER):  # a minute ahead: still pending after the restart
                    msg = Message(TOPIC, f"later{i}".encode())
                    msg.set_delay_time_sec(60)
                    later.add((await p.send(msg)).msg_id)
            # kill while deliveries go on: about a third due, the rest pending
            await asyncio.sleep(max(0.0, (start + 1400) / 1000 - time.time()))
            assert broker.kill() is not None
            await asyncio.to_thread(broker.start, 60.0)  # on its port: the ids name it
            last_due = max(sent.values())
            await asyncio.sleep(max(0.0, (last_due + 2000) / 1000 - time.time()))
        finally:
            broker.stop()
    store = open_store(work_dir / "store")
    try:
        copies = target_copies(store)
        pending = pending_units(store)
    finally:
        store.shutdown()
    assert pending == dict.fromkeys(later, 1)  # each later timer pending exactly once
    assert set(copies) == set(sent), set(sent) ^ set(copies)  # none lost, none foreign
    twice = {k: v for k, v in copies.items() if len(v) != 1}
    assert twice == {}  # exactly one copy per UNIQ_KEY
    early = {k: v for k, v in copies.items() if v[0][0] < sent[k]}
    assert early == {}  # never stored before its delivery time
