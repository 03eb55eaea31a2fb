"""Fuzzed ACL headers do not crash the broker: signed requests (captured C++ and ali-ons frames
and our own) with their AccessKey, Signature, SecurityToken, signed values or body mutated are
all answered NO_PERMISSION and store nothing; byte-mutated signed frames each on their own
connection leave the broker serving."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.common.message_decoder import decode_messages
from rocketq.remoting.acl import (
    ACCESS_KEY,
    SECURITY_TOKEN,
    SIGNATURE,
    combine_request_content,
)
from rocketq.remoting.codec import decode, encode
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.acl import (
    ACCOUNTS,
    ADMIN,
    NORMAL,
    WAIT_S,
    AclCluster,
    run_acl_cluster,
    signed,
)
from rocketq.testing.fuzz import mutate_frame
from rocketq.testing.wire import pull_request, send_request
from tests.broker.acl.acl_requests import REQUESTS

FIXTURES = Path(__file__).resolve().parents[2] / "remoting" / "fixtures"
HARNESS = ("HarnessAK", "HarnessSK")  # the credentials of the captured ACL sessions
FIELD_MUTATIONS = 1000
BYTE_MUTATIONS = 300
JUNK = [
    "",
    " ",
    "RocketMQ",
    ADMIN[0],
    "\u0000",
    "\ud800",
    "é" * 50,
    "x" * 65536,
    "IUc8rrO/0gDch8CjObLQsW2rsiA=",
    "%RETRY%",
    "-1",
    "null",
]


def seed_commands() -> list[RemotingCommand]:
    paths = sorted(FIXTURES.glob("cpp-client-1.0.1/05-routed-producer-acl/*.bin"))
    paths += sorted(FIXTURES.glob("ali-ons/04-routed-producer-acl/*.bin"))
    seeds = [decode(p.read_bytes()) for p in paths]
    ours = [signed(REQUESTS[name]("fuzz"), NORMAL) for name in REQUESTS if name != "create_topic"]
    return [*seeds, *ours, signed(REQUESTS["create_topic"]("fuzz"), ADMIN)]


def mutate_acl(rng: random.Random, cmd: RemotingCommand) -> RemotingCommand:
    fields = dict(cmd.ext_fields)
    body = cmd.body
    choice = rng.randrange(6)
    if choice == 0:
        fields[rng.choice([ACCESS_KEY, SIGNATURE])] = rng.choice(JUNK)
    elif choice == 1:
        fields.pop(rng.choice([ACCESS_KEY, SIGNATURE]), None)
    elif choice == 2:
        fields[SECURITY_TOKEN] = rng.choice(JUNK)
    elif choice == 3 and len(fields) > 2:
        signed_keys = sorted(k for k in fields if k not in (ACCESS_KEY, SIGNATURE))
        fields[rng.choice(signed_keys)] = rng.choice(JUNK)
    elif choice == 4 and body:
        flipped = bytearray(body)
        flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        body = bytes(flipped)
    else:
        body = rng.choice([b"{", b"\xff\xfe", b"[" * 5000, b'{"consumerDataSet":7}', b"x" * 1000])
    return dataclasses.replace(cmd, ext_fields=fields, body=body, flag=0, opaque=cmd.opaque + 1)


def same_signed_request(a: RemotingCommand, b: RemotingCommand) -> bool:
    """Still the seed as far as the signature goes (AclClientRPCHook signs the values only)."""
    keys = (ACCESS_KEY, SIGNATURE)
    return all(a.ext_fields.get(k) == b.ext_fields.get(k) for k in keys) and (
        combine_request_content(a.ext_fields, a.body)
        == combine_request_content(b.ext_fields, b.body)
    )


@pytest.fixture
async def harness_cluster(tmp_path: Path) -> AsyncIterator[AclCluster]:
    harness = {"accessKey": HARNESS[0], "secretKey": HARNESS[1], "defaultTopicPerm": "PUB|SUB"}
    async with run_acl_cluster(tmp_path, [*ACCOUNTS, harness]) as cluster:
        yield cluster


async def send_raw(cluster: AclCluster, payload: bytes) -> None:
    host, port = cluster.broker_addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(payload)
        await writer.drain()
        writer.write_eof()
        async with asyncio.timeout(WAIT_S):
            while await reader.read(65536):
                pass
    finally:
        writer.close()
        await writer.wait_closed()


async def test_captured_signed_frames_pass_the_broker_acl_unchanged(
    harness_cluster: AclCluster,
) -> None:
    for cmd in seed_commands():
        response = await harness_cluster.invoke(cmd)
        assert response.code != ResponseCode.NO_PERMISSION, (cmd.code, response.remark)


async def test_fuzzed_acl_headers_are_refused_store_nothing_and_the_broker_keeps_serving(
    harness_cluster: AclCluster,
) -> None:
    cluster = harness_cluster
    kept = [b"kept-%d" % i for i in range(10)]
    for body in kept:
        cmd = signed(send_request("FuzzKeep", body, code=RequestCode.SEND_MESSAGE_V2), NORMAL)
        assert (await cluster.invoke(cmd)).code == ResponseCode.SUCCESS
    store = cluster.broker.message_store
    await asyncio.to_thread(store.wait_for_dispatch, WAIT_S)
    before = store.get_max_phy_offset()
    seeds = seed_commands()
    rng = random.Random(20261124)
    refused = 0
    for _ in range(FIELD_MUTATIONS):
        seed = rng.choice(seeds)
        cmd = mutate_acl(rng, seed)
        if same_signed_request(cmd, seed):
            continue  # e.g. an empty SecurityToken adds nothing to the signed bytes
        response = await cluster.invoke(cmd)
        assert response.code == ResponseCode.NO_PERMISSION, (cmd.code, response.remark)
        assert "SK" not in (response.remark or "")[:200].replace("SKIP", "")
        refused += 1
    assert refused > FIELD_MUTATIONS * 0.9
    assert store.get_max_phy_offset() == before
    frames = [encode(c) for c in seeds]
    for _ in range(BYTE_MUTATIONS):
        await send_raw(cluster, mutate_frame(rng, rng.choice(frames)))
    after = signed(send_request("FuzzKeep", b"after", code=RequestCode.SEND_MESSAGE_V2), NORMAL)
    assert (await cluster.invoke(after)).code == ResponseCode.SUCCESS
    await asyncio.to_thread(store.wait_for_dispatch, WAIT_S)
    pulled = await cluster.invoke(
        signed(pull_request("FuzzGroup", "FuzzKeep", 0, 0, max_nums=64, suspend_ms=0), NORMAL)
    )
    assert pulled.code == ResponseCode.SUCCESS
    assert [m.body for m in decode_messages(pulled.body)][: len(kept)] == kept
    print(  # the figures RELIABILITY.md reports (pytest -s shows them)
        f"ACL fuzz: {FIELD_MUTATIONS} header mutations, {refused} change what is signed, all"
        f" {refused} NO_PERMISSION, 0 stored; {BYTE_MUTATIONS} byte-mutated frames; broker serving"
    )
