"""RouteRefresher: one name-server request per topic and window, callers coalesced, failures
classified (the refresher alone, with an injected clock and a fetch the test controls)."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from rocketq.client.aio.route_refresher import RouteRefresher, needs_route_refresh
from rocketq.errors import (
    FlushDiskTimeoutError,
    MessageIllegalError,
    NoPermissionError,
    RemotingConnectError,
    RemotingTimeoutError,
    ServiceNotAvailableError,
    SystemError_,
    TopicNotExistError,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Fetch:
    """A name server the test answers: each call waits for ``release`` unless ``open``."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = asyncio.Event()
        self.release.set()
        self.error: Exception | None = None

    async def __call__(self, topic: str) -> bool:
        self.calls.append(topic)
        await self.release.wait()
        if self.error is not None:
            raise self.error
        return True


def refresher(fetch: Fetch, clock: Clock, **kwargs: float) -> RouteRefresher:
    return RouteRefresher(fetch, first_delay_s=0, clock=clock, rng=random.Random(7), **kwargs)


async def test_concurrent_callers_share_one_request() -> None:
    fetch, clock = Fetch(), Clock()
    fetch.release.clear()
    r = refresher(fetch, clock)
    callers = [asyncio.create_task(r.refresh_now("T")) for _ in range(20)]
    await asyncio.sleep(0)  # let every caller reach the refresher before the answer
    fetch.release.set()
    assert await asyncio.gather(*callers) == [True] * 20
    assert fetch.calls == ["T"]
    assert r.requests_count == 1
    assert r.skipped_count == 19


async def test_a_second_request_waits_for_the_window_with_its_jitter() -> None:
    fetch, clock = Fetch(), Clock()
    r = refresher(fetch, clock, min_interval_s=0.1, jitter_s=0.1)
    assert await r.refresh_now("T") is True
    end = r.window_end("T")
    assert clock.now + 0.1 <= end <= clock.now + 0.2
    clock.now = end - 0.001
    assert await r.refresh_now("T") is False  # the route is that fresh: no request
    assert fetch.calls == ["T"]
    clock.now = end
    assert await r.refresh_now("T") is True
    assert fetch.calls == ["T", "T"]


async def test_windows_are_jittered_so_a_fleet_drifts_apart() -> None:
    clock = Clock()
    ends = []
    for seed in range(10):
        r = RouteRefresher(Fetch(), first_delay_s=0, clock=clock, rng=random.Random(seed))
        await r.refresh_now("T")
        ends.append(r.window_end("T") - clock.now)
    assert all(0.1 <= e <= 0.2 for e in ends)
    assert len({round(e, 6) for e in ends}) == len(ends)


async def test_topics_have_windows_of_their_own() -> None:
    fetch, clock = Fetch(), Clock()
    r = refresher(fetch, clock)
    assert await r.refresh_now("A") is True
    assert await r.refresh_now("B") is True
    assert await r.refresh_now("A") is False
    assert fetch.calls == ["A", "B"]


async def test_a_failed_request_keeps_the_route_and_still_holds_the_window() -> None:
    fetch, clock = Fetch(), Clock()
    fetch.error = RemotingConnectError("no name server")
    r = refresher(fetch, clock)
    assert await r.refresh_now("T") is False  # the caller's own error is the one to report
    clock.now += 0.05
    assert await r.refresh_now("T") is False
    assert fetch.calls == ["T"]  # a name server that is down is not asked by every send


async def test_a_caller_out_of_time_leaves_the_request_running_for_the_others() -> None:
    fetch, clock = Fetch(), Clock()
    fetch.release.clear()
    r = refresher(fetch, clock)
    assert await r.refresh_now("T", timeout_s=0.01) is False
    joined = asyncio.create_task(r.refresh_now("T"))
    await asyncio.sleep(0)
    fetch.release.set()
    assert await joined is True
    assert fetch.calls == ["T"]


async def test_refresh_soon_starts_the_request_without_waiting() -> None:
    fetch, clock = Fetch(), Clock()
    fetch.release.clear()
    r = refresher(fetch, clock)
    r.refresh_soon("T")
    r.refresh_soon("T")
    await asyncio.sleep(0)
    assert fetch.calls == ["T"]
    fetch.release.set()
    await r.shutdown()


@pytest.mark.parametrize(
    ("error", "refresh"),
    [
        (RemotingConnectError("connect to 127.0.0.1:1 failed: refused"), True),
        (ConnectionResetError(), True),
        (RemotingTimeoutError("no answer in 3 s"), True),
        (
            ServiceNotAvailableError("service not available now ... messages are put to the slave"),
            True,
        ),
        (SystemError_("in-sync replicas not enough"), True),
        (NoPermissionError("the broker[127.0.0.1:10911] sending message is forbidden"), True),
        (NoPermissionError("Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."), False),
        (SystemError_("request queueId[9] is illegal"), False),
        (TopicNotExistError("topic[T] not exist"), False),
        (MessageIllegalError("the message body size over max value"), False),
        (FlushDiskTimeoutError(), False),
    ],
)
def test_which_failures_a_fresh_route_may_cure(error: Exception, refresh: bool) -> None:
    assert needs_route_refresh(error) is refresh


async def test_a_second_read_waits_for_the_next_window() -> None:
    fetch = Fetch()
    r = RouteRefresher(fetch, first_delay_s=0, min_interval_s=0.05, jitter_s=0)
    assert await r.refresh_now("T") is True
    assert await r.refresh_now("T") is False
    assert await r.refresh_next_window("T") is True
    assert fetch.calls == ["T", "T"]


class MovingMaster:
    """A name server whose route names a new master from its ``moves_at``-th answer on."""

    def __init__(self, moves_at: int) -> None:
        self.moves_at = moves_at
        self.calls: list[float] = []
        self.master = "127.0.0.1:1"

    async def __call__(self, topic: str) -> bool:
        self.calls.append(time.monotonic())
        if len(self.calls) >= self.moves_at:
            self.master = "127.0.0.1:2"
        return True


async def test_await_change_polls_at_the_windows_pace_until_the_route_names_a_new_master() -> None:
    ns = MovingMaster(moves_at=4)
    r = RouteRefresher(ns, min_interval_s=0.05, jitter_s=0.02, first_delay_s=0)
    new = await r.await_change("T", lambda: ns.master, "127.0.0.1:1", 5.0)
    assert new == "127.0.0.1:2"
    assert len(ns.calls) == 4  # stopped at the answer that named the new master
    gaps = [b - a for a, b in zip(ns.calls, ns.calls[1:], strict=False)]
    assert min(gaps) >= 0.05 - 0.005  # one request per window, never a storm


class TickingMaster(MovingMaster):
    """A :class:`MovingMaster` whose every answer takes ``took_s`` on the refresher's clock."""

    def __init__(self, moves_at: int, clock: Clock, took_s: float) -> None:
        super().__init__(moves_at)
        self.clock = clock
        self.took_s = took_s

    async def __call__(self, topic: str) -> bool:
        self.clock.now += self.took_s
        return await super().__call__(topic)


async def test_await_change_gives_up_when_its_time_is_over() -> None:
    clock = Clock()
    # each answer takes one window (1/16 s, exact in binary), so the windows follow each other
    # without a real wait; a refresher that ignored its time would poll to the 1000th answer
    ns = TickingMaster(moves_at=1_000, clock=clock, took_s=0.0625)
    r = RouteRefresher(ns, min_interval_s=0.0625, jitter_s=0.0, first_delay_s=0, clock=clock)
    assert await r.await_change("T", lambda: ns.master, "127.0.0.1:1", 0.25) is None
    assert clock.now == 1000.25  # it stopped at the answer that used up its 0.25 s
    assert len(ns.calls) == 4  # one request a window: 0.25 s / 0.0625 s


async def test_await_change_returns_at_once_when_the_route_already_moved() -> None:
    ns = MovingMaster(moves_at=1_000)
    r = RouteRefresher(ns, min_interval_s=0.05, jitter_s=0.0, first_delay_s=0)
    assert await r.await_change("T", lambda: "127.0.0.1:3", "127.0.0.1:1", 1.0) == "127.0.0.1:3"
    assert ns.calls == []  # no request when the route it holds is already new


async def test_await_change_stops_when_the_group_left_the_route() -> None:
    ns = MovingMaster(moves_at=1_000)  # never names a successor
    r = RouteRefresher(ns, min_interval_s=0.05, jitter_s=0.0, first_delay_s=0)
    started = time.monotonic()
    # the group is gone from the route from the second answer on (it unregistered)
    new = await r.await_change(
        "T", lambda: ns.master, "127.0.0.1:1", 30.0, gone=lambda: len(ns.calls) >= 2
    )
    assert new is None
    assert len(ns.calls) == 2  # no poll after the answer that showed the group gone
    assert time.monotonic() - started < 15.0  # one that polled on would take 30 s
