"""rocketq on Spark: two data sources with no import between them, and the schema they share.

``topic/``: the ``rocketq`` source and sink over live topics (registered through
``pyspark_rocketq``); metadata through ``rocketq.admin``, pulls and sends through the client.
``store/``: the ``rocketq-store`` source over store files (registered through
``pyspark_rocketq_store``) and the jobs on top of it (export, stats, rebuild). ``schema``: the
row layout both emit; ``fields``, ``properties`` and ``record_columns``: the columnar record
decoder both use (record bytes to Arrow columns, no object per record). Nothing here imports
pyspark or the client at package import; see docs/spark.md.
"""

__all__: list[str] = []
