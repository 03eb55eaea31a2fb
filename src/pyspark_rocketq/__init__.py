"""The ``rocketq`` PySpark data source, registered automatically.

PySpark imports every top-level ``pyspark_*`` module on its first data-source lookup and
registers its ``DefaultSource`` under ``DefaultSource.name()``, so with rocketq installed
``spark.read.format("rocketq")`` works in any session with no call. Where automatic
registration does not reach (Spark Connect, a notebook kernel started before the install),
register it by hand::

    from pyspark_rocketq import DefaultSource
    spark.dataSource.register(DefaultSource)

Importing this module only defines classes: no client, socket or thread is made until a
task reads or writes.
"""

from rocketq.spark.topic.source import TopicSource as DefaultSource

__all__ = ["DefaultSource"]
