from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import Any

import pytest

from rocketq.broker.long_polling import PullRequest, PullRequestHoldService
from rocketq.broker.property_filter import message_filter_of
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.subscription import build_subscription_data
from rocketq.remoting.server import RemotingServer
from rocketq.testing.wait import until
from tests.broker.channel_pair import Link, connect


def held_pull(link: Link, offset: int, timeout_ms: int, tag_code: int | None = None) -> PullRequest:
    return PullRequest(
        channel=link.channel,
        request=RemotingCommand.create_request(RequestCode.PULL_MESSAGE),
        topic="T",
        queue_id=0,
        pull_from_this_offset=offset,
        timeout_ms=timeout_ms,
        matches_tags_code=(lambda code: tag_code is None or code == tag_code),
    )


class Woken:
    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[PullRequest, float]] = asyncio.Queue()

    async def __call__(self, pull: PullRequest) -> None:
        await self.queue.put((pull, time.monotonic()))


@dataclass
class Holding:
    woken: Woken
    hold: PullRequestHoldService
    link: Link


@pytest.fixture
async def holding(server: RemotingServer) -> AsyncIterator[Holding]:
    """A hold service whose wake-ups land in a queue, and a client channel to hold pulls of."""
    woken = Woken()
    hold = PullRequestHoldService(woken)
    link = await connect(server)
    try:
        yield Holding(woken, hold, link)
    finally:
        await hold.shutdown()
        await link.client.shutdown()


async def test_held_pull_wakes_when_a_message_arrives_past_its_offset(holding: Holding) -> None:
    woken, hold, link = holding.woken, holding.hold, holding.link
    pull = held_pull(link, offset=5, timeout_ms=15_000)
    hold.suspend_pull_request(pull)
    assert hold.notify_message_arriving("T", 0, max_offset=5) == 0  # not past the offset
    assert hold.notify_message_arriving("T", 1, max_offset=9) == 0  # other queue
    assert hold.held_count == 1
    assert hold.notify_message_arriving("T", 0, max_offset=6) == 1
    got, _ = await asyncio.wait_for(woken.queue.get(), 3.0)
    assert got is pull
    assert hold.held_count == 0
    assert hold.notify_message_arriving("T", 0, max_offset=7) == 0  # woken only once


async def test_non_matching_tag_does_not_wake_and_timeout_answers(holding: Holding) -> None:
    woken, hold, link = holding.woken, holding.hold, holding.link
    start = time.monotonic()
    hold.suspend_pull_request(held_pull(link, offset=0, timeout_ms=200, tag_code=42))
    assert hold.notify_message_arriving("T", 0, max_offset=1, tags_code=7) == 0
    _, when = await asyncio.wait_for(woken.queue.get(), 10.0)
    assert when - start >= 0.15  # answered by its timeout, not by the message that missed
    assert hold.held_count == 0


async def test_arrival_notified_from_a_store_thread_hops_onto_the_loop(holding: Holding) -> None:
    woken, hold, link = holding.woken, holding.hold, holding.link
    hold.suspend_pull_request(held_pull(link, offset=0, timeout_ms=15_000))
    reput = threading.Thread(target=hold.notify_message_arriving_threadsafe, args=("T", 0, 1, 3))
    reput.start()
    reput.join(3.0)
    got, _ = await asyncio.wait_for(woken.queue.get(), 3.0)
    assert got.topic == "T"


async def test_closed_channel_drops_its_held_pull_and_shutdown_answers_the_rest(
    server: RemotingServer,
) -> None:
    woken = Woken()
    hold = PullRequestHoldService(woken)
    a, b = await connect(server), await connect(server)
    try:
        hold.suspend_pull_request(held_pull(a, offset=0, timeout_ms=15_000))
        hold.suspend_pull_request(held_pull(b, offset=0, timeout_ms=15_000))
        a.channel.close()
        assert hold.held_count == 1
        await hold.shutdown()
        got, _ = woken.queue.get_nowait()
        assert got.channel is b.channel
        assert woken.queue.empty()
    finally:
        await a.client.shutdown()
        await b.client.shutdown()


async def test_held_sql92_pull_wakes_only_for_a_message_whose_properties_match(
    server: RemotingServer,
) -> None:
    sql = message_filter_of(build_subscription_data("T", "region = 'eu'", 1, "SQL92"))
    woken = Woken()
    hold = PullRequestHoldService(woken)
    link = await connect(server)
    try:
        pull = held_pull(link, offset=5, timeout_ms=15_000)
        pull.matches_tags_code = sql.is_matched_by_consume_queue
        pull.matches_properties = sql.is_matched_by_properties
        hold.suspend_pull_request(pull)
        assert hold.notify_message_arriving("T", 0, 6, 123, {"region": "us"}) == 0
        assert hold.held_count == 1
        assert hold.notify_message_arriving("T", 0, 7, 123, {"region": "eu"}) == 1
        got, _ = await asyncio.wait_for(woken.queue.get(), 3.0)
        assert got is pull
    finally:
        await hold.shutdown()
        await link.client.shutdown()


async def test_arrival_notified_on_the_loops_own_thread_wakes_the_held_pull_at_once(
    holding: Holding,
) -> None:
    woken, hold, link = holding.woken, holding.hold, holding.link
    hold.suspend_pull_request(held_pull(link, offset=0, timeout_ms=15_000))
    hold.notify_message_arriving_threadsafe("T", 0, 1, 3)  # the broker's loop dispatched
    assert hold.held_count == 0  # woken before the call returned, no hop
    got, _ = await asyncio.wait_for(woken.queue.get(), 3.0)
    assert got.pull_from_this_offset == 0


async def test_arrivals_from_a_store_thread_all_wake_their_pulls_through_shared_hops(
    holding: Holding,
) -> None:
    woken, hold, link = holding.woken, holding.hold, holding.link
    pulls = [held_pull(link, offset=0, timeout_ms=15_000) for _ in range(3)]
    for queue_id, pull in enumerate(pulls):
        pull.queue_id = queue_id
        hold.suspend_pull_request(pull)

    def reput_run() -> None:  # one run of records for three queues
        for queue_id in range(3):
            hold.notify_message_arriving_threadsafe("T", queue_id, 1, 3)

    reput = threading.Thread(target=reput_run)
    reput.start()
    reput.join(3.0)
    got = {(await asyncio.wait_for(woken.queue.get(), 3.0))[0].queue_id for _ in range(3)}
    assert got == {0, 1, 2}
    assert hold.held_count == 0


async def test_an_arrival_runs_the_woken_pulls_first_step_at_once_and_the_rest_in_a_task(
    server: RemotingServer,
) -> None:
    steps: list[str] = []
    release = asyncio.Event()

    async def wakeup(pull: PullRequest) -> None:
        steps.append(f"read {pull.queue_id}")
        if pull.queue_id == 1:  # a cold read: waits for a thread
            await release.wait()
            steps.append("answered 1")

    hold = PullRequestHoldService(wakeup)
    link = await connect(server)
    try:
        hot, cold = held_pull(link, 0, 15_000), held_pull(link, 0, 15_000)
        cold.queue_id = 1
        hold.suspend_pull_request(hot)
        hold.suspend_pull_request(cold)
        assert hold.notify_message_arriving("T", 0, max_offset=1) == 1
        assert steps == ["read 0"]  # answered inside the call: no task, no loop iteration
        assert hold.notify_message_arriving("T", 1, max_offset=1) == 1
        assert steps == ["read 0", "read 1"]
        await asyncio.sleep(0)  # the task waits on the pending future the first step left
        assert steps == ["read 0", "read 1"]
        release.set()
        assert await until(lambda: "answered 1" in steps, 5.0)
    finally:
        await hold.shutdown()
        await link.client.shutdown()


async def test_a_woken_pull_left_waiting_is_cancelled_at_its_await_and_errors_are_logged(
    server: RemotingServer, caplog: pytest.LogCaptureFixture
) -> None:
    outcomes: list[str] = []
    never = asyncio.Event()

    async def wakeup(pull: PullRequest) -> None:
        if pull.queue_id == 0:
            try:
                await never.wait()
            except asyncio.CancelledError:
                outcomes.append("cancelled at its await")
                raise
        else:
            await asyncio.sleep(0)  # a bare yield, then a failure
            raise RuntimeError("disk on fire")

    hold = PullRequestHoldService(wakeup)
    link = await connect(server)
    try:
        failing = held_pull(link, 0, 15_000)
        failing.queue_id = 1
        hold.suspend_pull_request(failing)
        hold.notify_message_arriving("T", 1, max_offset=1)
        failed = set(hold._tasks)
        assert len(failed) == 1
        assert await asyncio.gather(*failed) == [None]  # the failure is logged, not raised
        assert "re-executing held pull of T@1 failed" in caplog.text
        hold.suspend_pull_request(held_pull(link, 0, 15_000))
        hold.notify_message_arriving("T", 0, max_offset=1)
        (waiting,) = hold._tasks
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert outcomes == ["cancelled at its await"]
    finally:
        await hold.shutdown()
        await link.client.shutdown()


async def test_an_arrival_answers_through_answer_now_without_a_task_and_logs_its_failure(
    server: RemotingServer, caplog: pytest.LogCaptureFixture
) -> None:
    woken = Woken()
    hold = PullRequestHoldService(woken)  # the timeout's path
    answered: list[int] = []
    release = asyncio.Event()

    async def cold_read() -> None:
        await release.wait()
        answered.append(2)

    def answer_now(pull: PullRequest) -> Coroutine[Any, Any, None] | None:
        if pull.queue_id == 1:
            raise RuntimeError("disk on fire")
        if pull.queue_id == 2:
            return cold_read()  # what is left runs in a task
        answered.append(pull.queue_id)
        return None

    hold.answer_now = answer_now
    link = await connect(server)
    try:
        pulls = [held_pull(link, 0, 15_000) for _ in range(3)]
        for queue_id, pull in enumerate(pulls):
            pull.queue_id = queue_id
            hold.suspend_pull_request(pull)
        assert hold.notify_message_arriving("T", 0, max_offset=1) == 1
        assert answered == [0]  # answered inside the call
        assert not hold._tasks  # no coroutine, no task
        assert hold.notify_message_arriving("T", 1, max_offset=1) == 1
        assert "re-executing held pull of T@1 failed" in caplog.text
        assert hold.notify_message_arriving("T", 2, max_offset=1) == 1
        (left,) = hold._tasks
        release.set()
        await asyncio.wait_for(left, 5.0)
        assert answered == [0, 2]
        assert woken.queue.empty()  # arrivals never took the timeout's path
        late = held_pull(link, 0, 10)  # a timeout still wakes through ``wakeup``
        hold.suspend_pull_request(late)
        got, _ = await asyncio.wait_for(woken.queue.get(), 5.0)
        assert got is late
    finally:
        await hold.shutdown()
        await link.client.shutdown()


async def test_a_connection_s_held_pulls_leave_nothing_behind_once_answered(
    holding: Holding,
) -> None:
    """A consumer holds a pull per message for as long as it lives: the pulls answered must
    not stay referenced by its connection (a close listener per pull kept each one, with its
    request, until the connection closed: ~1,000 a second at the latency phase's rate)."""
    woken, hold, link = holding.woken, holding.hold, holding.link
    listeners = len(link.channel._close_listeners)
    for offset in range(50):
        hold.suspend_pull_request(held_pull(link, offset=offset, timeout_ms=15_000))
        assert hold.notify_message_arriving("T", 0, offset + 1) == 1
        await asyncio.wait_for(woken.queue.get(), 3.0)
    assert len(link.channel._close_listeners) <= listeners + 1
    # the connection's close still drops what it holds
    hold.suspend_pull_request(held_pull(link, offset=50, timeout_ms=15_000))
    assert hold.held_count == 1
    link.channel.close()
    assert hold.held_count == 0
