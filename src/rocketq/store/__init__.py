"""rocketq.store: RocketMQ's local message store, byte-compatible on disk (docs/store-format.md).

Synchronous and thread-safe; never imports asyncio. Module map:

- ``config``: StoreConfig (MessageStoreConfig defaults), ``parse_properties`` for broker.conf
- ``paths``: file locations under the store root
- ``results``: PutMessageStatus/Result, GetMessageStatus/Result, QueryMessageResult
- ``message_filter``: the MessageFilter protocol ``get_message`` asks
- ``mapped_file`` / ``mapped_file_queue``: preallocated mmap'd files and their queues
- ``commitlog``: CommitLog append/read, record checks, DispatchRequest
- ``flush``: FlushRealTimeService (ASYNC_FLUSH), GroupCommitService (SYNC_FLUSH)
- ``reput``: ReputMessageService (commitlog -> consume queues and index)
- ``recovery``: load, normal/abnormal recovery, cut tails kept in ``truncated/``
- ``clean``: expired-file deletion and disk-pressure handling
- ``format``: the fixed layouts of consume queue units, index files and the checkpoint
- ``consume_queue``, ``index_file`` / ``index_service``, ``checkpoint``: those files;
  ``consume_queue_table``: every consume queue of a store
- ``message_store``: MessageStore (DefaultMessageStore): lifecycle, puts, dispatch;
  ``message_reader``: its read side (get_message, offsets by time, lookups, queries)
- ``dump`` / ``check``: offline, read-only walkers and the consistency check
"""

from rocketq.store.check import CheckReport, check_store
from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.message_filter import MessageFilter
from rocketq.store.message_store import MessageStore
from rocketq.store.results import (
    GetMessageResult,
    GetMessageStatus,
    PutMessageResult,
    PutMessageStatus,
    QueryMessageResult,
)

__all__ = [
    "CheckReport",
    "FlushDiskType",
    "GetMessageResult",
    "GetMessageStatus",
    "MessageFilter",
    "MessageStore",
    "PutMessageResult",
    "PutMessageStatus",
    "QueryMessageResult",
    "StoreConfig",
    "check_store",
]
