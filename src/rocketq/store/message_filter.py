"""MessageFilter: what ``get_message`` asks of a pull's filter (RocketMQ's MessageFilter).

``is_matched_by_consume_queue`` sees only the consume-queue unit's tags code, so a queue entry
that does not match costs no commitlog read; ``is_matched_by_commit_log`` sees the record
bytes and is for filters that need more than the code (properties, SQL92); a tag filter
answers True without looking. The exact TAGS string is the client's to check.
"""

from __future__ import annotations

from typing import Protocol


class MessageFilter(Protocol):
    def is_matched_by_consume_queue(self, tags_code: int | None) -> bool: ...

    def is_matched_by_commit_log(self, record: bytes) -> bool: ...
