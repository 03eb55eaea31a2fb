"""Auto-registration of the ``rocketq-store`` data source.

Spark imports every top-level ``pyspark_*`` module on the first data-source lookup and
registers its ``DefaultSource`` under ``DefaultSource.name()``, so
``spark.read.format("rocketq-store")`` works in any session with no call. Importing this
module loads only the data source class; the store code is imported when a read runs.
"""

from rocketq.spark.store.source import StoreDataSource as DefaultSource

__all__ = ["DefaultSource"]
