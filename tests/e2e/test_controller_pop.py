"""POP across a failover in controller mode: a group of three ``rocketq broker`` processes
around an in-process controller. Messages are popped from the master, half acknowledged, and
the master is killed with SIGKILL right after the last ack's answer. On the new master no
acknowledged message is popped again, and every unacknowledged one comes back once its
invisible time is over (its check-point and ack records are in the replicated revive topic;
the pop offsets follow as consumer offsets)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rocketq.broker.controller_mode.controller_client import ControllerClient
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_namesrv
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.controller_mode import (
    ReplicaWatch,
    broker_processes,
    eventually,
    send_one,
    start_processes,
)
from rocketq.testing.controller_wire import ControllerGroup
from rocketq.testing.pop import ack, pop
from rocketq.testing.wire import create_topic_request

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(60)]

BROKER_NAME = "broker-a"
TOPIC = "PopFailover"
GROUP = "PopFailoverGroup"
COUNT = 16
INVISIBLE_MS = 4000


async def test_after_a_failover_no_acked_pop_comes_back_and_every_unacked_one_does(
    tmp_path: Path,
) -> None:
    controllers = ControllerGroup(tmp_path / "controller", size=1)
    await controllers.start_all()
    client = RemotingClient()
    brokers: list[BrokerProcess] = []
    try:
        leader = await controllers.leader()
        ctl = ControllerClient([leader.addr])
        async with run_namesrv() as ns:
            brokers += broker_processes(
                tmp_path, ns.addr, [leader.addr], 3, {"timerPrecisionMs": "100"}
            )
            await start_processes(brokers)
            watch = ReplicaWatch(ctl, BROKER_NAME)

            assert await eventually(lambda: watch.reaches(3, 1), 30), watch.view
            master = watch.view.master_address
            created = await client.invoke(master, create_topic_request(TOPIC, 1), 10)
            assert created.code == ResponseCode.SUCCESS, created.remark
            for i in range(COUNT):
                sent = await send_one(client, master, TOPIC, b"m%02d" % i)
                assert sent.code == ResponseCode.SUCCESS, sent.remark

            popped = []
            while len(popped) < COUNT:
                _, got = await pop(
                    client, master, BROKER_NAME, GROUP, TOPIC, invisible_ms=INVISIBLE_MS
                )
                popped += got
            assert sorted(bytes(p.msg.body) for p in popped) == [b"m%02d" % i for i in range(COUNT)]
            acked = set()
            for p in popped[::2]:
                answer = await ack(client, master, GROUP, TOPIC, p.handle)
                assert answer.code == ResponseCode.SUCCESS, answer.remark
                acked.add(bytes(p.msg.body))
            next(b for b in brokers if b.addr == master).kill()  # right after the last answer
            unacked = {bytes(p.msg.body) for p in popped} - acked

            assert await eventually(lambda: watch.reaches(1, 2), 15), watch.view
            new_master = watch.view.master_address
            again: list[bytes] = []
            deadline = time.monotonic() + INVISIBLE_MS / 1000 + 12
            while time.monotonic() < deadline and not unacked <= set(again):
                _, got = await pop(
                    client, new_master, BROKER_NAME, GROUP, TOPIC, invisible_ms=60_000, poll_ms=500
                )
                again += [bytes(p.msg.body) for p in got]
            await ctl.shutdown()
    finally:
        for b in brokers:
            b.kill()
        await client.shutdown()
        await controllers.stop_all()

    assert acked & set(again) == set()  # no acknowledged pop came back
    assert unacked <= set(again)  # every unacknowledged one did
