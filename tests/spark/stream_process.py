"""A streaming query in its own process, for the SIGKILL test.

``python -m tests.spark.stream_process NAMESRV TOPIC CHECKPOINT OUT MODE``: MODE ``run`` keeps
a slow query going (small batches, 20 ms a row) until the process is killed; MODE ``finish``
restarts from the checkpoint with Trigger.AvailableNow and exits when it is done.
"""

from __future__ import annotations

import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, udf
from pyspark.sql.types import BinaryType


def slow_identity(value: bytes) -> bytes:
    time.sleep(0.02)
    return value


def main(namesrv: str, topic: str, checkpoint: str, out: str, mode: str) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .appName(f"rocketq-stream-{mode}")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    df = (
        spark.readStream.format("rocketq")
        .option("nameServer", namesrv)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "20")
        .load()
        .select("broker", "queueId", "queueOffset", udf(slow_identity, BinaryType())(col("value")))
    )
    writer = (
        df.writeStream.format("parquet")
        .option("checkpointLocation", checkpoint)
        .option("path", out)
    )
    if mode == "run":
        writer.trigger(processingTime="0 seconds").start().awaitTermination()
    else:
        query = writer.trigger(availableNow=True).start()
        query.awaitTermination()
        if query.exception() is not None:
            raise SystemExit(f"the query failed: {query.exception()}")
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:6])
