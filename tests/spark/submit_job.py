"""The job ``test_spark_submit`` hands to ``spark-submit``: copy one topic to another.

``spark-submit ... submit_job.py NAMESRV SOURCE TARGET REPORT`` reads every message of
SOURCE with ``format("rocketq")``, writes value, keys, tags and properties to TARGET with the
rocketq sink, and writes a JSON report: the master the job ran on, the rows it read, and
where the executors' Python workers found ``rocketq`` (the test checks it was the
``--py-files`` zip, not an installed copy). It imports nothing from the tests.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession


def where_rocketq_is(_: int) -> str:
    import rocketq

    return str(rocketq.__file__)


def main(namesrv: str, source: str, target: str, report: str) -> None:
    spark = SparkSession.builder.appName("rocketq-submit-test").getOrCreate()
    try:
        df = (
            spark.read.format("rocketq")
            .option("nameServer", namesrv)
            .option("subscribe", source)
            .option("minPartitions", "4")
            .load()
        )
        rows = df.count()
        (
            df.select("value", "keys", "tags", "properties")
            .write.format("rocketq")
            .mode("append")
            .option("nameServer", namesrv)
            .option("topic", target)
            .save()
        )
        context = spark.sparkContext
        found = context.parallelize(range(2), 2).map(where_rocketq_is).distinct().collect()
        with open(report, "w") as out:
            json.dump({"master": context.master, "rows": rows, "rocketq": found}, out)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:5])
