"""rocketq.spark: the PySpark data source and store jobs (pyspark imported lazily). Nothing is
public yet."""

__all__: list[str] = []
