"""The rocketq Spark connector on ``local[2]``: batch read, streaming latency, sink.

    .venv/bin/python bench/spark_bench.py --only read,latency,sink --rows 100000 --size 100

(``bench/spark_bench.py`` is the entry point of every Spark benchmark; these are its topic
rows, run by ``main`` here.)

A name server and two brokers (``broker-a``, ``broker-b``, 4 queues each for the topic) run
in one subprocess so they do not share a GIL with the Spark driver. Rows:

* topic batch read through the brokers (``spark.read.format("rocketq")`` into the noop sink)
  in rows/s, against Spark's built-in JSON source reading the same records from a JSON-lines
  copy (value as text, the same metadata columns);
* streaming end-to-end latency: after one warm-up message has gone through, a producer sends
  at a steady rate for a fixed time while a query (``processingTime=0``) reads the topic into
  ``foreachBatch``; each row's latency is the time it reached the sink minus its born
  timestamp; median and p99, and the medians of Spark's ``durationMs`` per micro-batch that
  read rows (where a trigger's time goes);
* ``latency-low`` (not in the default set): the latency row with ``lowLatency=true`` (each
  micro-batch read in the planner process, no Python task per trigger);
* ``latency-async`` (not in the default set): the same through a ``foreach`` writer with
  ``asyncProgressTrackingEnabled``, which takes the checkpoint's offset and commit log writes
  off the trigger (Spark allows it for ``foreach`` but not ``foreachBatch``); a row's latency
  is the time the writer saw it minus its born timestamp;
* the sink: a DataFrame written to a topic (``write.format("rocketq")``) in rows/s, against
  the client's own batch send of the same rows from one thread.

Prints one JSON line per measurement, with ``--json`` one JSON object per table row
(``row``, ``rocketq``, ``reference``, ``unit``, the latency percentiles), then a table for
BENCHMARKS.md. Bounded: fixed row counts and a
fixed streaming duration; every process started here is stopped by pid.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TOPIC = "SparkBenchTopic"
QUEUES = 4
BROKER_PULL_CAP = 1024


def serve(store: str) -> None:
    from rocketq.broker.topic_config import TopicConfig
    from rocketq.testing.broker import run_broker, run_namesrv

    async def run() -> None:
        props = {
            "mapedFileSizeCommitLog": str(256 * 1024 * 1024),
            # issue 23: pulls of up to 1024 messages (RocketMQ's default cap is 32); the byte
            # cap stays RocketMQ's 256 KiB
            "maxTransferCountOnMessageInMemory": str(BROKER_PULL_CAP),
        }
        async with (
            run_namesrv() as ns,
            run_broker(Path(store) / "a", namesrv_addr=ns.addr, store_properties=props) as a,
            run_broker(
                Path(store) / "b",
                namesrv_addr=ns.addr,
                broker_name="broker-b",
                store_properties=props,
            ) as b,
        ):
            for broker in (a, b):
                for topic in (TOPIC, TOPIC + "Sink", TOPIC + "Stream", TOPIC + "Client"):
                    broker.topic_config_manager.update_topic_config(
                        TopicConfig(
                            topic_name=topic, read_queue_nums=QUEUES, write_queue_nums=QUEUES
                        )
                    )
                await broker.register_broker_all()
            print(json.dumps({"namesrv": ns.addr}), flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(run())


def session() -> Any:
    os.environ.update(
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_LOCAL_IP="127.0.0.1",
    )
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("rocketq-spark-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def fill(namesrv: str, topic: str, rows: int, size: int) -> list[Any]:
    """``rows`` messages in batches of 64 over every queue; returns what was sent."""
    from rocketq.client.blocking import Producer
    from rocketq.common.message import Message

    body = b"v" * size
    msgs = []
    with Producer("SPARK_BENCH_FILL", namesrv_addr=namesrv) as producer:
        queues = producer.fetch_publish_message_queues(topic)
        for start in range(0, rows, 64):
            batch = []
            for i in range(start, min(start + 64, rows)):
                msg = Message(topic=topic, body=body)
                msg.keys = [f"k{i}"]
                msg.tags = "t"
                batch.append(msg)
            producer.send_batch(batch, message_queue=queues[(start // 64) % len(queues)])
            msgs.extend(batch)
    return msgs


def timed(action: Any, repeat: int = 3) -> float:
    """The best of ``repeat`` runs (the first one also warms the Python workers)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def bench_read(spark: Any, namesrv: str, rows: int, size: int, tmp: Path) -> dict[str, Any]:
    fill(namesrv, TOPIC, rows, size)
    df = spark.read.format("rocketq").option("nameServer", namesrv).option("subscribe", TOPIC)
    loaded = df.load()
    assert loaded.count() == rows
    ours = timed(lambda: loaded.write.format("noop").mode("overwrite").save())
    copy = tmp / "copy.jsonl"
    loaded.selectExpr("CAST(value AS STRING) AS value", "* EXCEPT (value)").write.mode(
        "overwrite"
    ).json(str(copy))
    from rocketq.spark.schema import TOPIC_SCHEMA_DDL

    json_ddl = TOPIC_SCHEMA_DDL.replace("`value` BINARY", "`value` STRING")
    builtin = spark.read.schema(json_ddl).json(str(copy))
    assert builtin.count() == rows
    theirs = timed(lambda: builtin.write.format("noop").mode("overwrite").save())
    return {
        "row": "topic batch read through the broker",
        "rows": rows,
        "body_bytes": size,
        "rocketq_rows_per_s": round(rows / ours),
        "json_rows_per_s": round(rows / theirs),
        "ratio": round(theirs / ours, 3),
    }


class LatencyWriter:
    """The ``foreach`` writer of the async row (it runs in the Python workers): each row's
    latency when the writer sees it, one file per task in ``out``, renamed into place whole."""

    def __init__(self, out: str) -> None:
        self.out = out
        self.name = ""
        self.lines: list[str] = []

    def open(self, partition_id: int, epoch_id: int) -> bool:
        self.name = f"{epoch_id}-{partition_id}-{os.getpid()}-{time.time_ns()}"
        self.lines = []
        return True

    def process(self, row: Any) -> None:
        self.lines.append(repr(time.time() * 1000 - row.born))

    def close(self, error: Any) -> None:
        if self.lines:
            part = Path(self.out) / f".{self.name}"
            part.write_text("\n".join(self.lines))
            part.rename(Path(self.out) / self.name)


def bench_latency(
    spark: Any,
    namesrv: str,
    rate: int,
    seconds: float,
    tmp: Path,
    *,
    async_foreach: bool = False,
    low_latency: bool = False,
) -> dict[str, Any]:
    """The latency row; ``async_foreach``: through a ``foreach`` writer with
    ``asyncProgressTrackingEnabled`` (Spark refuses that option with ``foreachBatch``)."""
    from pyspark import cloudpickle

    from rocketq.client.blocking import Producer
    from rocketq.common.message import Message

    topic = TOPIC + "Stream"
    name = "latency-async" if async_foreach else "latency-low" if low_latency else "latency"
    latencies: list[float] = []
    written = tmp / f"{name}-rows"
    written.mkdir()

    def sink(batch: Any, _batch_id: int) -> None:
        arrived = time.time() * 1000
        latencies.extend(arrived - r.born for r in batch.select("born").collect())

    def collected() -> list[float]:
        if not async_foreach:
            return latencies
        files = [f for f in written.iterdir() if not f.name.startswith(".")]
        return [float(x) for f in files for x in f.read_text().split()]

    def reset() -> None:
        latencies.clear()
        for f in written.iterdir():
            f.unlink()

    rows = (
        spark.readStream.format("rocketq")
        .option("nameServer", namesrv)
        .option("subscribe", topic)
        .option("lowLatency", str(low_latency).lower())
        .load()
        .selectExpr("CAST(unix_millis(bornTimestamp) AS DOUBLE) AS born")
    )
    if async_foreach:
        if __name__ != "__main__":  # the workers cannot import this module: ship it by value
            cloudpickle.register_pickle_by_value(sys.modules[__name__])
        writer = rows.writeStream.foreach(LatencyWriter(str(written)))
        writer = writer.option("asyncProgressTrackingEnabled", "true")
    else:
        writer = rows.writeStream.foreachBatch(sink)
    query = (
        writer.option("checkpointLocation", str(tmp / f"{name}-cp"))
        .trigger(processingTime="0 seconds")
        .start()
    )
    sent = 0
    try:
        while not query.recentProgress:  # the query is running before the clock starts
            time.sleep(0.05)
        with Producer("SPARK_BENCH_RATE", namesrv_addr=namesrv) as producer:
            # one message read end to end first: the Python workers that read are started
            # and warm (imports, the pull client's connections), as in a running pipeline
            producer.send(Message(topic=topic, body=b"warm-up"))
            deadline = time.monotonic() + 120
            while not collected() and time.monotonic() < deadline:
                time.sleep(0.01)
            reset()
            warm = len(query.recentProgress)
            start = time.perf_counter()
            while (elapsed := time.perf_counter() - start) < seconds:
                if sent < elapsed * rate:
                    producer.send(Message(topic=topic, body=b"x" * 100))
                    sent += 1
                else:
                    time.sleep(0.001)
        deadline = time.monotonic() + 60
        while len(collected()) < sent and time.monotonic() < deadline:
            time.sleep(0.05)
        progress = query.recentProgress[warm:]
    finally:
        query.stop()
    ordered = sorted(collected())
    label = ", foreach + async progress tracking" if async_foreach else ""
    label += ", lowLatency" if low_latency else ""
    return {
        "row": f"streaming end-to-end latency{label}",
        "rate_per_s": rate,
        "seconds": seconds,
        "sent": sent,
        "received": len(ordered),
        "median_ms": round(statistics.median(ordered), 1),
        "p99_ms": round(ordered[int(len(ordered) * 0.99) - 1], 1),
        "max_ms": round(ordered[-1], 1),
        **trigger_breakdown(progress),
    }


def trigger_breakdown(progress: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians of StreamingQueryProgress.durationMs over the batches that read rows: where a
    micro-batch's time goes (latestOffset, queryPlanning, walCommit, addBatch: the tasks and
    the sink, commitOffsets; triggerExecution is the whole)."""
    batches = [p for p in progress if p["numInputRows"] > 0]
    if not batches:
        return {"batches": 0}
    keys = sorted({k for p in batches for k in p["durationMs"]})
    return {
        "batches": len(batches),
        "rows_per_batch": statistics.median(p["numInputRows"] for p in batches),
        "trigger_median_ms": {
            k: statistics.median(p["durationMs"].get(k, 0) for p in batches) for k in keys
        },
    }


def bench_sink(spark: Any, namesrv: str, rows: int, size: int) -> dict[str, Any]:
    from rocketq.client.blocking import Producer
    from rocketq.common.message import Message

    df = spark.range(rows).selectExpr(f"repeat('v', {size}) AS value", "CAST(id AS STRING) AS key")
    df = df.repartition(2).cache()
    df.count()
    writer = (
        df.write.format("rocketq")
        .mode("append")
        .option("nameServer", namesrv)
        .option("topic", TOPIC + "Sink")
    )
    ours = timed(writer.save)

    def client_send() -> None:
        # the same rows as the sink's: a body and a key (the broker indexes every key)
        with Producer("SPARK_BENCH_CLIENT", namesrv_addr=namesrv) as producer:
            for start in range(0, rows, 128):
                batch = [
                    Message(topic=TOPIC + "Client", body=b"v" * size, keys=str(i))
                    for i in range(start, min(start + 128, rows))
                ]
                producer.send_batch(batch)

    theirs = timed(client_send)
    exact = timed(
        lambda: (
            writer.option("deliveryGuarantee", "exactly_once")
            .option("checkpointLocation", tempfile.mkdtemp(prefix="rocketq-eo-"))
            .save()
        ),
        repeat=2,
    )
    return {
        "row": "sink",
        "rows": rows,
        "body_bytes": size,
        "rocketq_sink_rows_per_s": round(rows / ours),
        "exactly_once_rows_per_s": round(rows / exact),
        "client_batch_send_rows_per_s": round(rows / theirs),
        "ratio": round(theirs / ours, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--only",
        default="read,latency,sink",
        help="rows to run, comma-separated: read, latency, latency-low, latency-async, sink",
    )
    parser.add_argument(
        "--json", action="store_true", help="also print one JSON object per row (issue 23)"
    )
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(Path(tmp) / "store")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
        )
        try:
            assert server.stdout is not None
            namesrv = json.loads(server.stdout.readline())["namesrv"]
            spark = session()
            only = set(args.only.split(","))
            results = []
            if "read" in only:
                results.append(bench_read(spark, namesrv, args.rows, args.size, Path(tmp)))
            if "latency" in only:
                results.append(bench_latency(spark, namesrv, args.rate, args.seconds, Path(tmp)))
            if "latency-low" in only:
                results.append(
                    bench_latency(
                        spark, namesrv, args.rate, args.seconds, Path(tmp), low_latency=True
                    )
                )
            if "latency-async" in only:
                results.append(
                    bench_latency(
                        spark, namesrv, args.rate, args.seconds, Path(tmp), async_foreach=True
                    )
                )
            if "sink" in only:
                results.append(bench_sink(spark, namesrv, args.rows, args.size))
            spark.stop()
        finally:
            assert server.stdin is not None
            server.stdin.close()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait(30)
    for result in results:
        print(json.dumps(result))
    rows = [row for result in results for row in table_rows(result)]
    if args.json:
        for row in rows:
            print(json.dumps(row))
    print("| row | rocketq | reference | unit |")
    print("|---|---|---|---|")
    for row in rows:
        reference = "" if row["reference"] is None else f"{row['reference']:,}"
        print(f"| {row['row']} | {row['rocketq']:,} | {reference} | {row['unit']} |")


def table_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """BENCHMARKS.md's rows of one result: ``row``, ``rocketq``, ``reference``, ``unit``
    (and the percentiles for latency)."""
    if result["row"].startswith("topic batch read"):
        return [
            {
                "row": "topic batch read through the brokers (vs Spark's JSON source)",
                "rocketq": result["rocketq_rows_per_s"],
                "reference": result["json_rows_per_s"],
                "unit": "rows/s",
            }
        ]
    if result["row"].startswith("streaming"):
        return [
            {
                "row": f"{result['row']} at {result['rate_per_s']} msg/s",
                "rocketq": result["median_ms"],
                "reference": None,
                "unit": "ms (median)",
                "median_ms": result["median_ms"],
                "p99_ms": result["p99_ms"],
                "max_ms": result["max_ms"],
                "trigger_median_ms": result.get("trigger_median_ms"),
            }
        ]
    return [
        {
            "row": "sink, at least once (vs our client's batch send)",
            "rocketq": result["rocketq_sink_rows_per_s"],
            "reference": result["client_batch_send_rows_per_s"],
            "unit": "rows/s",
        },
        {
            "row": "sink, exactly once (vs at least once)",
            "rocketq": result["exactly_once_rows_per_s"],
            "reference": result["rocketq_sink_rows_per_s"],
            "unit": "rows/s",
        },
    ]


if __name__ == "__main__":
    main()
