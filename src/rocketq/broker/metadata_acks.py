"""A controller-mode master's view of which topic-config version each in-sync slave holds.

Beyond RocketMQ (whose slaves poll every 10 s, so a topic created just before a switch is
lost): a slave in controller mode polls GET_ALL_TOPIC_CONFIG every ``METADATA_POLL_S`` and the
request carries its broker id (``slaveBrokerId``) and the topic-config DataVersion it last took
from this master (``topicDataVersion``). The master notes it here (and answers without the
table when the version has not moved, see ``AdminBrokerProcessor.get_all_topic_config``);
UPDATE_AND_CREATE_TOPIC waits, bounded by ``TOPIC_SYNC_WAIT_S``, until every in-sync slave
reported the version the create made. docs/controller.md, "Metadata follows within 2 s".

A reported version counts when its ``stateVersion`` (the master epoch this master stamped on
becoming master) equals ours and its counter is at least the target's: a slave reports only
versions it took from its current master, and this master's counter only grows.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from rocketq.remoting.protocol import fastjson

#: a controller-mode slave's metadata poll period (classic mode keeps slaveSyncInterval)
METADATA_POLL_S = 0.5
#: how long UPDATE_AND_CREATE_TOPIC waits for the in-sync slaves to report the new version
TOPIC_SYNC_WAIT_S = 3.0

SLAVE_BROKER_ID = "slaveBrokerId"
TOPIC_DATA_VERSION = "topicDataVersion"
#: in a controller-mode master's GET_ALL_CONSUMER_OFFSET answer: the lowest commitlog offset of
#: a pop check point still being put (PopService.check_point_floor)
CHECK_POINT_FLOOR = "rocketqCheckPointFloor"


def parse_version(text: str | None) -> tuple[int, int] | None:
    """``(stateVersion, counter)`` of a DataVersion's JSON, None when absent or malformed."""
    if not text:
        return None
    try:
        obj = fastjson.loads(text.encode("utf-8"))
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    return int(obj.get("stateVersion") or 0), int(obj.get("counter") or 0)


class SlaveVersionAcks:
    def __init__(self) -> None:
        self.reported: dict[int, tuple[int, int]] = {}  # broker id -> (stateVersion, counter)
        #: the in-sync slaves' ids; set by the ReplicasManager while master, else None
        self.in_sync_slaves: Callable[[], frozenset[int]] | None = None
        self._changed = asyncio.Event()

    def reset(self) -> None:
        """On becoming master: what slaves reported to a previous master does not count."""
        self.reported.clear()

    def note(self, ext_fields: dict[str, str]) -> None:
        """A slave's metadata poll: remember the version it holds."""
        broker_id = ext_fields.get(SLAVE_BROKER_ID)
        version = parse_version(ext_fields.get(TOPIC_DATA_VERSION))
        if broker_id is None or version is None or not broker_id.lstrip("-").isdigit():
            return
        self.reported[int(broker_id)] = version
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()  # wakes every waiter; a fresh event for the next note

    def missing(self, target: tuple[int, int]) -> list[int]:
        """In-sync slaves that have not reported ``target`` (or later) yet."""
        if self.in_sync_slaves is None:
            return []
        state, counter = target
        late = []
        for broker_id in sorted(self.in_sync_slaves()):
            got = self.reported.get(broker_id)
            if got is None or got[0] != state or got[1] < counter:
                late.append(broker_id)
        return late

    async def wait_for(self, target: tuple[int, int], timeout_s: float) -> list[int]:
        """Wait until every in-sync slave holds ``target``; the ids still missing at the
        timeout (empty when all have it)."""
        deadline = time.monotonic() + timeout_s
        while True:
            changed = self._changed  # taken before the check: no note slips between them
            late = self.missing(target)
            left = deadline - time.monotonic()
            if not late or left <= 0:
                return late
            try:
                await asyncio.wait_for(changed.wait(), left)
            except TimeoutError:
                return self.missing(target)
