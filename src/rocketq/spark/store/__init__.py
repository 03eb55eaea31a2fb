"""The ``rocketq-store`` data source over store files, and the jobs built on it.

``source`` (the DataSource), ``options``, ``split`` (byte-range splits of commitlog segments and
the row decoder), ``columns`` (Arrow columns straight from the mapped bytes, with the shared
``spark.fields``), ``rows`` and ``schema`` (the row reference and the column lists), ``jobs``
(export, stats), ``rebuild`` and ``index_rebuild`` (ConsumeQueue and IndexFile files).
"""

__all__: list[str] = []
