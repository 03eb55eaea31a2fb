"""PushConsumer against a real broker: the C++ interop scenarios, run with our client both ends."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path
from typing import Any

from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.bodies import MessageQueueData
from rocketq.testing import until
from rocketq.testing.cluster import FAST_CLIENT, FAST_CONSUMER, Cluster


class Collector:
    """A listener that records what it got; ``fail_first`` asks for one redelivery of each."""

    def __init__(self, *, fail_first: bool = False) -> None:
        self.msgs: list[MessageExt] = []
        self.failed: list[MessageExt] = []
        self.fail_first = fail_first
        self._seen: set[str] = set()

    def __call__(self, msgs: list[MessageExt]) -> ConsumeStatus:
        for msg in msgs:
            if self.fail_first and msg.msg_id not in self._seen:
                self._seen.add(msg.msg_id)
                self.failed.append(msg)
                return ConsumeStatus.RECONSUME_LATER
        self.msgs.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    def seqs(self) -> list[int]:
        return sorted(int(m.properties["seq"]) for m in self.msgs)


async def produce(cluster: Cluster, topic: str, count: int, **kw: Any) -> None:
    tags = kw.pop("tags", ["TagA", "TagB"])
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(count):
            msg = Message(
                topic,
                f"body-{i}".encode(),
                tags=tags[i % len(tags)],
                keys=f"{kw.get('key_prefix', 'key-')}{i}",
                properties={"seq": str(i), "color": "red"},
            )
            await producer.send(msg)


def consumer(cluster: Cluster, group: str, topic: str, expr: str = "*", **kw: Any) -> PushConsumer:
    options = {**FAST_CONSUMER, "consume_from_where": "CONSUME_FROM_FIRST_OFFSET", **kw}
    c = PushConsumer(group, namesrv_addr=cluster.addr, **options)
    c.subscribe(topic, expr)
    return c


async def test_clustering_consumes_each_message_once_with_fields_intact(cluster: Cluster) -> None:
    await produce(cluster, "TopicA", 20)
    got = Collector()
    c = consumer(cluster, "GroupA", "TopicA")
    c.register_message_listener(got)
    await c.start()
    try:
        assert await until(lambda: len(got.msgs) >= 20, 30)
        assert await until(lambda: sum(cluster.committed("GroupA", "TopicA").values()) == 20, 10)
    finally:
        await c.shutdown()
    assert got.seqs() == list(range(20))
    for m in got.msgs:
        i = int(m.properties["seq"])
        assert m.topic == "TopicA"
        assert m.body == f"body-{i}".encode()
        assert m.tags == ("TagA" if i % 2 == 0 else "TagB")
        assert m.keys == [f"key-{i}"]
        assert m.properties["color"] == "red"
        assert m.properties["CLUSTER"] == "DefaultCluster"
        assert m.msg_id == m.uniq_key
        assert len(m.msg_id) == 32
        assert m.reconsume_times == 0
        assert m.born_timestamp > 0
        assert m.store_timestamp >= m.born_timestamp
        assert m.born_host[0] == "127.0.0.1"
        assert f"{m.store_host[0]}:{m.store_host[1]}" == cluster.broker.broker_addr
    assert Counter((m.queue_id, m.queue_offset) for m in got.msgs).most_common(1)[0][1] == 1


async def test_tag_filter_delivers_only_matching_tags(cluster: Cluster) -> None:
    await produce(cluster, "TopicF", 12, tags=["TagA", "TagB", "TagC"])
    got = Collector()
    c = consumer(cluster, "GroupF", "TopicF", "TagA || TagC")
    c.register_message_listener(got)
    await c.start()
    try:
        assert await until(lambda: len(got.msgs) >= 8, 30)
        assert await until(lambda: sum(cluster.committed("GroupF", "TopicF").values()) == 12, 10)
    finally:
        await c.shutdown()
    assert Counter(m.tags for m in got.msgs) == Counter({"TagA": 4, "TagC": 4})


async def test_two_consumers_in_one_group_split_the_queues(cluster: Cluster) -> None:
    await cluster.create_topic("TopicS", 4)
    a, b = Collector(), Collector()
    ca = consumer(cluster, "GroupS", "TopicS", instance_name="a")
    cb = consumer(cluster, "GroupS", "TopicS", instance_name="b")
    ca.register_message_listener(a)
    cb.register_message_listener(b)
    await ca.start()
    await cb.start()
    try:

        def split() -> bool:
            qa = {mq.queue_id for mq in ca.assigned_queues() if mq.topic == "TopicS"}
            qb = {mq.queue_id for mq in cb.assigned_queues() if mq.topic == "TopicS"}
            return len(qa) == 2 and len(qb) == 2 and not qa & qb

        assert await until(split, 30)
        await produce(cluster, "TopicS", 40)
        assert await until(lambda: len(a.msgs) + len(b.msgs) >= 40, 30)
    finally:
        await ca.shutdown()
        await cb.shutdown()
    queues_a = {m.queue_id for m in a.msgs}
    queues_b = {m.queue_id for m in b.msgs}
    assert sorted(int(m.properties["seq"]) for m in a.msgs + b.msgs) == list(range(40))
    assert queues_a
    assert queues_b
    assert not queues_a & queues_b


async def test_broadcasting_delivers_every_message_to_every_consumer(
    cluster: Cluster, tmp_path: Path
) -> None:
    await cluster.create_topic("TopicB", 2)
    runs = []
    for name in ("x", "y"):
        got = Collector()
        c = consumer(
            cluster,
            "GroupB",
            "TopicB",
            instance_name=name,
            message_model="BROADCASTING",
            offset_store_dir=str(tmp_path / "offsets"),
        )
        c.register_message_listener(got)
        await c.start()
        runs.append((c, got))
    try:
        assert await until(lambda: all(len(c.assigned_queues()) == 2 for c, _ in runs), 30)
        await produce(cluster, "TopicB", 10)
        assert await until(lambda: all(len(g.msgs) >= 10 for _, g in runs), 30)
    finally:
        for c, _ in runs:
            await c.shutdown()
    for c, got in runs:
        assert got.seqs() == list(range(10))
        offsets = (tmp_path / "offsets").glob(f"*@{c.config.instance_name}/GroupB/offsets.json")
        assert [p.name for p in offsets] == ["offsets.json"]
    assert cluster.committed("GroupB", "TopicB") == {}


async def test_orderly_consumer_sees_each_sharding_key_in_send_order(cluster: Cluster) -> None:
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        for i in range(30):
            msg = Message("TopicO", f"o-{i}".encode(), properties={"seq": str(i)})
            await producer.send_orderly(msg, f"order-{i % 3}")
    seen: list[MessageExt] = []
    active = 0
    overlap = False

    async def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        nonlocal active, overlap
        active += 1
        overlap = overlap or active > 4
        await asyncio.sleep(0.001)
        seen.extend(msgs)
        active -= 1
        return ConsumeStatus.CONSUME_SUCCESS

    c = consumer(cluster, "GroupO", "TopicO")
    c.register_message_listener(listener, orderly=True)
    await c.start()
    locks = cluster.broker.rebalance_lock_manager
    try:
        assert await until(lambda: len(seen) >= 30, 30)
        client_id = c.rebalance.instance.client_id
        held = [
            MessageQueueData(topic=mq.topic, broker_name=mq.broker_name, queue_id=mq.queue_id)
            for mq in c.assigned_queues()
        ]
        assert len(held) == 5  # 4 queues of TopicO and the retry queue
        assert all(locks.is_locked("GroupO", mq, client_id) for mq in held)
    finally:
        await c.shutdown()
    assert not any(locks.is_locked("GroupO", mq, client_id) for mq in held)
    by_queue: dict[int, list[int]] = {}
    for m in seen:
        by_queue.setdefault(m.queue_id, []).append(int(m.properties["seq"]))
    assert sorted(s for seqs in by_queue.values() for s in seqs) == list(range(30))
    for seqs in by_queue.values():
        assert seqs == sorted(seqs)
    assert not overlap


async def test_a_restarted_consumer_resumes_from_its_committed_offset(cluster: Cluster) -> None:
    await produce(cluster, "TopicR", 10)
    first = Collector()
    c1 = consumer(cluster, "GroupR", "TopicR")
    c1.register_message_listener(first)
    await c1.start()
    try:
        assert await until(lambda: len(first.msgs) >= 10, 30)
    finally:
        await c1.shutdown()
    assert sum(cluster.committed("GroupR", "TopicR").values()) == 10
    await produce(cluster, "TopicR", 5, key_prefix="second-")
    second = Collector()
    c2 = consumer(cluster, "GroupR", "TopicR")
    c2.register_message_listener(second)
    await c2.start()
    try:
        assert await until(lambda: len(second.msgs) >= 5, 30)
        await asyncio.sleep(0.5)  # a duplicate from before the restart would show up by now
    finally:
        await c2.shutdown()
    assert sorted(m.keys[0] for m in second.msgs) == sorted(f"second-{i}" for i in range(5))


async def test_a_failed_message_is_sent_back_and_redelivered(cluster: Cluster) -> None:
    await produce(cluster, "TopicRetry", 3)
    got = Collector(fail_first=True)
    c = consumer(cluster, "GroupRetry", "TopicRetry")
    c.register_message_listener(got)
    await c.start()
    try:
        assert await until(lambda: len(got.msgs) >= 3, 40)
    finally:
        await c.shutdown()
    assert sorted(int(m.properties["seq"]) for m in got.failed) == [0, 1, 2]
    assert got.seqs() == [0, 1, 2]
    assert all(m.reconsume_times == 1 for m in got.msgs)
    assert all(m.topic == "TopicRetry" for m in got.msgs)
    assert cluster.broker.topic_config_manager.select_topic_config("%RETRY%GroupRetry")


async def test_a_one_mib_body_and_a_compressed_body_round_trip(cluster: Cluster) -> None:
    import hashlib
    import random

    rng = random.Random(7)
    big = bytes(rng.getrandbits(8) for _ in range(1024 * 1024))
    text = b"compressible-" * 2000
    async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
        await producer.send(Message("TopicL", big, properties={"seq": "0"}))
        await producer.send(Message("TopicL", text, properties={"seq": "1"}))
    got = Collector()
    c = consumer(cluster, "GroupL", "TopicL")
    c.register_message_listener(got)
    await c.start()
    try:
        assert await until(lambda: len(got.msgs) >= 2, 30)
    finally:
        await c.shutdown()
    bodies = {int(m.properties["seq"]): m.body for m in got.msgs}
    assert hashlib.sha256(bodies[0]).digest() == hashlib.sha256(big).digest()
    assert bodies[1] == text


async def test_a_joining_member_triggers_an_immediate_rebalance_through_notify(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("TopicN", 4)
    slow = {"rebalance_interval_s": 60.0}  # only NOTIFY_CONSUMER_IDS_CHANGED can rebalance now
    first = consumer(cluster, "GroupN", "TopicN", instance_name="n1", **slow)
    second = consumer(cluster, "GroupN", "TopicN", instance_name="n2", **slow)
    for c in (first, second):
        c.register_message_listener(Collector())
    await first.start()
    try:
        assert await until(lambda: len(first.assigned_queues()) == 5, 10)
        await second.start()
        assert await until(lambda: len(first.assigned_queues()) < 5, 10)
        assert await until(lambda: len(second.assigned_queues()) > 0, 10)
    finally:
        await second.shutdown()
        await first.shutdown()


async def test_flow_control_stops_pulling_at_the_queue_message_threshold(cluster: Cluster) -> None:
    await cluster.create_topic("TopicFC", 1)
    await produce(cluster, "TopicFC", 60)
    gate = asyncio.Event()
    done: list[MessageExt] = []

    async def blocked(msgs: list[MessageExt]) -> ConsumeStatus:
        await gate.wait()
        done.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    c = consumer(cluster, "GroupFC", "TopicFC", pull_threshold_for_queue=10, pull_batch_size=4)
    c.register_message_listener(blocked)
    await c.start()
    try:
        table = c.rebalance.process_queue_table
        pq = await _process_queue(table, "TopicFC")
        assert await until(lambda: pq.msg_count > 10, 20)
        await asyncio.sleep(0.5)  # more pulls would have landed by now
        assert pq.msg_count <= 10 + 4
        gate.set()
        assert await until(lambda: len(done) >= 60, 30)
    finally:
        gate.set()
        await c.shutdown()


async def test_flow_control_stops_pulling_when_the_offset_span_is_too_wide(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("TopicSpan", 1)
    await produce(cluster, "TopicSpan", 60)
    gate = asyncio.Event()
    done: list[MessageExt] = []

    async def all_block(msgs: list[MessageExt]) -> ConsumeStatus:
        await gate.wait()  # nothing leaves the queue, so its span grows with every pull
        done.extend(msgs)
        return ConsumeStatus.CONSUME_SUCCESS

    c = consumer(
        cluster, "GroupSpan", "TopicSpan", consume_concurrently_max_span=8, pull_batch_size=4
    )
    c.register_message_listener(all_block)
    await c.start()
    try:
        pq = await _process_queue(c.rebalance.process_queue_table, "TopicSpan")
        assert await until(lambda: pq.max_span() > 8, 20)
        await asyncio.sleep(0.5)
        assert pq.max_span() <= 8 + 4
        assert pq.msg_count <= 8 + 4 + 1  # far below the count threshold (1000)
        gate.set()
        assert await until(lambda: len(done) >= 60, 30)
    finally:
        gate.set()
        await c.shutdown()


async def _process_queue(table: dict[Any, Any], topic: str) -> Any:
    assert await until(lambda: any(mq.topic == topic for mq in table), 20)
    return next(pq for mq, pq in table.items() if mq.topic == topic)


async def test_a_message_the_broker_will_not_take_back_is_retried_locally(
    cluster: Cluster,
) -> None:
    # a read-only retry topic makes CONSUMER_SEND_MSG_BACK answer NO_PERMISSION
    cluster.broker.topic_config_manager.update_topic_config(
        TopicConfig(topic_name="%RETRY%GroupLocal", read_queue_nums=1, write_queue_nums=1, perm=4)
    )
    await cluster.broker.register_broker_all()
    await produce(cluster, "TopicLocal", 3)
    got = Collector(fail_first=True)
    c = consumer(cluster, "GroupLocal", "TopicLocal", local_retry_delay_s=0.2)
    c.register_message_listener(got)
    await c.start()
    try:
        assert await until(lambda: len(got.msgs) >= 3, 30)
        assert await until(
            lambda: sum(cluster.committed("GroupLocal", "TopicLocal").values()) == 3, 10
        )
    finally:
        await c.shutdown()
    assert got.seqs() == [0, 1, 2]
    assert sorted(int(m.properties["seq"]) for m in got.failed) == [0, 1, 2]
    assert all(m.reconsume_times == 1 for m in got.msgs)
    store = cluster.broker.message_store
    assert store.get_max_offset_in_queue("%RETRY%GroupLocal", 0) == 0  # nothing went back


async def test_a_topic_subscribed_after_start_is_consumed_too(cluster: Cluster) -> None:
    await produce(cluster, "TopicFirst", 2)
    await produce(cluster, "TopicLater", 3)
    got = Collector()
    c = consumer(cluster, "GroupLater", "TopicFirst", rebalance_interval_s=60.0)
    c.register_message_listener(got)
    await c.start()
    try:
        assert await until(lambda: len(got.msgs) >= 2, 20)
        c.subscribe("TopicLater", "TagA || TagB")
        assert await until(lambda: len(got.msgs) >= 5, 20)
    finally:
        await c.shutdown()
    assert Counter(m.topic for m in got.msgs) == Counter({"TopicFirst": 2, "TopicLater": 3})


async def test_the_heartbeat_registers_the_group_its_subscriptions_and_the_retry_topic(
    cluster: Cluster,
) -> None:
    await cluster.create_topic("TopicHb", 2)  # a route, so the client knows a broker
    c = consumer(cluster, "GroupHb", "TopicHb", "TagA || TagB")
    c.register_message_listener(Collector())
    manager = cluster.broker.consumer_manager
    await c.start()
    try:
        client_id = c.rebalance.instance.client_id
        info = manager.get_consumer_group_info("GroupHb")
        assert info is not None
        assert info.all_client_ids() == [client_id]
        sub = manager.find_subscription_data("GroupHb", "TopicHb")
        assert sub is not None
        assert sub.tags_set == ["TagA", "TagB"]
        assert sub.code_set == [2598919, 2598920]
        assert manager.find_subscription_data("GroupHb", "%RETRY%GroupHb") is not None
    finally:
        await c.shutdown()
    assert await until(lambda: manager.get_consumer_group_info("GroupHb") is None, 5)


async def test_a_delayed_message_arrives_after_its_delay_level(cluster: Cluster) -> None:
    got = Collector()
    c = consumer(cluster, "GroupDelay", "TopicDelay")
    c.register_message_listener(got)
    await c.start()
    try:
        async with Producer("pg", namesrv_addr=cluster.addr, **FAST_CLIENT) as producer:
            msg = Message("TopicDelay", b"later", delay_time_level=2, properties={"seq": "0"})
            sent_at = asyncio.get_running_loop().time()
            await producer.send(msg)
        assert await until(lambda: len(got.msgs) >= 1, 20)
        waited = asyncio.get_running_loop().time() - sent_at
    finally:
        await c.shutdown()
    assert waited >= 0.9  # level 2 is one second with the test broker's delay table
    assert got.msgs[0].topic == "TopicDelay"
    assert got.msgs[0].body == b"later"


async def test_client_and_broker_leave_the_global_random_state_alone(cluster: Cluster) -> None:
    # an application (or Hypothesis) that seeds `random` must not see a library's threads
    # draw from it: message ids, queue selection, rebalance and the retry queue each use
    # their own generator
    random.seed(20261125)
    before = random.getstate()
    await produce(cluster, "TopicRandom", 3)
    got = Collector(fail_first=True)  # each message is sent back once: a random retry queue
    c = consumer(cluster, "GroupRandom", "TopicRandom")
    c.register_message_listener(got)
    await c.start()
    try:
        assert await until(lambda: len(got.msgs) >= 3, 40)
    finally:
        await c.shutdown()
    assert got.seqs() == [0, 1, 2]
    assert random.getstate() == before
