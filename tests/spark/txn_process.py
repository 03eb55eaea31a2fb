"""A streaming query with the exactly-once sink whose driver hangs in the commit of batch 1.

``python -m tests.spark.txn_process NAMESRV SOURCE TARGET CHECKPOINT MARKER``: batch 0 commits
as usual; batch 1's tasks send their halves, then the driver-side commit writes MARKER and
waits, so the test can SIGKILL the driver between the tasks and the commit.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.datasource import DataSourceStreamWriter, WriterCommitMessage

from rocketq.spark.topic.options import WriteOptions
from rocketq.spark.topic.source import TopicSource
from rocketq.spark.topic.transactional_sink import TopicTxnStreamWriter


class HangingWriter(TopicTxnStreamWriter):
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        if batchId == 1:
            Path(self.write_state.options.checkpoint_location or ".", "..", "hanging").touch()
            time.sleep(600)
        super().commit(messages, batchId)


class HangingSource(TopicSource):
    @classmethod
    def name(cls) -> str:
        return "rocketq_hanging"

    def streamWriter(self, schema: Any, overwrite: bool) -> DataSourceStreamWriter:
        return HangingWriter(WriteOptions.parse(self.options), schema, overwrite)


def main(namesrv: str, source: str, target: str, checkpoint: str) -> None:
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("rocketq-txn-hanging")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.dataSource.register(HangingSource)
    (
        spark.readStream.format("rocketq")
        .option("nameServer", namesrv)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "20")
        .load()
        .select("value", "key")
        .writeStream.format("rocketq_hanging")
        .option("nameServer", namesrv)
        .option("topic", target)
        .option("deliveryGuarantee", "exactly_once")
        .option("checkpointLocation", checkpoint)
        .trigger(processingTime="0 seconds")
        .start()
        .awaitTermination()
    )


if __name__ == "__main__":
    main(*sys.argv[1:5])
