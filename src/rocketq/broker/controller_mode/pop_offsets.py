"""A new master's pop offsets cover every pop the old master answered (beyond RocketMQ 5,
whose new master serves again, acknowledged or not, whatever was popped since its last 10 s
metadata sync).

Theory of operation. A pop's check point (ck) is put, and in controller mode replicated to
the in-sync set, before the pop commits its consume offset and answers
(``PopMessageProcessor``, our ``broker/pop/pop_reader.py``). The offset itself reaches a slave
by the metadata poll (every 0.5 s), so a new master may hold an offset from before the last
pops. Before it unfences, it reads the cks stored since its last offset sync (less a margin
for the clocks): in the wheel topic (a ck due later goes through the timer) and in the revive
topic's queues (a ck already due is put there at once), and commits for each (group, topic,
queue) at least the end of what each ck popped. Committing higher is always sound: the old
master had committed at least that when it answered the pop. A ck whose pop was never
answered (its in-sync slave did not confirm it) is followed by an ack marked as its cancel
(``records.CANCEL_PROPERTY``): it does not count, so its messages are served again (the
cancel makes the ck revive nothing, so counting it would lose them). FIFO pops write no ck;
their offsets move at ack time and follow by the poll.

The window by time assumes a pop commits within the clock margin of its ck's store time. But
a ck's put waits for the in-sync replicas, so on a loaded machine (or with a replica slow to
confirm) its pop commits seconds later: a metadata round that began past the margin and was
answered before the commit holds neither the commit nor, by time, the ck. So the master
answers each offsets request with the lowest commitlog offset a ck still being put may have
(``PopService.check_point_floor``, read in the same step as the table; none in flight: the
commitlog's end), and the window reaches back to that offset too (``since_phy``). RocketMQ 5
has no such window: its new master serves again what was popped since its last metadata sync
(``SlaveSynchronize``, every 10 s).
"""

from __future__ import annotations

import logging

from rocketq.broker.offsets import ConsumerOffsetManager
from rocketq.broker.pop.check_point_scan import CLOCK_MARGIN_MS as CLOCK_MARGIN_MS
from rocketq.broker.pop.check_point_scan import (
    cancelled_key_of,
    check_point_of,
    end_of,
    messages_since,
)
from rocketq.broker.pop.records import PopCheckPoint, revive_topic
from rocketq.store.message_store import MessageStore
from rocketq.store.timer.timer_hook import TIMER_TOPIC

log = logging.getLogger(__name__)

#: without a sync since start, the window read back (a broker restarted, then promoted)
UNSYNCED_WINDOW_MS = 600_000
POP_LOCAL_HOST = "127.0.0.1"


def advance_pop_offsets(
    store: MessageStore,
    offsets: ConsumerOffsetManager,
    cluster_name: str,
    revive_queue_num: int,
    since_ms: int,
    since_phy: int | None = None,
) -> int:
    """Commit each (group, topic, queue)'s offset up to the end of the cks stored since
    ``since_ms`` or at or past commitlog offset ``since_phy`` (the last synced round's ck
    floor; None: by time alone); how many offsets moved."""
    if not store.wait_for_dispatch():
        log.warning("pop offsets: the store's dispatch is behind; reading what it has")
    revive = revive_topic(cluster_name)
    cks: list[PopCheckPoint] = []
    cancelled: set[str] = set()
    queues = [(TIMER_TOPIC, 0), *((revive, q) for q in range(revive_queue_num))]
    for topic, queue_id in queues:
        for msg in messages_since(store, topic, queue_id, since_ms, since_phy):
            ck = check_point_of(msg, revive)
            if ck is not None:
                cks.append(ck)
                continue
            cancel = cancelled_key_of(msg, revive, "")  # a cancel copies its ck's bn
            if cancel is not None:
                cancelled.add(cancel)
    ends: dict[tuple[str, str, int], int] = {}
    found = len(cks)
    for ck in cks:
        if ck.merge_key() in cancelled:
            continue  # never answered: its messages are served again
        key = (ck.cid, ck.topic, ck.queue_id)
        ends[key] = max(ends.get(key, -1), end_of(ck))
    moved: list[str] = []
    for (group, topic, queue_id), end in sorted(ends.items()):
        had = offsets.query_offset(group, topic, queue_id)
        if had < end:
            offsets.commit_offset(POP_LOCAL_HOST, group, topic, queue_id, end)
            moved.append(f"{group}@{topic}:{queue_id} {had}->{end}")
    log.info(
        "pop offsets: %d cks stored since %d or at/after offset %s read (%d cancelled), %d "
        "offsets advanced past the old master's last pops: %s",
        found,
        since_ms,
        since_phy,
        len(cancelled),
        len(moved),
        ", ".join(moved) or "none",
    )
    return len(moved)
