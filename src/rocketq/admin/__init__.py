"""rocketq.admin: the admin library API (DefaultMQAdminExt in Python) that the CLI, the
dashboard, Spark and tests share.

``AsyncAdminClient`` is the asyncio core; ``AdminClient`` runs it on the client's private loop
thread for blocking callers.
"""

from rocketq.admin.blocking import AdminClient
from rocketq.admin.client import AsyncAdminClient
from rocketq.admin.messages import QueryResult

__all__ = ["AdminClient", "AsyncAdminClient", "QueryResult"]
