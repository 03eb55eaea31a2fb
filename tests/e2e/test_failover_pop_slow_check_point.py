"""A pop whose check point took longer to reach the in-sync replicas than the pop offsets'
clock margin is not served again by the next master.

A new master moves its pop offsets past the cks stored since its last metadata round began,
less a 2 s margin for the clocks (controller_mode/pop_offsets.py): the cks whose commits the
round may have missed. But a ck's put waits for every in-sync replica, and its pop commits
only then. A replica slower than the margin (the fault suite under load: CPU starved
processes, a partition beginning) leaves a ck stored before the window whose commit came
after the round: the new master holds neither, and serves the answered pop's messages again
as new ones (the suite's "acknowledged pop came back ... fresh pop of queue").

Here, in a group of three in sync: the slave S2 is paused, so the master's ck put waits for it
while the other slave S1 holds the ck and goes on taking the master's offsets, round after
round, for longer than the margin. S1 is paused, S2 resumed: the put completes, the pop is
answered. The master and S2 are killed and S1 elected: within the pop's invisible time it
serves only the messages never popped. Before the fix (the window by time alone) it served
the popped ones again; the master now answers each offsets request with the lowest commitlog
offset a ck in flight may have, and the window reaches back to it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rocketq.broker.pop.check_point_scan import CLOCK_MARGIN_MS
from rocketq.testing.controller_mode import eventually
from rocketq.testing.controller_mode_group import run_controller_mode_group
from rocketq.testing.pop import Popped

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(120)]

TOPIC = "PopSlowCheckPoint"
GROUP = "PopSlowCheckPointGroup"
BODIES = [b"m%02d" % i for i in range(6)]
POPPED = 4
#: slaves stay in the in-sync set while paused; a put waits up to 30 s for them
EXTRA = {"haMaxTimeSlaveNotCatchup": "600000", "syncFlushTimeout": "30000"}
#: the ck put's wait: the scenario's length (S1's rounds go on meanwhile), not a sync
SLOW_PUT_S = CLOCK_MARGIN_MS / 1000 + 2.5


def bodies(popped: list[Popped]) -> set[bytes]:
    return {bytes(p.msg.body) for p in popped}


async def test_a_pop_answered_after_a_slow_check_point_put_is_not_served_again(
    tmp_path: Path,
) -> None:
    async with run_controller_mode_group(tmp_path, 3, EXTRA) as group:
        master = group.master
        old_master = group.at(master)
        s1, s2 = (b for b in group.brokers if b.addr != master)
        await group.create_topic(TOPIC, 1)
        await group.send(TOPIC, BODIES)
        assert await group.queued(master, TOPIC, len(BODIES))

        group.pause(s2)  # in sync: the ck's put waits for it
        popping = asyncio.create_task(
            group.pop(master, GROUP, TOPIC, max_nums=POPPED, invisible_ms=60_000)
        )
        await asyncio.sleep(SLOW_PUT_S)
        assert not popping.done()  # the put is still waiting for S2
        group.pause(s1)  # its last round took the offsets without this pop's commit
        group.resume(s2)
        _, first = await asyncio.wait_for(popping, 30)
        assert bodies(first) == set(BODIES[:POPPED])  # answered: held by every replica

        s2.kill()  # first: the controller may elect no one but S1 (S2's offsets would hold)
        old_master.kill()
        group.resume(s1)
        watch = group.watch

        async def s1_elected() -> bool:  # at epoch 2, or 3 after a dead S2 was named first
            await watch.reaches(1, 0)
            return watch.view.master_address == s1.addr and watch.view.master_epoch >= 2

        assert await eventually(s1_elected, 30), watch.view
        again = await group.pop_for(3.0, s1.addr, GROUP, TOPIC)

    assert bodies(first) & bodies(again) == set()  # the answered pop is not served again
    assert bodies(again) == set(BODIES[POPPED:])  # the rest is served there
