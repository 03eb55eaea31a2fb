"""POP against a model (Hypothesis state machine, a real broker on a background loop): sends,
pops, acks, changes of invisible time, acks with a replaced handle and waits, in any order.

The model keeps, per message, whether it is acked and its live handle. Checked at every step:
an acked message is never popped again; a message is never popped while a handle of it is
live (a pop's popTime is at or after the previous handle's end: never two live handles); an
ack with a live handle succeeds, one with a replaced handle is refused. At the end every
message not acked is popped again (and acked) within the revive time: delivered until acked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
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

from rocketq.broker.controller import BrokerController
from rocketq.common.extra_info import parse_extra_info
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.background import BackgroundCluster
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request

pytestmark = pytest.mark.e2e

INVISIBLE_MS = 1000
MARGIN_MS = 250  # an ack this close to a handle's end may find it expired
GROUP = "pop-model"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundCluster]:
    props = small_store_properties(timerPrecisionMs="100", timerFlushIntervalMs="200")
    root: Path = tmp_path_factory.mktemp("pop-model")
    with BackgroundCluster(
        root, store_properties=props, revive_interval_ms=100, revive_queue_num=2
    ) as c:
        yield c


def now_ms() -> int:
    return int(time.time() * 1000)


class PopModel(RuleBasedStateMachine):
    cluster: BackgroundCluster
    runs = 0

    def __init__(self) -> None:
        super().__init__()
        PopModel.runs += 1
        self.topic = f"PopModel{PopModel.runs}"
        self.broker = self.cluster.brokers["broker-a"]
        self.addr = self.broker.broker_addr
        self.client: RemotingClient = self.cluster.run(_open_client())
        self.next_body = 0
        self.pending: set[str] = set()  # sent, not acked
        self.acked: set[str] = set()
        self.live: dict[str, str] = {}  # body -> its live handle
        self.stale: list[tuple[str, str]] = []  # (body, a handle a change replaced)

    @initialize(n=st.integers(2, 6))
    def create_topic_and_send(self, n: int) -> None:
        self.cluster.create_topic(self.topic, queues=2)
        self.send(n)

    def _pop(self, poll_ms: int = 0) -> list[raw.Popped]:
        _, popped = self.cluster.run(
            raw.pop(
                self.client,
                self.addr,
                "broker-a",
                GROUP,
                self.topic,
                invisible_ms=INVISIBLE_MS,
                poll_ms=poll_ms,
            )
        )
        for p in popped:
            body = p.msg.body.decode()
            assert body not in self.acked, f"acked {body} popped again"
            assert body in self.pending
            old = self.live.get(body)
            if old is not None:
                assert p.extra.pop_time >= parse_extra_info(old).next_visible_time, (
                    f"{body} popped while its handle {old} was live"
                )
            self.live[body] = p.handle
        return popped

    @rule(n=st.integers(1, 4))
    def send(self, n: int) -> None:
        for _ in range(n):
            body = f"m{self.next_body}"
            self.next_body += 1
            request = send_request(self.topic, body.encode(), tags="A", queue_id=self.next_body % 2)
            response = self.cluster.run(self.client.invoke(self.addr, request, 10.0))
            assert response.code == ResponseCode.SUCCESS, response.remark
            self.pending.add(body)
        assert self.cluster.run(_dispatched(self.broker))

    @rule()
    def pop(self) -> None:
        self._pop()

    @precondition(lambda self: self.live)
    @rule(data=st.data())
    def ack(self, data: st.DataObject) -> None:
        body = data.draw(st.sampled_from(sorted(self.live)))
        handle = self.live.pop(body)
        left = parse_extra_info(handle).next_visible_time - now_ms()
        r = self.cluster.run(raw.ack(self.client, self.addr, GROUP, self.topic, handle))
        if left > MARGIN_MS:
            assert r.code == ResponseCode.SUCCESS, r.remark
        if r.code == ResponseCode.SUCCESS:
            self.pending.discard(body)
            self.acked.add(body)
        else:
            assert r.code == ResponseCode.NO_MESSAGE
            self.live[body] = handle  # expired: it comes back

    @precondition(lambda self: self.live)
    @rule(data=st.data(), invisible=st.sampled_from([300, 1500]))
    def change_invisible_time(self, data: st.DataObject, invisible: int) -> None:
        body = data.draw(st.sampled_from(sorted(self.live)))
        handle = self.live[body]
        left = parse_extra_info(handle).next_visible_time - now_ms()
        r, new = self.cluster.run(
            raw.change_invisible_time(self.client, self.addr, GROUP, self.topic, handle, invisible)
        )
        if left > MARGIN_MS:
            assert r.code == ResponseCode.SUCCESS, r.remark
        if new is not None:
            self.live[body] = new
            self.stale.append((body, handle))

    @precondition(lambda self: self.stale)
    @rule()
    def ack_with_a_replaced_handle(self) -> None:
        body, handle = self.stale.pop()
        r = self.cluster.run(raw.ack(self.client, self.addr, GROUP, self.topic, handle))
        assert r.code == ResponseCode.NO_MESSAGE, f"{body}: a replaced handle acked"

    @rule()
    def wait(self) -> None:
        time.sleep(0.5)

    def teardown(self) -> None:
        """Every message not acked comes back; acking each, all end acked."""
        deadline = time.monotonic() + 15.0
        while self.pending and time.monotonic() < deadline:
            for p in self._pop(poll_ms=300):
                body = p.msg.body.decode()
                r = self.cluster.run(raw.ack(self.client, self.addr, GROUP, self.topic, p.handle))
                assert r.code == ResponseCode.SUCCESS, r.remark
                self.live.pop(body, None)
                self.pending.discard(body)
                self.acked.add(body)
        assert not self.pending, f"never delivered again: {sorted(self.pending)}"
        self.cluster.run(self.client.shutdown())


async def _open_client() -> RemotingClient:
    return RemotingClient()


async def _dispatched(broker: BrokerController) -> bool:
    return await asyncio.to_thread(broker.message_store.wait_for_dispatch, 5.0)


def test_pop_model(cluster: BackgroundCluster) -> None:
    PopModel.cluster = cluster
    before = PopModel.runs
    run_state_machine_as_test(
        PopModel,
        settings=settings(
            max_examples=5,
            stateful_step_count=15,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    assert PopModel.runs - before >= 2
