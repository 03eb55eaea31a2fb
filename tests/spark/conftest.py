"""Spark fixtures: one SparkSession for the whole run and one two-broker cluster.

The session is ``local[2]`` with the UI off and two shuffle partitions; Python workers are
pointed at this interpreter (pyspark/core/context.py: else ``python3`` from PATH). The
cluster (a name server and brokers ``broker-a`` and ``broker-b``) runs on its own loop
thread because Spark calls block the test's thread. Tests use fresh topic names.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

pyspark = pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from rocketq.admin import AdminClient  # noqa: E402
from rocketq.client.blocking import Producer  # noqa: E402
from rocketq.client.status import SendResult  # noqa: E402
from rocketq.common.message import Message, MessageQueue  # noqa: E402
from rocketq.testing.background import BackgroundCluster  # noqa: E402
from rocketq.testing.store import small_store_properties  # noqa: E402

SMALL_STORE = small_store_properties(64 * 1024, 600)
_topics = itertools.count()


def spark_env() -> dict[str, str]:
    """What a process that starts a SparkSession needs in its environment."""
    return {
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",  # loopback only, whatever the host name resolves to
    }


def build_session(app: str) -> Any:
    from pyspark.sql import SparkSession

    os.environ.update(spark_env())
    session = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.stopTimeout", "30s")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    session = build_session("rocketq-tests")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundCluster]:
    root = tmp_path_factory.mktemp("spark-cluster")
    with BackgroundCluster(
        root, ("broker-a", "broker-b"), SMALL_STORE, enable_property_filter=True
    ) as running:
        yield running


@pytest.fixture(scope="session")
def producer(cluster: BackgroundCluster) -> Iterator[Producer]:
    # an instance of its own: with the default one, a blocking client of another test's
    # cluster made later in this process shares this client instance (one per client id, as
    # MQClientManager) and asks this cluster's name server for its routes
    with Producer(
        "SPARK_TEST_PRODUCER", namesrv_addr=cluster.namesrv_addr, instance_name="spark-session"
    ) as started:
        yield started


@pytest.fixture
def topic(cluster: BackgroundCluster) -> str:
    """A fresh topic with 2 queues on each broker."""
    name = f"SparkTopic{next(_topics)}"
    cluster.create_topic(name, queues=2)
    return name


def send_many(producer: Producer, topic: str, count: int, *, prefix: str = "m") -> list[SendResult]:
    """``count`` messages with keys and tags, spread over the topic's queues round robin."""
    queues = producer.fetch_publish_message_queues(topic)
    results = []
    for i in range(count):
        msg = Message(topic=topic, body=f"{prefix}-{i}".encode())
        msg.keys = [f"{prefix}-key-{i}", f"extra-{i}"]
        msg.tags = "even" if i % 2 == 0 else "odd"
        msg.put_property("seq", str(i))
        results.append(producer.send(msg, message_queue=queues[i % len(queues)]))
    wait_visible(producer, results)
    return results


def wait_visible(producer: Producer, results: list[SendResult], timeout_s: float = 30) -> None:
    """Wait until the brokers' consume queues hold what was sent (dispatch is asynchronous)."""
    highest: dict[MessageQueue, int] = {}
    for r in results:
        highest[r.message_queue] = max(highest.get(r.message_queue, 0), r.queue_offset + 1)
    with AdminClient(producer.impl.config.namesrv_addr) as admin:
        deadline = time.monotonic() + timeout_s
        for mq, wanted in highest.items():
            while admin.max_offset(mq) < wanted:
                assert time.monotonic() < deadline, f"{mq} never reached offset {wanted}"
                time.sleep(0.01)
