"""A broker SIGKILLed with messages popped, some acked and some not: after the restart on the
same store the un-acked ones come back (through the POP retry topic, reconsumeTimes 1) once
their invisible time is over, the acked ones never do, and a handle from before the kill is
still good for its invisible time (an ack with it after the restart keeps that message from
coming back). The checkpoints and acks were timer messages in the revive topic's wheel when
the broker died; the restarted timer and revive service take them from the store."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing import pop as raw
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.controller_mode import eventually
from rocketq.testing.store import small_store_properties
from rocketq.testing.wait import until
from rocketq.testing.wire import create_topic_request, request, send_request

pytestmark = pytest.mark.e2e

TOPIC = "PopCrash"
GROUP = "pop-crash"
INVISIBLE_MS = 10_000  # past a restart on a loaded machine (4.5 s seen at load 40)


def broker_conf(tmp: Path) -> dict[str, str]:
    return {
        "brokerName": "broker-a",
        "brokerIP1": "127.0.0.1",
        "storePathRootDir": str(tmp / "store"),
        "timerPrecisionMs": "100",
        "timerFlushIntervalMs": "200",
        "reviveInterval": "200",
        "reviveQueueNum": "2",
        **small_store_properties(),
    }


async def test_popped_messages_come_back_after_kill_9_and_acked_ones_do_not(
    tmp_path: Path,
) -> None:
    broker = BrokerProcess(tmp_path / "proc", broker_conf(tmp_path))
    await asyncio.to_thread(broker.start, 60.0)
    try:
        async with RemotingClient() as client:
            addr = broker.addr
            created = await client.invoke(addr, create_topic_request(TOPIC, 2), 10.0)
            assert created.code == ResponseCode.SUCCESS, created.remark
            for i in range(6):
                r = await client.invoke(addr, send_request(TOPIC, f"c{i}".encode(), tags="A"), 10.0)
                assert r.code == ResponseCode.SUCCESS, r.remark
            popped: list[raw.Popped] = []
            deadline = time.monotonic() + 10.0
            while len(popped) < 6 and time.monotonic() < deadline:
                _, got = await raw.pop(
                    client, addr, "broker-a", GROUP, TOPIC, invisible_ms=INVISIBLE_MS, poll_ms=300
                )
                popped.extend(got)
            assert sorted(p.msg.body for p in popped) == [f"c{i}".encode() for i in range(6)]
            popped.sort(key=lambda p: p.msg.body)
            for p in popped[:3]:
                r = await raw.ack(client, addr, GROUP, TOPIC, p.handle)
                assert r.code == ResponseCode.SUCCESS, r.remark
            # the offsets' prompt persist after a pop: all 6 past the committed offsets on disk
            offsets = tmp_path / "store" / "config" / "consumerOffset.json"

            def persisted() -> bool:
                text = "".join(offsets.read_text().split()) if offsets.exists() else ""
                table = re.search(rf'"{TOPIC}@{GROUP}":{{([^}}]*)}}', text)
                return table is not None and sum(
                    int(v) for v in re.findall(r":(\d+)", table[1])
                ) == len(popped)

            assert await until(persisted, 10.0)
        broker.kill()
        await asyncio.to_thread(broker.start, 60.0)
        async with RemotingClient() as client:
            # a handle of the broker before the kill, still within its invisible time
            late = await raw.ack(client, broker.addr, GROUP, TOPIC, popped[3].handle)
            assert late.code == ResponseCode.SUCCESS, late.remark
            back: list[raw.Popped] = []
            deadline = time.monotonic() + (INVISIBLE_MS + 12_000) / 1000
            while time.monotonic() < deadline:
                _, got = await raw.pop(
                    client, broker.addr, "broker-a", GROUP, TOPIC, invisible_ms=30_000,
                    poll_ms=500,
                )  # fmt: skip
                back.extend(got)
                if len(back) >= 2:
                    break
            assert sorted(p.msg.body for p in back) == [b"c4", b"c5"]
            assert all(p.msg.reconsume_times == 1 for p in back)
            _, extra = await raw.pop(
                client, broker.addr, "broker-a", GROUP, TOPIC, invisible_ms=30_000, poll_ms=1500
            )
            assert extra == []
    finally:
        broker.kill()


async def test_a_fifo_queue_stays_blocked_after_kill_9_and_its_handles_stay_good(
    tmp_path: Path,
) -> None:
    """consumerOrderInfo.json is persisted promptly: after a kill -9 the FIFO batch in flight
    still blocks its queue, its handles ack, and the next message comes after them."""
    topic = "FifoCrash"
    broker = BrokerProcess(tmp_path / "proc", broker_conf(tmp_path))
    config = tmp_path / "store" / "config"
    await asyncio.to_thread(broker.start, 60.0)
    try:
        async with RemotingClient() as client:
            addr = broker.addr
            created = await client.invoke(addr, create_topic_request(topic, 1), 10.0)
            assert created.code == ResponseCode.SUCCESS, created.remark
            for body in (b"f0", b"f1", b"f2"):
                r = await client.invoke(addr, send_request(topic, body), 10.0)
                assert r.code == ResponseCode.SUCCESS, r.remark

            async def queued() -> bool:
                max_offset = request(RequestCode.GET_MAX_OFFSET, topic=topic, queueId=0)
                answer = await client.invoke(addr, max_offset, 10.0)
                return int(answer.ext_fields["offset"]) >= 3

            # the pop below answers with what is dispatched when it looks (an answered send
            # may not be yet): all three in the queue first, or it may get f0 alone
            assert await eventually(queued, 10.0)
            _, popped = await raw.pop(
                client, addr, "broker-a", GROUP, topic, max_nums=2, invisible_ms=30_000,
                poll_ms=2000, order=True,
            )  # fmt: skip
            assert [p.msg.body for p in popped] == [b"f0", b"f1"]
            r = await raw.ack(client, addr, GROUP, topic, popped[0].handle)
            assert r.code == ResponseCode.SUCCESS, r.remark

            def persisted() -> bool:
                info = config / "consumerOrderInfo.json"
                offsets = config / "consumerOffset.json"
                return (
                    info.exists()
                    and '"cm":1' in info.read_text()
                    and f'"{topic}@{GROUP}":{{0:1}}' in "".join(offsets.read_text().split())
                )

            assert await until(persisted, 5.0)
        broker.kill()
        await asyncio.to_thread(broker.start, 60.0)
        async with RemotingClient() as client:
            addr = broker.addr
            _, blocked = await raw.pop(
                client, addr, "broker-a", GROUP, topic, order=True, invisible_ms=30_000
            )
            assert blocked == []
            r = await raw.ack(client, addr, GROUP, topic, popped[1].handle)
            assert r.code == ResponseCode.SUCCESS, r.remark
            _, rest = await raw.pop(
                client, addr, "broker-a", GROUP, topic, order=True, invisible_ms=30_000
            )
            assert [p.msg.body for p in rest] == [b"f2"]
    finally:
        broker.kill()
