"""Fuzz the running broker with captured client frames, mutated at byte and field level.

Every payload goes on its own connection. Afterwards the broker must still serve a send and a
pull, the messages stored before the fuzzing must read back unchanged, and a command that
decoded must have been answered (a bad field gets an error response, never silence).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from pathlib import Path

from rocketq.common.message_decoder import decode_messages
from rocketq.remoting.codec import decode, encode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.cluster import Cluster
from rocketq.testing.fuzz import mutate_frame
from rocketq.testing.wire import pull_request, send_request

FIXTURES = Path(__file__).resolve().parents[1] / "remoting" / "fixtures"
WAIT = 10.0
BYTE_MUTATIONS = 120
FIELD_MUTATIONS = 120
JUNK = ["", "-1", "abc", "99999999999999999999", "-2147483649", "%RETRY%", "a" * 300, "\u0000"]


def captured_frames() -> list[bytes]:
    paths = sorted(FIXTURES.glob("cpp-client-1.0.1/0[4-9]*/*.bin"))
    paths += sorted(FIXTURES.glob("ali-ons/0[3-6]*/*.bin"))
    return [p.read_bytes() for p in paths]


def mutate_fields(rng: random.Random, frame: bytes) -> RemotingCommand:
    cmd = decode(frame)
    fields = dict(cmd.ext_fields)
    for _ in range(rng.randint(1, 3)):
        if fields and rng.random() < 0.7:
            key = rng.choice(sorted(fields))
            if rng.random() < 0.3:
                del fields[key]
            else:
                fields[key] = rng.choice(JUNK)
    if cmd.code == 11 and fields.get("suspendTimeoutMillis", "").isdigit():
        fields["suspendTimeoutMillis"] = "100"  # keep long polling short
    body = cmd.body
    if body and rng.random() < 0.3:
        body = body[: rng.randrange(len(body))]
    return dataclasses.replace(cmd, ext_fields=fields, body=body, flag=0)


async def send_raw(cluster: Cluster, payload: bytes) -> None:
    host, port = cluster.broker_addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(payload)
        await writer.drain()
        writer.write_eof()
        async with asyncio.timeout(WAIT):
            while await reader.read(65536):
                pass
    finally:
        writer.close()
        await writer.wait_closed()


async def test_broker_survives_fuzzed_frames_and_keeps_what_it_stored(cluster: Cluster) -> None:
    kept = [f"keep-{i}".encode() for i in range(20)]
    for body in kept:
        r = await cluster.client.invoke(cluster.broker_addr, send_request("FuzzKeep", body), WAIT)
        assert r.code == ResponseCode.SUCCESS, r.remark
    frames = captured_frames()
    assert len(frames) > 50
    rng = random.Random(20261122)
    for _ in range(BYTE_MUTATIONS):
        await send_raw(cluster, mutate_frame(rng, rng.choice(frames)))
    unanswered = []
    for _ in range(FIELD_MUTATIONS):
        cmd = mutate_fields(rng, rng.choice(frames))
        try:
            reply = await cluster.client.invoke(cluster.broker_addr, cmd, WAIT)
        except TimeoutError:
            if cmd.code != 11:  # a pull may legitimately be held by long polling
                unanswered.append((cmd.code, cmd.ext_fields))
            continue
        assert reply.is_response
        if reply.code != ResponseCode.SUCCESS and reply.code not in (19, 20, 21):
            assert reply.remark, (cmd.code, reply.code)
    assert unanswered == []
    r = await cluster.client.invoke(cluster.broker_addr, send_request("FuzzKeep", b"after"), WAIT)
    assert r.code == ResponseCode.SUCCESS
    await asyncio.to_thread(cluster.broker.message_store.wait_for_dispatch, WAIT)
    pulled = await cluster.client.invoke(
        cluster.broker_addr, pull_request("FuzzGroup", "FuzzKeep", 0, 0, max_nums=64), WAIT
    )
    assert pulled.code == ResponseCode.SUCCESS
    bodies = [m.body for m in decode_messages(pulled.body)]
    assert bodies == [*kept, b"after"]


def test_mutated_field_frames_still_encode() -> None:
    rng = random.Random(7)
    frames = captured_frames()
    for _ in range(50):
        cmd = mutate_fields(rng, rng.choice(frames))
        assert decode(encode(cmd)).code == cmd.code
