"""The ``rocketq`` data source and sink: topics as DataFrames, batch and Structured Streaming.

``source`` (the DataSource and its readers), ``offsets`` and ``options`` (parsed on the
driver), ``offset_reader`` (queues and offsets through ``rocketq.admin``), ``range_reader``
and ``pull_client`` (the executors' pulls), ``sink`` and ``transactional_sink`` (writes).
"""

__all__: list[str] = []
