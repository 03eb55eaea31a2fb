"""A broker stays responsive through an exactly-once write of 100,000 rows (issue 23).

The write runs the sink's own task and driver steps (``send_halves``, ``commit_batch``) in
this process, against a broker in a process of its own (as the benchmark runs it) whose check
service runs every half second with a short transaction timeout: halves of the batch are
checked back while it is written and while the driver commits it, and the sink's producer
answers from the ledger. Two probes send HEART_BEAT all along, one on a connection of its
own (the broker's answer: within a second) and one through the sink's producer (its loop and
connection, as its own heartbeats go: none may time out). Before the ledger kept decided
entries parsed, every check-back re-read the whole batch entry (100,000 msg ids) on the
producer's worker threads, and the producer's heartbeats to the broker timed out (3 s) over
and over. The sink now sends transactional batches, so the timeout is 200 ms here, to have
the broker check halves back during the write.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from rocketq.client import TransactionProducer
from rocketq.errors import RocketQError
from rocketq.remoting.protocol.bodies import HeartbeatData, ProducerData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.blocking_remoting_client import BlockingRemotingClient
from tests.spark.conftest import spark_env

pa = pytest.importorskip("pyarrow")
pytest.importorskip("pyspark")

from rocketq.spark.topic.options import WriteOptions  # noqa: E402
from rocketq.spark.topic.transactional_sink import (  # noqa: E402
    commit_batch,
    send_halves,
    txn_write,
)

pytestmark = [pytest.mark.spark, pytest.mark.timeout(300)]
ROWS = 100_000
HEARTBEAT_LIMIT_S = 1.0
PROBE_INTERVAL_S = 0.02
TOPIC = "EoHeartbeat"
ROOT = Path(__file__).resolve().parents[2]


class HeartbeatProbe(threading.Thread):
    """A HEART_BEAT round trip, again and again until stopped; keeps the slowest."""

    def __init__(self, name: str, heartbeat: Callable[[], None]) -> None:
        super().__init__(name=name)
        self.heartbeat = heartbeat
        self.stopped = threading.Event()
        self.slowest_s = 0.0
        self.answers = 0
        self.errors: list[BaseException] = []

    def run(self) -> None:
        while not self.stopped.wait(PROBE_INTERVAL_S):
            started = time.perf_counter()
            try:
                self.heartbeat()
            except (RocketQError, OSError) as exc:  # a timed-out heartbeat: the failure we probe
                self.errors.append(exc)
            self.slowest_s = max(self.slowest_s, time.perf_counter() - started)
            self.answers += 1


def raw_heartbeat(client: BlockingRemotingClient, addr: str) -> Callable[[], None]:
    """HEART_BEAT on a connection of its own: the broker's loop alone."""
    body = HeartbeatData(client_id="heartbeat-probe").encode()

    def heartbeat() -> None:
        request = RemotingCommand.create_request(RequestCode.HEART_BEAT, {}, body)
        assert client.invoke(addr, request, 30).code == ResponseCode.SUCCESS

    return heartbeat


def producer_heartbeat(producer: TransactionProducer, addr: str) -> Callable[[], None]:
    """HEART_BEAT through the sink's producer: its loop, its connection, the broker's loop."""
    tx = producer.tx
    data = HeartbeatData(
        client_id=tx.instance.client_id, producer_data_set=[ProducerData(group_name=tx.group)]
    )

    def heartbeat() -> None:
        producer.loop.submit(tx.instance.api.send_heartbeat(addr, data)).result(30)

    return heartbeat


def test_a_broker_answers_heartbeats_within_a_second_through_an_exactly_once_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in spark_env().items():
        monkeypatch.setenv(key, value)
    # transactional batches (one half per 128 rows) are checked back 128 times less than
    # halves of one row: a 200 ms timeout has the broker check them while they are written
    args = [str(tmp_path / "store"), TOPIC, "500", "200"]
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.spark.broker_serve", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert server.stdout is not None
        assert server.stdin is not None
        addrs = json.loads(server.stdout.readline())
        probes = write_with_probes(addrs["namesrv"], addrs["broker"], tmp_path / "cp")
        server.stdin.close()
        summary = json.loads(server.stdout.readline())
        assert server.wait(60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(30)
        for pipe in (server.stdin, server.stdout):
            if pipe is not None:
                pipe.close()
    assert summary["messages"] == ROWS
    assert summary["checks_sent"] > 0  # halves were checked back during the write
    broker_probe, producer_probe = probes
    assert broker_probe.errors == []
    assert producer_probe.errors == []  # none timed out (the client's 3 s)
    assert broker_probe.answers > 0
    assert producer_probe.answers > 0
    assert broker_probe.slowest_s < HEARTBEAT_LIMIT_S, broker_probe.slowest_s


def write_with_probes(namesrv: str, broker: str, checkpoint: Path) -> list[HeartbeatProbe]:
    """The sink's task (every row a half) and driver (ledger, then the ends), probed."""
    options = WriteOptions.parse(
        {
            "nameServer": namesrv,
            "topic": TOPIC,
            "deliveryGuarantee": "exactly_once",
            "checkpointLocation": str(checkpoint),
            "producerGroup": "SPARK_EO_HEARTBEAT",
        }
    )
    write = txn_write(options, "job-heartbeat")
    rows = pa.table({"value": [b"v" * 100] * ROWS})
    client = BlockingRemotingClient()
    probes = [
        HeartbeatProbe("broker", raw_heartbeat(client, broker)),
        HeartbeatProbe("producer", producer_heartbeat(write.producer(), broker)),
    ]
    for probe in probes:
        probe.start()
    try:
        message = send_halves(iter(rows.to_batches(max_chunksize=10_000)), write, 0)
        commit_batch(write, [message], 0)
    finally:
        for probe in probes:
            probe.stopped.set()
            probe.join(60)
        client.close()
    return probes
