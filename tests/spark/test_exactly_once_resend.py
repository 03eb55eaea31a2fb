"""The exactly-once sink when a half is stored but its answer is lost: the resend, the commit
and the check-back leave exactly one copy of each row in the target topic.

The sink's producer reaches the name server and the broker through loopback proxies: the name
server's proxy points the topic's route at the broker's proxy, and the broker's proxy drops
the first answer to a send (SEND_MESSAGE_V2's response: it carries ``msgId``), so the first
try of a half is stored and times out, as on a link that broke after the request arrived.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_message
from rocketq.common.topic import TRANS_HALF_TOPIC
from rocketq.remoting.codec import decode, encode
from rocketq.testing.background import BackgroundCluster
from rocketq.testing.tcp_proxy import TcpProxy
from rocketq.testing.wait import until_sync
from tests.spark.conftest import SMALL_STORE

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from rocketq.spark.topic.options import WriteOptions  # noqa: E402
from rocketq.spark.topic.transactional_sink import (  # noqa: E402
    TxnProducerCache,
    commit_batch,
    send_halves,
    txn_write,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(60)]
FAST_CHECKS = {"transaction_check_interval_ms": 500, "transaction_time_out_ms": 1000}


def _port_of(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def route_rewriter(aliases: dict[str, str]) -> Callable[[bytes], bytes]:
    """A name server frame rewriter: broker addresses in answers replaced by their aliases."""

    def rewrite(frame: bytes) -> bytes:
        with contextlib.suppress(Exception):  # a frame it cannot read passes unchanged
            command = decode(frame)
            if command.is_response and command.body:
                body = command.body
                for real, alias in aliases.items():
                    body = body.replace(real.encode(), alias.encode())
                command.body = body
                return encode(command)
        return frame

    return rewrite


class FirstSendAnswerLost:
    """A broker frame rewriter that drops the first ``count`` answers to sends."""

    def __init__(self, count: int) -> None:
        self.left = count
        self.dropped = 0

    def __call__(self, frame: bytes) -> bytes:
        with contextlib.suppress(Exception):
            command = decode(frame)
            if command.is_response and "msgId" in command.ext_fields and self.left > 0:
                self.left -= 1
                self.dropped += 1
                return b""
        return frame


def records(cluster: BackgroundCluster, topic: str, queues: int = 1) -> list[MessageExt]:
    """Every record stored in ``topic`` on every broker, read from the stores once everything
    appended is dispatched to the consume queues."""
    found: list[MessageExt] = []
    for broker in cluster.brokers.values():
        store = broker.message_store
        assert until_sync(lambda s=store: s.dispatch_behind_bytes() == 0, 10)  # type: ignore[misc]
        for queue_id in range(queues):
            offset = 0
            while buffers := store.get_message(
                "check", topic, queue_id, offset, 32
            ).message_buffers:
                decoded = [decode_message(b) for b in buffers]
                found.extend(decoded)
                offset = decoded[-1].queue_offset + 1
    return found


def halves_of(cluster: BackgroundCluster, topic: str) -> list[MessageExt]:
    halves = records(cluster, TRANS_HALF_TOPIC)
    return [m for m in halves if m.properties.get("REAL_TOPIC") == topic]


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[BackgroundCluster, TcpProxy, FirstSendAnswerLost]]:
    with BackgroundCluster(tmp_path / "c", ("broker-a",), SMALL_STORE, **FAST_CHECKS) as cluster:
        broker_addr = cluster.brokers["broker-a"].broker_addr
        lost = FirstSendAnswerLost(1)
        broker_proxy = TcpProxy(_port_of(broker_addr), rewrite=lost)
        rewrite = route_rewriter({broker_addr: broker_proxy.addr})
        namesrv_proxy = TcpProxy(_port_of(cluster.namesrv_addr), rewrite=rewrite)
        try:
            yield cluster, namesrv_proxy, lost
        finally:
            namesrv_proxy.close()
            broker_proxy.close()


@pytest.mark.parametrize("batched", [True, False], ids=["batch-half", "one-half-per-row"])
def test_a_half_stored_twice_after_a_lost_answer_is_committed_once(
    proxied: tuple[BackgroundCluster, TcpProxy, FirstSendAnswerLost], tmp_path: Path, batched: bool
) -> None:
    cluster, namesrv_proxy, lost = proxied
    topic = "SparkExactlyResend"
    cluster.create_topic(topic, queues=1)
    rows = [f"row-{i}".encode() for i in range(4)]
    options = WriteOptions.parse(
        {
            "nameServer": namesrv_proxy.addr,
            "topic": topic,
            "deliveryGuarantee": "exactly_once",
            "checkpointLocation": str(tmp_path / "cp"),
            "sendTimeoutMs": "800",
            "maxBatchMessages": "4" if batched else "1",
        }
    )
    write = txn_write(options, "job-resend")
    batch = pa.RecordBatch.from_pydict({"value": rows})
    try:
        message = send_halves(iter([batch]), write, 0)  # a task
        assert lost.dropped == 1  # the first try was answered, and the answer lost
        # both tries are stored, under distinct ids (the lost one may be checked back already)
        stored = {m.properties.get("UNIQ_KEY") for m in halves_of(cluster, topic)}
        assert len(stored) >= (len(rows) if not batched else 1) + 1, stored  # a try more: slow
        commit_batch(write, [message], 0)  # the driver
        committed = sorted(m.body for m in records(cluster, topic))
        assert committed == rows

        # the orphan copy is checked back (after transactionTimeOut) and ended by the ledger
        checker = cluster.brokers["broker-a"].transactional_message_check_service
        deadline = time.monotonic() + 30
        while cluster.run(checker.check()).checked or checker.checks_sent == 0:
            assert time.monotonic() < deadline, "the orphan half was never ended"
            time.sleep(0.3)
        assert sorted(m.body for m in records(cluster, topic)) == rows
    finally:
        TxnProducerCache.close(options, write.listener)
