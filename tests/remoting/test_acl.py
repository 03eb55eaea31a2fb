"""ACL request signing: golden vector, every signed fixture frame, and the client hook."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from rocketq.remoting.acl import (
    AclClientRPCHook,
    calculate_signature,
    combine_request_content,
    sign_request,
    verify_signature,
)
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import decode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _secret_for(session: Path) -> str:
    return "HarnessSK" if session.name.endswith("-acl") else ""


def test_signature_matches_the_rocketmq_golden_vector() -> None:
    assert calculate_signature(b"RocketMQ", "12345678") == "IUc8rrO/0gDch8CjObLQsW2rsiA="


def test_every_signed_fixture_frame_verifies() -> None:
    verified = 0
    for path in sorted(FIXTURES.glob("*/*/*.bin")):
        cmd = decode(path.read_bytes())
        if "Signature" not in cmd.ext_fields:
            continue
        assert verify_signature(cmd, _secret_for(path.parent)), path
        assert not verify_signature(cmd, "wrong-secret")
        verified += 1
    assert verified >= 244 + 3


def test_tampered_value_or_body_fails_verification() -> None:
    path = next(FIXTURES.glob("cpp-client-1.0.1/05-routed-producer-acl/*-code10.bin"))
    cmd = decode(path.read_bytes())
    assert verify_signature(cmd, "HarnessSK")
    cmd.body = cmd.body + b"x"
    assert not verify_signature(cmd, "HarnessSK")
    cmd = decode(path.read_bytes())
    cmd.ext_fields["queueId"] = "9"
    assert not verify_signature(cmd, "HarnessSK")


def test_signed_values_are_ordered_by_key_with_uppercase_first() -> None:
    data = combine_request_content({"b": "2", "a": "1", "AccessKey": "K", "Signature": "x"}, b"!")
    assert data == b"K12!"


def test_unique_key_query_may_be_signed_either_way() -> None:
    cmd = RemotingCommand.create_request(12, {"topic": "T", "key": "k"})
    sign_request(cmd, "AK", "SK")
    cmd.ext_fields["_UNIQUE_KEY_QUERY"] = "true"
    assert verify_signature(cmd, "SK")


def test_frames_json_numbers_sign_as_their_text() -> None:
    """The C++ client writes some header values as JSON numbers and signs their decimal text:
    the codec keeps that text, so the received signature verifies."""
    session = FIXTURES / "cpp-client-1.0.1/05-routed-producer-acl"
    checked = 0
    for line in (session / "frames.jsonl").read_text().splitlines():
        entry = json.loads(line)
        numbers = {k: v for k, v in (entry["extFields"] or {}).items() if type(v) is int}
        if not numbers:
            continue
        raw = (session / f"{entry['file']}.bin").read_bytes()
        assert all(f'"{k}":{v}'.encode() in raw for k, v in numbers.items())  # unquoted
        cmd = decode(raw)
        assert {k: cmd.ext_fields[k] for k in numbers} == {k: str(v) for k, v in numbers.items()}
        assert verify_signature(cmd, "HarnessSK"), entry["file"]
        checked += 1
    assert checked == 4  # the four SEND_MESSAGE frames


async def test_client_rpc_hook_signs_requests_the_server_can_verify() -> None:
    seen: asyncio.Queue[bool] = asyncio.Queue()

    async def check(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        await seen.put(verify_signature(req, "SK"))
        return RemotingCommand.create_response(0)

    server = RemotingServer()
    server.register_processor(10, check)
    await server.start()
    try:
        async with RemotingClient(rpc_hook=AclClientRPCHook("AK", "SK")) as client:
            req = RemotingCommand.create_request(10, {"topic": "T", "queueId": "1"}, b"body")
            await client.invoke(server.addr, req, 5.0)
            assert req.ext_fields["AccessKey"] == "AK"
        assert await asyncio.wait_for(seen.get(), 5.0)
    finally:
        await server.stop()


def test_a_signature_or_key_with_a_lone_surrogate_fails_verification_without_raising() -> None:
    cmd = RemotingCommand.create_request(10, {"topic": "T"})
    sign_request(cmd, "AK\ud800", "SK")
    assert verify_signature(cmd, "SK")
    cmd.ext_fields["Signature"] = "\ud800"
    assert not verify_signature(cmd, "SK")
