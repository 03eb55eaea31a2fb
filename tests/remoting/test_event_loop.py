"""The event loop choice: uvloop by default on Linux, asyncio's loop with ROCKETQ_UVLOOP=0;
eager tasks where the interpreter has them (3.12+), lazy ones with ROCKETQ_EAGER_TASKS=0;
a broker round trip (producer -> broker -> push consumer) and a burst of replies on one
connection (coalesced writes) work on each."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path

import pytest

from rocketq.broker.topic_config import TopicConfig
from rocketq.client import ConsumeStatus, Message
from rocketq.client.aio import Producer, PushConsumer
from rocketq.common.message import MessageExt
from rocketq.remoting import event_loop
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.server import RemotingServer
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import run_broker, run_namesrv

LOOPS = [pytest.param(True, id="uvloop"), pytest.param(False, id="asyncio")]
ECHO = 1000
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="uvloop is a Linux dependency")


@linux_only
def test_uvloop_is_the_default_where_it_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(event_loop.UVLOOP_ENV, raising=False)
    assert event_loop.uvloop_installed()
    loop = event_loop.new_event_loop()
    try:
        assert event_loop.loop_kind(loop) == "uvloop"
    finally:
        loop.close()


@pytest.mark.parametrize("value", ["0", "false", "OFF", " no "])
def test_rocketq_uvloop_off_gives_asyncio_s_standard_loop(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(event_loop.UVLOOP_ENV, value)
    assert not event_loop.uvloop_wanted()
    loop = event_loop.new_event_loop()
    try:
        assert event_loop.loop_kind(loop) == "asyncio"
    finally:
        loop.close()


async def _first_steps() -> tuple[bool, list[str]]:
    """Whether a task ran its first step inside create_task, and the order of events."""
    events: list[str] = []

    async def answer() -> None:
        events.append("task")

    task = asyncio.get_running_loop().create_task(answer())
    events.append("created")
    await task
    return event_loop.tasks_are_eager(asyncio.get_running_loop()), events


@pytest.mark.parametrize("use_uvloop", LOOPS)
def test_tasks_start_inside_create_task_where_the_interpreter_has_eager_tasks(
    monkeypatch: pytest.MonkeyPatch, use_uvloop: bool
) -> None:
    monkeypatch.delenv(event_loop.EAGER_TASKS_ENV, raising=False)
    eager, events = event_loop.run(_first_steps(), use_uvloop=use_uvloop)
    assert eager is event_loop.eager_tasks_available()
    assert eager is (sys.version_info >= (3, 12))
    assert events == (["task", "created"] if eager else ["created", "task"])


@pytest.mark.parametrize("use_uvloop", LOOPS)
def test_rocketq_eager_tasks_off_starts_tasks_on_the_next_iteration(
    monkeypatch: pytest.MonkeyPatch, use_uvloop: bool
) -> None:
    monkeypatch.setenv(event_loop.EAGER_TASKS_ENV, "off")
    assert not event_loop.eager_tasks_wanted()
    eager, events = event_loop.run(_first_steps(), use_uvloop=use_uvloop)
    assert not eager
    assert events == ["created", "task"]


async def _round_trip(store_root: Path) -> tuple[str, list[bytes]]:
    received: list[bytes] = []
    got_all = asyncio.Event()

    def listen(msgs: list[MessageExt]) -> ConsumeStatus:
        received.extend(m.body for m in msgs)
        if len(received) >= 20:
            got_all.set()
        return ConsumeStatus.CONSUME_SUCCESS

    async with asyncio.timeout(60), run_namesrv() as ns, run_broker(
        store_root, namesrv_addr=ns.addr
    ) as broker:  # fmt: skip
        broker.topic_config_manager.update_topic_config(
            TopicConfig(topic_name="LoopTopic", read_queue_nums=2, write_queue_nums=2)
        )
        await broker.register_broker_all()
        consumer = PushConsumer(
            "loop-cg", namesrv_addr=ns.addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET"
        )
        consumer.subscribe("LoopTopic")
        consumer.register_message_listener(listen)
        await consumer.start()
        try:
            async with Producer("loop-pg", namesrv_addr=ns.addr) as producer:
                for i in range(20):
                    await producer.send(Message("LoopTopic", b"m%d" % i))
            await got_all.wait()
        finally:
            await consumer.shutdown()
    return event_loop.loop_kind(asyncio.get_running_loop()), received


@pytest.mark.timeout(90)
@pytest.mark.parametrize("use_uvloop", LOOPS)
def test_a_broker_round_trip_works_on_each_loop(tmp_path: Path, use_uvloop: bool) -> None:
    if use_uvloop and not event_loop.uvloop_installed():
        pytest.skip("uvloop is not installed on this platform")
    kind, received = event_loop.run(_round_trip(tmp_path / "store"), use_uvloop=use_uvloop)
    assert kind == ("uvloop" if use_uvloop else "asyncio")
    assert sorted(received) == sorted(b"m%d" % i for i in range(20))


async def _echo(channel: RemotingChannel, request: RemotingCommand) -> RemotingCommand:
    return RemotingCommand.create_response(
        ResponseCode.SUCCESS, ext_fields=request.ext_fields, body=request.body
    )


async def _burst(bodies: list[bytes]) -> tuple[str, list[RemotingCommand]]:
    server = RemotingServer()
    server.register_processor(ECHO, _echo)
    await server.start("127.0.0.1", 0)
    try:
        async with asyncio.timeout(60), RemotingClient() as client:
            requests = [
                RemotingCommand.create_request(ECHO, {"i": str(i)}, body)
                for i, body in enumerate(bodies)
            ]
            calls = [client.invoke(server.addr, r, 30) for r in requests]
            replies = await asyncio.gather(*calls)
    finally:
        await server.stop()
    return event_loop.loop_kind(asyncio.get_running_loop()), replies


@pytest.mark.timeout(90)
@pytest.mark.parametrize("eager_tasks", [True, False], ids=["eager", "lazy"])
@pytest.mark.parametrize("use_uvloop", LOOPS)
def test_a_burst_on_one_connection_gets_every_reply_whole_on_each_loop(
    use_uvloop: bool, eager_tasks: bool
) -> None:
    """Responses finishing in one loop iteration leave coalesced (head and body as separate
    buffers): each reply must still carry its own request's body, small and large."""
    if use_uvloop and not event_loop.uvloop_installed():
        pytest.skip("uvloop is not installed on this platform")
    rng = random.Random(13)
    bodies = [rng.randbytes(rng.choice((0, 1, 1024, 70_000, 300_000))) for _ in range(120)]
    kind, replies = event_loop.run(_burst(bodies), use_uvloop=use_uvloop, eager_tasks=eager_tasks)
    assert kind == ("uvloop" if use_uvloop else "asyncio")
    assert [r.ext_fields["i"] for r in replies] == [str(i) for i in range(len(bodies))]
    assert [r.body for r in replies] == bodies
