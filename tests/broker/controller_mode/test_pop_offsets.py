"""A new master's pop offsets (controller_mode/pop_offsets.py) count every answered pop's check
point and skip one whose pop was never answered: a check point its in-sync slave did not
confirm is cancelled by a marked ack (pop_service.py), and a new master that counted it would
commit past messages no consumer ever got, while the cancel keeps the check point from reviving
them: they would be lost to the group."""

from __future__ import annotations

import time
from pathlib import Path

from rocketq.broker.controller_mode.pop_offsets import advance_pop_offsets
from rocketq.broker.pop.records import PopCheckPoint
from rocketq.store.results import PutMessageStatus
from rocketq.testing.cluster import run_cluster
from rocketq.testing.store import small_store_properties

TOPIC = "PopOffsetsCancel"
GROUP = "pop-offsets-cancel"
COUNT = 4


def check_point(queue_id: int, pop_time: int) -> PopCheckPoint:
    return PopCheckPoint(
        start_offset=0, pop_time=pop_time, invisible_time=60_000, num=COUNT, queue_id=queue_id,
        topic=TOPIC, cid=GROUP, broker_name="broker-a", queue_offset_diff=list(range(COUNT)),
    )  # fmt: skip


async def test_a_cancelled_check_point_does_not_move_a_new_masters_pop_offset(
    tmp_path: Path,
) -> None:
    props = small_store_properties(timerPrecisionMs="100")
    async with run_cluster(tmp_path, store_properties=props, revive_queue_num=1) as c:
        await c.create_topic(TOPIC, queues=2)
        for queue_id in (0, 1):
            for i in range(COUNT):
                await c.send_raw(TOPIC, f"q{queue_id}m{i}".encode(), queue_id=queue_id)
        broker = c.broker
        service = broker.pop_service
        since = int(time.time() * 1000) - 1000
        answered, unanswered = check_point(0, since + 500), check_point(1, since + 600)
        for ck in (answered, unanswered):
            assert await service.revive_log.append(ck, 0) is PutMessageStatus.PUT_OK
        # the path of a controller-mode pop whose in-sync slave did not confirm its ck
        await service._cancel_check_point(unanswered, 0)
        offsets = broker.consumer_offset_manager
        moved = advance_pop_offsets(
            broker.message_store,
            offsets,
            broker.config.broker_cluster_name,
            broker.config.revive_queue_num,
            since,
        )
        assert moved == 1
        assert offsets.query_offset(GROUP, TOPIC, 0) == COUNT  # answered: past what it popped
        assert offsets.query_offset(GROUP, TOPIC, 1) < 0  # never answered: served again


async def test_a_check_point_before_the_window_by_time_is_read_from_the_masters_floor(
    tmp_path: Path,
) -> None:
    """A ck stored long before the round's window by time (its put waited on a slow replica)
    counts when it lies at or past the floor the round took (PopService.check_point_floor)."""
    props = small_store_properties(timerPrecisionMs="100")
    async with run_cluster(tmp_path, store_properties=props, revive_queue_num=1) as c:
        await c.create_topic(TOPIC, queues=1)
        for i in range(COUNT):
            await c.send_raw(TOPIC, f"m{i}".encode(), queue_id=0)
        broker = c.broker
        store, offsets = broker.message_store, broker.consumer_offset_manager
        cluster, revive_queues = broker.config.broker_cluster_name, broker.config.revive_queue_num
        floor = broker.pop_service.check_point_floor()
        assert floor == store.get_max_phy_offset()  # no ck in flight: the commitlog's end
        ck = check_point(0, int(time.time() * 1000))
        assert await broker.pop_service.append_check_point(ck, 0)
        assert broker.pop_service.check_point_floor() == store.get_max_phy_offset()
        later = int(time.time() * 1000) + 10_000  # a round that began long after the ck
        assert advance_pop_offsets(store, offsets, cluster, revive_queues, later) == 0
        assert offsets.query_offset(GROUP, TOPIC, 0) < 0  # by time alone: missed
        past = store.get_max_phy_offset()  # a floor past the ck: still missed
        assert advance_pop_offsets(store, offsets, cluster, revive_queues, later, past) == 0
        assert advance_pop_offsets(store, offsets, cluster, revive_queues, later, floor) == 1
        assert offsets.query_offset(GROUP, TOPIC, 0) == COUNT
