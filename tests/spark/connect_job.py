"""A Spark Connect session in its own process, for ``test_connect``.

``python -m tests.spark.connect_job NAMESRV TOPIC ROWS`` starts PySpark's local Connect server
(``SparkSession.builder.remote("local[2]")``, which needs no classic session in the process,
hence a process of its own; ``SPARK_TESTING`` binds it to an ephemeral port), registers the
``rocketq`` source with ``spark.dataSource.register``, writes ``ROWS`` rows to TOPIC, reads
the topic back and prints what it read as one JSON line.
"""

from __future__ import annotations

import json
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql.functions import col, concat, lit

from pyspark_rocketq import DefaultSource


def main(namesrv: str, topic: str, rows: int) -> None:
    os.environ.setdefault("SPARK_TESTING", "1")  # the Connect server on port 0
    spark = (
        SparkSession.builder.remote("local[2]")
        .appName("rocketq-connect")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    try:
        spark.dataSource.register(DefaultSource)
        df = spark.range(rows).select(
            concat(lit("v"), col("id").cast("string")).alias("value"),
            concat(lit("k"), col("id").cast("string")).alias("key"),
        )
        df.write.format("rocketq").mode("append").option("nameServer", namesrv).option(
            "topic", topic
        ).save()
        read = (
            spark.read.format("rocketq")
            .option("nameServer", namesrv)
            .option("subscribe", topic)
            .load()
        )
        got = read.select(col("key"), col("value").cast("string").alias("value")).collect()
        print(json.dumps({"session": type(spark).__module__, "rows": [list(r) for r in got]}))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
