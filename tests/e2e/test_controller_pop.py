"""POP across a failover in controller mode: a group of three ``rocketq broker`` processes
around an in-process controller. Messages are popped from the master, half acknowledged, and
the master is killed with SIGKILL right after the last ack's answer. On the new master no
acknowledged message is popped again, and every unacknowledged one comes back once its
invisible time is over (its check-point and ack records are in the replicated revive topic;
the pop offsets follow as consumer offsets)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.response_code import ResponseCode
from rocketq.testing.controller_mode_group import run_controller_mode_group
from rocketq.testing.pop import ack

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(60)]

TOPIC = "PopFailover"
GROUP = "PopFailoverGroup"
COUNT = 16
INVISIBLE_MS = 4000


async def test_after_a_failover_no_acked_pop_comes_back_and_every_unacked_one_does(
    tmp_path: Path,
) -> None:
    async with run_controller_mode_group(tmp_path, 3, {"timerPrecisionMs": "100"}) as group:
        master = group.master
        await group.create_topic(TOPIC, 1)
        await group.send(TOPIC, [b"m%02d" % i for i in range(COUNT)])

        popped = []
        while len(popped) < COUNT:
            popped += (await group.pop(master, GROUP, TOPIC, invisible_ms=INVISIBLE_MS))[1]
        assert sorted(bytes(p.msg.body) for p in popped) == [b"m%02d" % i for i in range(COUNT)]
        acked = set()
        for p in popped[::2]:
            answer = await ack(group.client, master, GROUP, TOPIC, p.handle)
            assert answer.code == ResponseCode.SUCCESS, answer.remark
            acked.add(bytes(p.msg.body))
        group.at(master).kill()  # right after the last answer
        unacked = {bytes(p.msg.body) for p in popped} - acked

        new_master = await group.elected(1, 2)
        again: list[bytes] = []
        loop = asyncio.get_running_loop()
        deadline = loop.time() + INVISIBLE_MS / 1000 + 12
        while loop.time() < deadline and not unacked <= set(again):
            _, got = await group.pop(new_master, GROUP, TOPIC, invisible_ms=60_000, poll_ms=500)
            again += [bytes(p.msg.body) for p in got]

    assert acked & set(again) == set()  # no acknowledged pop came back
    assert unacked <= set(again)  # every unacknowledged one did
