"""A streaming query in its own process, for the SIGKILL test.

``python -m tests.spark.stream_process NAMESRV TOPIC CHECKPOINT OUT`` keeps a slow query
going (batches of 20 offsets, 50 ms a row) into a Parquet sink until the process is killed.
"""

from __future__ import annotations

import sys
import time

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, udf
from pyspark.sql.types import BinaryType


def slow_identity(value: bytes) -> bytes:
    time.sleep(0.05)
    return value


def main(namesrv: str, topic: str, checkpoint: str, out: str) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("rocketq-stream-killed")
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
    writer.trigger(processingTime="0 seconds").start().awaitTermination()


if __name__ == "__main__":
    main(*sys.argv[1:5])
