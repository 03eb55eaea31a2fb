"""rocketq on Spark: the ``rocketq`` topic data source and sink (``topic_source``,
``topic_sink``, ``transactional_sink``; registered through ``pyspark_rocketq``) and jobs over
store files. Nothing here imports pyspark or the client at package import; see SPARK.md.
"""

__all__: list[str] = []
