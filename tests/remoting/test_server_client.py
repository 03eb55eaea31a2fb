"""RemotingServer and RemotingClient over real loopback sockets."""

from __future__ import annotations

import asyncio
import random
import socket
import struct
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from rocketq.errors import RemotingConnectError, RemotingTimeoutError
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.codec import FrameDecoder, encode
from rocketq.remoting.protocol.codes import RequestCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.namesrv_headers import GetRouteInfoRequestHeader
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.fuzz import mutate_frame
from rocketq.testing.wait import until

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ECHO = 1000
SLOW = 1001
FAIL = 1002
HEADER = 1003
WAIT = 5.0


async def echo(channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, ext_fields=request.ext_fields, body=request.body
    )


async def fail(channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
    raise RuntimeError("disk on fire")


async def needs_header(channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
    header = GetRouteInfoRequestHeader.from_ext_fields(request.ext_fields)
    return RemotingCommand.create_response(ResponseCode.SUCCESS, header.topic)


@pytest.fixture
async def server() -> AsyncIterator[RemotingServer]:
    srv = RemotingServer()
    srv.register_processor(ECHO, echo)
    srv.register_processor(FAIL, fail)
    srv.register_processor(HEADER, needs_header)
    await srv.start("127.0.0.1", 0)
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.fixture
async def client() -> AsyncIterator[RemotingClient]:
    async with RemotingClient() as c:
        yield c


def request(code: int, **fields: str) -> RemotingCommand:
    return RemotingCommand.create_request(code, fields)


async def raw_exchange(
    addr: tuple[str, int], payload: bytes, count: int
) -> tuple[list[RemotingCommand], bool]:
    """Write bytes on a fresh socket; read ``count`` commands or EOF."""
    reader, writer = await asyncio.open_connection(*addr)
    try:
        writer.write(payload)
        await writer.drain()
        decoder = FrameDecoder()
        got: list[RemotingCommand] = []
        async with asyncio.timeout(WAIT):
            while len(got) < count:
                data = await reader.read(65536)
                if not data:
                    return got, True
                got.extend(decoder.feed(data))
        return got, False
    finally:
        writer.close()


async def test_request_gets_its_response(server: RemotingServer, client: RemotingClient) -> None:
    req = request(ECHO, k="v")
    req.body = b"payload"
    resp = await client.invoke(server.addr, req, WAIT)
    assert resp.code == ResponseCode.SUCCESS
    assert resp.opaque == req.opaque
    assert resp.is_response
    assert (resp.ext_fields, resp.body) == ({"k": "v"}, b"payload")


async def test_unknown_code_answers_request_code_not_supported(
    server: RemotingServer, client: RemotingClient
) -> None:
    resp = await client.invoke(server.addr, request(4242), WAIT)
    assert resp.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
    assert resp.remark == " request type 4242 not supported"


async def test_raising_processor_answers_system_error_with_reason(
    server: RemotingServer, client: RemotingClient
) -> None:
    resp = await client.invoke(server.addr, request(FAIL), WAIT)
    assert resp.code == ResponseCode.SYSTEM_ERROR
    assert resp.remark == "disk on fire"


async def test_missing_header_field_answers_system_error_naming_it(
    server: RemotingServer, client: RemotingClient
) -> None:
    resp = await client.invoke(server.addr, request(HEADER), WAIT)
    assert resp.code == ResponseCode.SYSTEM_ERROR
    assert resp.remark == "the custom field topic is null"
    ok = await client.invoke(server.addr, request(HEADER, topic="T"), WAIT)
    assert (ok.code, ok.remark) == (ResponseCode.SUCCESS, "T")


async def test_response_uses_the_serialize_type_of_the_request(server: RemotingServer) -> None:
    req = request(ECHO, a="1")
    req.serialize_type = SerializeType.ROCKETMQ
    frame = encode(req)
    [resp], eof = await raw_exchange((server.host, server.port), frame, 1)
    assert not eof
    assert resp.serialize_type == SerializeType.ROCKETMQ
    assert resp.ext_fields == {"a": "1"}


async def test_oneway_request_gets_no_response(server: RemotingServer) -> None:
    seen = asyncio.Event()

    async def note(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        seen.set()
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    server.register_processor(2000, note)
    oneway = request(2000)
    oneway.mark_oneway_rpc()
    normal = request(ECHO)
    [resp], _ = await raw_exchange((server.host, server.port), encode(oneway) + encode(normal), 1)
    assert seen.is_set()
    assert resp.opaque == normal.opaque


async def test_client_invoke_oneway_reaches_the_processor(
    server: RemotingServer, client: RemotingClient
) -> None:
    got: asyncio.Queue[RemotingCommand] = asyncio.Queue()

    async def note(channel: RemotingChannel, req: RemotingCommand) -> None:
        await got.put(req)

    server.register_processor(2001, note)
    await client.invoke_oneway(server.addr, request(2001, x="y"))
    req = await asyncio.wait_for(got.get(), WAIT)
    assert req.is_oneway
    assert req.ext_fields == {"x": "y"}


def register_slow(server: RemotingServer) -> asyncio.Event:
    """A SLOW processor that answers once the returned event is set."""
    release = asyncio.Event()

    async def slow(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        await release.wait()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, "late")

    server.register_processor(SLOW, slow)
    return release


async def test_timeout_raises_and_the_connection_keeps_working(
    server: RemotingServer, client: RemotingClient
) -> None:
    release = register_slow(server)
    with pytest.raises(RemotingTimeoutError, match="timeout"):
        await client.invoke(server.addr, request(SLOW), 0.2)
    channel = await client.get_channel(server.addr)
    assert channel.pending_request_count == 0
    release.set()
    resp = await client.invoke(server.addr, request(ECHO, n="2"), WAIT)
    assert resp.ext_fields == {"n": "2"}


async def test_the_periodic_scan_fails_an_async_request_past_its_deadline(
    server: RemotingServer, client: RemotingClient
) -> None:
    release = register_slow(server)
    future = await client.invoke_async(server.addr, request(SLOW), 0.2)
    channel = await client.get_channel(server.addr)
    assert channel.pending_request_count == 1
    with pytest.raises(RemotingTimeoutError, match="expired"):
        async with asyncio.timeout(WAIT):
            await future  # nobody waits with a timeout: only the scan can end it
    assert channel.pending_request_count == 0
    release.set()
    resp = await client.invoke(server.addr, request(ECHO, n="3"), WAIT)
    assert resp.ext_fields == {"n": "3"}


def test_scan_response_table_leaves_requests_before_their_deadline() -> None:
    async def run() -> None:
        server = RemotingServer()
        server.register_processor(SLOW, _never)
        await server.start("127.0.0.1", 0)
        client = RemotingClient()
        try:
            future = await client.invoke_async(server.addr, request(SLOW), 60)
            channel = await client.get_channel(server.addr)
            assert channel.scan_response_table(time.monotonic()) == 0
            assert channel.scan_response_table(time.monotonic() + 61) == 1
            with pytest.raises(RemotingTimeoutError):
                await future
        finally:
            await client.shutdown()
            await server.stop()

    asyncio.run(run())


async def _never(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def test_out_of_order_responses_match_their_requests_by_opaque(
    server: RemotingServer, client: RemotingClient
) -> None:
    gates = {str(i): asyncio.Event() for i in range(5)}

    async def gated(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        await gates[req.ext_fields["i"]].wait()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, req.ext_fields["i"])

    server.register_processor(SLOW, gated)
    tasks = [
        asyncio.create_task(client.invoke(server.addr, request(SLOW, i=str(i)), WAIT))
        for i in range(5)
    ]
    await asyncio.sleep(0)
    for i in reversed(range(5)):
        gates[str(i)].set()
        done = await tasks[i]
        assert done.remark == str(i)
    assert all(t.done() for t in tasks)


async def test_malformed_frame_closes_only_that_connection(
    server: RemotingServer, client: RemotingClient
) -> None:
    closed: asyncio.Queue[RemotingChannel] = asyncio.Queue()
    server.add_channel_close_listener(closed.put_nowait)
    assert (await client.invoke(server.addr, request(ECHO), WAIT)).code == 0
    bad = struct.pack(">iI", 10, 6) + b"{nope}"
    got, eof = await raw_exchange((server.host, server.port), bad, 1)
    assert (got, eof) == ([], True)
    gone = await asyncio.wait_for(closed.get(), WAIT)
    assert gone.remote_addr != (await client.get_channel(server.addr)).local_addr
    assert (await client.invoke(server.addr, request(ECHO), WAIT)).code == 0


async def test_oversized_frame_closes_the_connection(server: RemotingServer) -> None:
    got, eof = await raw_exchange((server.host, server.port), struct.pack(">i", 1 << 30), 1)
    assert (got, eof) == ([], True)


async def test_server_invokes_a_client_processor_on_the_same_connection(
    server: RemotingServer, client: RemotingClient
) -> None:
    channels: asyncio.Queue[RemotingChannel] = asyncio.Queue()

    async def remember(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        await channels.put(channel)
        return RemotingCommand.create_response(ResponseCode.SUCCESS)

    async def on_notify(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        return RemotingCommand.create_response(
            ResponseCode.SUCCESS, req.ext_fields["consumerGroup"]
        )

    server.register_processor(RequestCode.HEART_BEAT, remember)
    client.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, on_notify)
    await client.invoke(server.addr, request(RequestCode.HEART_BEAT), WAIT)
    channel = await asyncio.wait_for(channels.get(), WAIT)
    notify = request(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, consumerGroup="G")
    resp = await server.invoke(channel, notify, WAIT)
    assert resp.remark == "G"
    await server.invoke_oneway(
        channel, request(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, consumerGroup="H")
    )


async def test_close_listener_hears_a_client_disconnect(server: RemotingServer) -> None:
    closed: asyncio.Queue[RemotingChannel] = asyncio.Queue()
    server.add_channel_close_listener(closed.put_nowait)
    async with RemotingClient() as c:
        await c.invoke(server.addr, request(ECHO), WAIT)
        local = (await c.get_channel(server.addr)).local_addr
    gone = await asyncio.wait_for(closed.get(), WAIT)
    assert gone.remote_addr == local
    assert not server.channels


async def test_idle_connection_is_closed_by_the_server() -> None:
    srv = RemotingServer(channel_idle_timeout_s=0.2, housekeeping_interval_s=0.05)
    srv.register_processor(ECHO, echo)
    closed: asyncio.Queue[RemotingChannel] = asyncio.Queue()
    srv.add_channel_close_listener(closed.put_nowait)
    await srv.start()
    try:
        async with RemotingClient() as c:
            await c.invoke(srv.addr, request(ECHO), WAIT)
            first = await c.get_channel(srv.addr)
            await asyncio.wait_for(closed.get(), WAIT)
            await asyncio.wait_for(first.wait_closed(), WAIT)
            assert (await c.invoke(srv.addr, request(ECHO, again="1"), WAIT)).ext_fields == {
                "again": "1"
            }
    finally:
        await srv.stop()


async def test_client_reconnects_after_the_server_closes_its_connection(
    server: RemotingServer, client: RemotingClient
) -> None:
    await client.invoke(server.addr, request(ECHO), WAIT)
    first = await client.get_channel(server.addr)
    for channel in server.channels:
        channel.close()
    await asyncio.wait_for(first.wait_closed(), WAIT)
    resp = await client.invoke(server.addr, request(ECHO, k="2"), WAIT)
    assert resp.ext_fields == {"k": "2"}
    assert await client.get_channel(server.addr) is not first


def _dead_addr() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"


async def test_connect_failure_raises_remoting_connect_error(client: RemotingClient) -> None:
    with pytest.raises(RemotingConnectError):
        await client.invoke(_dead_addr(), request(ECHO), WAIT)


async def test_name_server_selection_skips_an_unreachable_address(server: RemotingServer) -> None:
    async with RemotingClient(namesrv_addrs=[_dead_addr(), server.addr]) as c:
        resp = await c.invoke(None, request(ECHO, n="s"), WAIT)
        assert resp.ext_fields == {"n": "s"}
        assert c.get_namesrv_addr_list()[1] == server.addr


async def test_pending_requests_fail_when_the_connection_closes(
    server: RemotingServer, client: RemotingClient
) -> None:
    async def close_it(channel: RemotingChannel, req: RemotingCommand) -> None:
        channel.close()

    server.register_processor(SLOW, close_it)
    with pytest.raises(RemotingConnectError):
        await client.invoke(server.addr, request(SLOW), WAIT)


def _mutations(rng: random.Random) -> list[bytes]:
    frames = [p.read_bytes() for p in sorted(FIXTURES.glob("*/*/*.bin"))[::7]]
    out: list[bytes] = [rng.randbytes(rng.randint(1, 300)) for _ in range(10)]
    out += [mutate_frame(rng, f) for f in rng.sample(frames, min(30, len(frames)))]
    return out


async def test_fuzzed_frames_never_stop_the_server_from_serving(
    server: RemotingServer, client: RemotingClient
) -> None:
    rng = random.Random(20261122)
    for payload in _mutations(rng):
        reader, writer = await asyncio.open_connection(server.host, server.port)
        writer.write(payload)
        await writer.drain()
        writer.write_eof()
        async with asyncio.timeout(WAIT):
            while await reader.read(65536):
                pass
        writer.close()
        resp = await client.invoke(server.addr, request(ECHO, ok="1"), WAIT)
        assert resp.ext_fields == {"ok": "1"}
    local = (await client.get_channel(server.addr)).local_addr
    assert await until(lambda: {c.remote_addr for c in server.channels} == {local}, WAIT)


async def test_requests_beyond_the_in_flight_limit_answer_system_busy() -> None:
    release = asyncio.Event()

    async def held(channel: RemotingChannel, req: RemotingCommand) -> RemotingCommand:
        await release.wait()
        return RemotingCommand.create_response(ResponseCode.SUCCESS, "done")

    srv = RemotingServer(max_requests_in_flight=2)
    srv.register_processor(SLOW, held)
    await srv.start()
    try:
        async with RemotingClient() as c:
            calls = [asyncio.create_task(c.invoke(srv.addr, request(SLOW), WAIT)) for _ in range(3)]
            done, pending = await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED)
            (busy,) = [t.result() for t in done]
            assert busy.code == ResponseCode.SYSTEM_BUSY
            assert busy.remark is not None
            assert busy.remark.startswith("[OVERLOAD]")
            release.set()
            assert [(await t).remark for t in pending] == ["done", "done"]
    finally:
        await srv.stop()


async def test_a_bound_server_accepts_only_once_it_starts_serving(client: RemotingClient) -> None:
    srv = RemotingServer()
    srv.register_processor(ECHO, echo)
    port = await srv.start("127.0.0.1", 0, serve=False)
    try:
        with pytest.raises(RemotingConnectError):
            await client.invoke(f"127.0.0.1:{port}", request(ECHO, n="early"), WAIT)
        await srv.start_serving()
        resp = await client.invoke(f"127.0.0.1:{port}", request(ECHO, n="late"), WAIT)
        assert resp.ext_fields == {"n": "late"}
    finally:
        await srv.stop()
