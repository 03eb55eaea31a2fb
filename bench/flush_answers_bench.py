"""The answers of one flush's sends: a Python walk over the sends against the one C call.

    PYTHONPATH=src .venv/bin/python bench/flush_answers_bench.py [--sends 32] [--rounds 20000]

What ``send_answer.SendAnswers.answer_sends`` does between the store's figures and the
connections' writes, without the writes and the stats calls (the same on both ways): the
walk a send at a time that builds each connection's run, ``send_reply_runs`` and the lists the
figures take (``_answer_runs`` and ``_record``, the way before ``send_answer_flush``), against
``send_answer_flush`` (send_flush.c), which gives the same. A flush of ``--sends`` sends, one a
connection (sync N); the two ways interleaved, microseconds a flush and a send, medians of
rounds of 1,000 flushes.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time

from rocketq.broker.processors.send_answer import _SYSTEM_TOPICS, reply_pieces
from rocketq.remoting import native_frames
from rocketq.remoting.protocol.codes import RequestCode, SerializeType
from rocketq.remoting.protocol.command import RPC_ONEWAY
from rocketq.testing.broker import run_broker
from rocketq.testing.flush_fuzz import FuzzDeferred
from rocketq.testing.wire import send_request

BATCH = 1000


def walk(pieces, prefix, deferreds, puts, values, indexes, now):  # type: ignore[no-untyped-def]
    """The walk a send at a time (``_answer_runs`` and ``_record``'s lists)."""
    native = native_frames.COMPILED
    assert native is not None
    json = SerializeType.JSON
    runs: dict[object, tuple[list[int], list[tuple[int, int, int, int]]]] = {}
    alone = []
    for i in indexes:
        deferred = deferreds[i]
        put = puts[i]
        request = deferred.request
        k = 4 * i
        if (
            values[k]
            or put[0] in _SYSTEM_TOPICS
            or request.serialize_type is not json
            or request.flag & RPC_ONEWAY
        ):
            alone.append(i)
            continue
        run = runs.get(deferred.channel)
        if run is None:
            run = runs[deferred.channel] = ([], [])
        run[0].append(i)
        run[1].append((request.opaque, values[k + 1], put[1], values[k + 3]))
    items: list[tuple[int, int, int, int]] = []
    ends: list[int] = []
    for _, run_items in runs.values():
        items += run_items
        ends.append(len(items))
    frames = native.send_reply_runs(pieces, items, prefix, ends)
    answered: list[int] = []
    for answered_run, _ in runs.values():
        answered += answered_run
    answered_deferreds = [deferreds[i] for i in answered]
    elapsed = [now - d.started for d in answered_deferreds]
    sizes: dict[str, list[int]] = {}
    for i in answered:
        topic = puts[i][0]
        topic_sizes = sizes.get(topic)
        if topic_sizes is None:
            topic_sizes = sizes[topic] = []
        topic_sizes.append(values[4 * i + 2])
    requests = [d.request for d in answered_deferreds]
    return alone, frames, requests, elapsed, sizes


async def measure(sends: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as root:
        async with run_broker(root) as broker:
            pieces = reply_pieces(broker)
            prefix = broker.message_store.commit_log.msg_id_prefix.encode()
    assert pieces is not None
    native = native_frames.COMPILED
    assert native is not None
    deferreds = []
    puts = []
    values: list[int] = []
    for i in range(sends):
        request = send_request("Bench", b"x", code=RequestCode.SEND_MESSAGE_V2)
        request.opaque = 1000 + i
        deferreds.append(FuzzDeferred(object(), request, time.perf_counter()))
        puts.append(("Bench", i % 8, b"x"))
        values += [0, 4096 * (1000 + i), 1200, 50_000 + i]
    indexes = range(sends)
    json = SerializeType.JSON
    now = time.perf_counter()
    one = native.send_answer_flush(
        pieces, prefix, deferreds, puts, values, indexes, _SYSTEM_TOPICS, json, now
    )
    assert one is not None
    assert one[2] == walk(pieces, prefix, deferreds, puts, values, indexes, now)[1]
    spent: dict[str, list[float]] = {"walk": [], "one call": []}
    clock = time.perf_counter_ns
    for _ in range(max(1, rounds // BATCH)):
        start = clock()
        for _ in range(BATCH):
            walk(pieces, prefix, deferreds, puts, values, indexes, now)
        spent["walk"].append((clock() - start) / BATCH / 1e3)
        start = clock()
        for _ in range(BATCH):
            native.send_answer_flush(
                pieces, prefix, deferreds, puts, values, indexes, _SYSTEM_TOPICS, json, now
            )
        spent["one call"].append((clock() - start) / BATCH / 1e3)
    for name, flushes in spent.items():
        median = statistics.median(flushes)
        print(f"{name:9s} {median:7.2f} us a flush of {sends}, {median / sends:5.2f} us a send")
    ratio = statistics.median(spent["one call"]) / statistics.median(spent["walk"])
    print(f"one call / walk: {ratio:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sends", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=20_000)
    args = ap.parse_args()
    asyncio.run(measure(args.sends, args.rounds))


if __name__ == "__main__":
    main()
