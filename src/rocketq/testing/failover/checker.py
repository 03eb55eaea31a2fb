"""The fault suite's checker: the stopped stores read back with the store's own reader.

- 0 acknowledged messages lost: every SEND_OK key is on the final master, at the commitlog
  offset and queue offset its answer named;
- no consumed message later truncated: each consumed position still holds what was consumed;
- at most one acking master per epoch: each ack's offset falls in one epoch's range of the
  final epoch file (``EpochFileCache``), and one broker acknowledged within each range (a
  zombie's ack lands in the wrong range or is missing);
- no zombie acks: no send acknowledged in an epoch's range was made after a later epoch's
  master had acknowledged one (a deposed master answering; by the final epoch file, so an old
  master elected again later in the same fault's cycle is not one);
- replicas byte-identical up to what every replica holds, and the same epoch file everywhere;
- duplicates (a key stored more than once, from a resend after a lost answer) counted.
"""

from __future__ import annotations

import bisect
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rocketq.common.message_decoder import decode_message
from rocketq.store.config import StoreConfig
from rocketq.store.message_store import MessageStore
from rocketq.testing.controller_mode import STORE_KEYS
from rocketq.testing.failover.load import QUEUES, TOPIC, Ack, Ledger, body_of


@dataclass
class Verdict:
    acked: int = 0
    consumed: int = 0
    lost: list[str] = field(default_factory=list)
    truncated: list[str] = field(default_factory=list)
    masters_per_epoch: dict[int, set[str]] = field(default_factory=dict)
    replicas_identical: bool = False
    epoch_files_equal: bool = False
    duplicates: int = 0
    epochs: list[str] = field(default_factory=list)
    zombies: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[str]:
        out = [f"lost: {key}" for key in self.lost[:20]]
        out += [f"truncated after consumed: {pos}" for pos in self.truncated[:20]]
        out += [f"acked by a deposed master: {z}" for z in self.zombies[:20]]
        out += [
            f"epoch {e} acked by {sorted(m)}"
            for e, m in self.masters_per_epoch.items()
            if len(m) > 1
        ]
        if not self.replicas_identical:
            out.append("replica commitlogs differ")
        if not self.epoch_files_equal:
            out.append("epoch files differ")
        return out


def open_stopped_store(conf: dict[str, str]) -> MessageStore:
    """The store a stopped broker left, opened (and recovered) for reading."""
    config, _ = StoreConfig.from_properties(
        {k: v for k, v in conf.items() if k in STORE_KEYS or k in ("flushDiskType", "brokerRole")},
        store_path_root_dir=conf["storePathRootDir"],
    )
    store = MessageStore(config)
    store.load()
    store.start()
    assert store.wait_for_dispatch(30)
    return store


def commitlog_bytes(commit_log_dir: str, start: int, end: int) -> bytes:
    names = sorted(os.listdir(commit_log_dir))
    first = int(names[0]) if names else 0
    data = b"".join(Path(commit_log_dir, n).read_bytes() for n in names)
    return data[start - first : end - first]


def epoch_starts(text: str) -> list[tuple[int, int]]:
    """(start offset, epoch) of each entry of an epoch file (after its two header lines)."""
    entries = [line.split("-") for line in text.splitlines()[2:] if line]
    return [(int(start), int(epoch)) for epoch, start in entries]


def check(confs: list[dict[str, str]], master_port: str, ledger: Ledger) -> Verdict:
    verdict = Verdict(acked=len(ledger.acks), consumed=len(ledger.consumed))
    stores = {c["listenPort"]: open_stopped_store(c) for c in confs}
    try:
        master = stores[master_port]
        for ack in ledger.acks:
            got = master.look_message_by_offset(ack.phy_offset)
            if got is None or got.body != body_of(ack.producer, ack.seq):
                verdict.lost.append(f"p{ack.producer}-{ack.seq}@{ack.phy_offset}")
        for c in ledger.consumed:
            got_q = master.get_message("check", TOPIC, c.queue_id, c.queue_offset, 1)
            buffers = got_q.message_buffers
            if not buffers or decode_message(buffers[0]).body != c.body:
                verdict.truncated.append(f"{c.queue_id}@{c.queue_offset}")
        texts = {Path(s.config.epoch_file_path).read_text() for s in stores.values()}
        verdict.epoch_files_equal = len(texts) == 1
        text = Path(master.config.epoch_file_path).read_text()
        verdict.epochs = text.splitlines()[2:]
        starts = epoch_starts(text)
        offsets = [start for start, _ in starts]
        per_epoch: dict[int, set[str]] = defaultdict(set)
        for ack in ledger.acks:
            index = bisect.bisect_right(offsets, ack.phy_offset) - 1
            per_epoch[starts[index][1] if index >= 0 else 0].add(ack.broker)
        verdict.masters_per_epoch = dict(per_epoch)
        verdict.zombies = zombie_acks(ledger.acks, starts)
        low = max(s.get_min_phy_offset() for s in stores.values())
        high = min(s.get_max_phy_offset() for s in stores.values())
        logs = {commitlog_bytes(s.config.commit_log_dir, low, high) for s in stores.values()}
        verdict.replicas_identical = len(logs) == 1 and high > low
        verdict.duplicates = count_duplicates(master)
    finally:
        for s in stores.values():
            s.shutdown()
    return verdict


def zombie_acks(acks: list[Ack], starts: list[tuple[int, int]]) -> list[str]:
    """Each ack whose offset lies in an epoch's range of the final epoch file (``starts``)
    although its send was made after a later epoch's master had acknowledged a send."""
    offsets = [start for start, _ in starts]

    def epoch_of(ack: Ack) -> int:
        index = bisect.bisect_right(offsets, ack.phy_offset) - 1
        return starts[index][1] if index >= 0 else 0

    first: dict[int, float] = {}  # epoch -> its first ack's answer
    for ack in acks:
        epoch = epoch_of(ack)
        first[epoch] = min(first.get(epoch, ack.at), ack.at)
    later: dict[int, float] = {}  # epoch -> the first ack of any later epoch
    seen = float("inf")
    for epoch in sorted(first, reverse=True):
        later[epoch] = seen
        seen = min(seen, first[epoch])
    return [
        f"p{a.producer}-{a.seq}@{a.phy_offset} by {a.broker} (epoch {epoch_of(a)})"
        for a in acks
        if a.sent_at > later[epoch_of(a)]
    ]


def count_duplicates(store: MessageStore) -> int:
    """Keys stored more than once (each extra copy counted once)."""
    seen: Counter[bytes] = Counter()
    for queue_id in range(QUEUES):
        offset = store.get_min_offset_in_queue(TOPIC, queue_id)
        end = store.get_max_offset_in_queue(TOPIC, queue_id)
        while offset < end:
            got = store.get_message("check", TOPIC, queue_id, offset, 32)
            if not got.message_buffers:
                break
            for buf in got.message_buffers:
                seen[decode_message(buf).body] += 1
            offset = got.next_begin_offset
    return sum(n - 1 for n in seen.values() if n > 1)
