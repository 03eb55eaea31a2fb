"""RpcLatencyStats: a burst's responses told in one call (``on_responses``) leave the
histograms ``on_response`` leaves one by one; a listener without a burst form is told of a
burst's requests one by one."""

from __future__ import annotations

import random

import pytest

from rocketq.remoting.channel import ProcessorTable
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.rpc_stats import RpcLatencyStats


def requests_of(codes: list[int]) -> list[RemotingCommand]:
    return [RemotingCommand.create_request(code) for code in codes]


def test_a_burst_told_at_once_leaves_the_histograms_of_one_call_each() -> None:
    requests = requests_of([310, 310, 310, 11, 310, 11])
    elapsed = [0.0002, 0.004, 0.2, 0.0009, 12.0, 0.006]
    response = RemotingCommand.create_response(0)
    one, burst = RpcLatencyStats(), RpcLatencyStats()
    for request, seconds in zip(requests, elapsed, strict=True):
        one.on_response(request, response, seconds)
    burst.on_responses(requests, response, elapsed)
    assert burst.snapshot() == one.snapshot()
    assert sorted(burst.snapshot()) == [(11, 0), (310, 0)]
    assert sum(burst.snapshot()[(310, 0)].counts) == 4


def test_a_burst_of_one_request_code_leaves_the_histogram_and_sum_of_one_call_each() -> None:
    rng = random.Random(32)
    elapsed = [rng.choice((0.0, 0.001, 0.003, 10.0)) or rng.expovariate(300) for _ in range(500)]
    requests = requests_of([310] * len(elapsed))
    response = RemotingCommand.create_response(0)
    one, burst = RpcLatencyStats(), RpcLatencyStats()
    for stats in (one, burst):  # a histogram already there: the burst adds to it
        stats.on_response(requests[0], response, 0.123)
    for request, seconds in zip(requests, elapsed, strict=True):
        one.on_response(request, response, seconds)
    burst.on_responses(requests, response, elapsed)
    assert burst.snapshot() == one.snapshot()  # the counts and the sum
    assert sum(burst.snapshot()[(310, 0)].counts) == 501
    with pytest.raises(ValueError):
        burst.on_responses(requests, response, elapsed[:-1])


def test_a_listener_without_a_burst_form_is_told_of_each_request() -> None:
    table = ProcessorTable()
    seen: list[tuple[int, int, float]] = []
    table.add_response_listener(lambda req, resp, s: seen.append((req.code, resp.code, s)))
    stats = RpcLatencyStats()
    table.add_response_listener(stats.on_response, stats.on_responses)
    response = RemotingCommand.create_response(0)
    for listener in table.responses_listeners:
        listener(requests_of([310, 11]), response, [0.5, 0.25])
    assert seen == [(310, 0, 0.5), (11, 0, 0.25)]
    assert sum(sum(h.counts) for h in stats.snapshot().values()) == 2
