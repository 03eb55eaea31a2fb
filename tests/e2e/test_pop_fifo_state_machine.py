"""FIFO POP against a model (Hypothesis state machine, a real broker on a background loop):
sends to two queues, FIFO pops, acks, changes of invisible time and waits, in any order.

The model keeps, per queue, the bodies sent (in order), the committed index and the last
popped batch (its bodies, acked marks, next visible times and delivery counts), as
ConsumerOrderInfoManager does. Checked at every pop: a queue gives the messages that follow
its committed index, in order; nothing while its batch is surely in flight; something when
its batch is surely done and messages wait; each message's reconsumeTimes is its count (one
more than in the batch before, when that batch held it). At the end every message is
consumed: popping and acking drains both queues in order.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
    run_state_machine_as_test,
)

from rocketq.common.extra_info import parse_extra_info
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.background import BackgroundCluster
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request

pytestmark = pytest.mark.e2e

INVISIBLE_MS = 1000
MARGIN_MS = 250  # this close to a handle's end the broker may judge either way
GROUP = "fifo-model"
QUEUES = 2


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Batch:
    bodies: list[str]
    handles: dict[str, str]
    ends: dict[str, int]
    counts: dict[str, int]
    acked: set[str] = field(default_factory=set)

    def unacked_ends(self) -> list[int]:
        return [self.ends[b] for b in self.bodies if b not in self.acked]


@dataclass
class Queue:
    sent: list[str] = field(default_factory=list)
    committed: int = 0
    batch: Batch | None = None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundCluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    root: Path = tmp_path_factory.mktemp("fifo-model")
    with BackgroundCluster(root, store_properties=props, revive_interval_ms=100) as c:
        yield c


class FifoModel(RuleBasedStateMachine):
    cluster: BackgroundCluster
    runs = 0

    def __init__(self) -> None:
        super().__init__()
        FifoModel.runs += 1
        self.topic = f"FifoModel{FifoModel.runs}"
        self.addr = self.cluster.brokers["broker-a"].broker_addr
        self.client: RemotingClient = self.cluster.run(_open_client())
        self.queues = [Queue() for _ in range(QUEUES)]
        self.next_body = 0

    @initialize(n=st.integers(2, 6))
    def create_topic_and_send(self, n: int) -> None:
        self.cluster.create_topic(self.topic, queues=QUEUES)
        self.send(n, 0)

    @rule(n=st.integers(1, 4), queue_id=st.integers(0, QUEUES - 1))
    def send(self, n: int, queue_id: int) -> None:
        for _ in range(n):
            body = f"m{self.next_body}"
            self.next_body += 1
            request = send_request(self.topic, body.encode(), queue_id=queue_id)
            response = self.cluster.run(self.client.invoke(self.addr, request, 10.0))
            assert response.code == ResponseCode.SUCCESS, response.remark
            self.queues[queue_id].sent.append(body)
        broker = self.cluster.brokers["broker-a"]
        assert broker.message_store.wait_for_dispatch(5.0)

    @rule(max_nums=st.sampled_from([2, 32]))
    def pop(self, max_nums: int) -> None:
        self._pop(max_nums)

    def _pop(self, max_nums: int) -> list[raw.Popped]:
        before = now_ms()
        _, popped = self.cluster.run(
            raw.pop(
                self.client, self.addr, "broker-a", GROUP, self.topic, order=True,
                max_nums=max_nums, invisible_ms=INVISIBLE_MS,
            )
        )  # fmt: skip
        after = now_ms()
        by_queue: dict[int, list[raw.Popped]] = {}
        for p in popped:
            by_queue.setdefault(p.msg.queue_id, []).append(p)
        for qid, q in enumerate(self.queues):
            self._check_queue(q, by_queue.get(qid, []), before, after, max_nums > len(popped))
        return popped

    def _check_queue(
        self, q: Queue, got: list[raw.Popped], before: int, after: int, room: bool
    ) -> None:
        bodies = [p.msg.body.decode() for p in got]
        ends = q.batch.unacked_ends() if q.batch is not None else []
        if any(end > after + MARGIN_MS for end in ends):
            assert bodies == [], f"popped {bodies} while the batch is in flight"
        elif room and all(end < before - MARGIN_MS for end in ends):
            assert bodies or q.committed >= len(q.sent), "a free queue gave nothing"
        if not got:
            return
        assert bodies == q.sent[q.committed : q.committed + len(bodies)], (
            f"popped {bodies}, expected from {q.sent[q.committed :]}"
        )
        prev = q.batch
        counts = {
            b: (prev.counts.get(b, 0) + 1 if prev is not None and b in prev.bodies else 0)
            for b in bodies
        }
        assert {p.msg.body.decode(): p.msg.reconsume_times for p in got} == counts
        q.batch = Batch(
            bodies,
            {p.msg.body.decode(): p.handle for p in got},
            {p.msg.body.decode(): p.extra.next_visible_time for p in got},
            counts,
        )

    @precondition(lambda self: any(q.batch for q in self.queues))
    @rule(data=st.data())
    def ack(self, data: st.DataObject) -> None:
        q = data.draw(st.sampled_from([q for q in self.queues if q.batch is not None]))
        assert q.batch is not None
        body = data.draw(st.sampled_from(q.batch.bodies))
        left = q.batch.ends[body] - now_ms()
        handle = q.batch.handles[body]
        r = self.cluster.run(raw.ack(self.client, self.addr, GROUP, self.topic, handle))
        if left > MARGIN_MS:
            assert r.code == ResponseCode.SUCCESS, r.remark
        if r.code != ResponseCode.SUCCESS:
            assert r.code == ResponseCode.NO_MESSAGE, r.remark
            return
        _acked(q, body)

    @precondition(lambda self: any(q.batch for q in self.queues))
    @rule(data=st.data(), invisible=st.sampled_from([300, 1500]))
    def change_invisible_time(self, data: st.DataObject, invisible: int) -> None:
        q = data.draw(st.sampled_from([q for q in self.queues if q.batch is not None]))
        assert q.batch is not None
        body = data.draw(st.sampled_from(q.batch.bodies))
        if body in q.batch.acked:
            return
        left = q.batch.ends[body] - now_ms()
        handle = q.batch.handles[body]
        r, new = self.cluster.run(
            raw.change_invisible_time(self.client, self.addr, GROUP, self.topic, handle, invisible)
        )
        if left > MARGIN_MS:
            assert r.code == ResponseCode.SUCCESS, r.remark
        if new is not None:
            q.batch.handles[body] = new
            q.batch.ends[body] = parse_extra_info(new).next_visible_time

    @rule()
    def wait(self) -> None:
        time.sleep(0.5)

    def teardown(self) -> None:
        """Popping and acking drains both queues, in order."""
        deadline = time.monotonic() + 15.0
        while any(q.committed < len(q.sent) for q in self.queues):
            assert time.monotonic() < deadline, "the queues were never drained"
            for p in self._pop(32):
                r = self.cluster.run(raw.ack(self.client, self.addr, GROUP, self.topic, p.handle))
                if r.code == ResponseCode.SUCCESS:
                    _acked(self.queues[p.msg.queue_id], p.msg.body.decode())
            time.sleep(0.1)  # a batch in flight ends within INVISIBLE_MS; pop again after
        self.cluster.run(self.client.shutdown())


def _acked(q: Queue, body: str) -> None:
    """ConsumerOrderInfoManager.commitAndNext: the first un-acked of the batch, or past it."""
    assert q.batch is not None
    q.batch.acked.add(body)
    first = q.sent.index(q.batch.bodies[0])
    undone = [i for i, b in enumerate(q.batch.bodies) if b not in q.batch.acked]
    q.committed = max(q.committed, first + (undone[0] if undone else len(q.batch.bodies)))


async def _open_client() -> RemotingClient:
    return RemotingClient()


def test_fifo_pop_model(cluster: BackgroundCluster) -> None:
    FifoModel.cluster = cluster
    before = FifoModel.runs
    run_state_machine_as_test(
        FifoModel,
        settings=settings(
            max_examples=5,
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    assert FifoModel.runs - before >= 2
