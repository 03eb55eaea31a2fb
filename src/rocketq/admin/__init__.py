"""rocketq.admin: the library API (DefaultMQAdminExt in Python) that the CLI, Spark and tests
share. Nothing is public yet."""

__all__: list[str] = []
