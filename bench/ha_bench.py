"""Replication benchmark: how fast a slave catches up, and what SYNC_MASTER costs a put.

Run: ``.venv/bin/python bench/ha_bench.py [--messages N] [--size BYTES]``. Two stores in one
process on 127.0.0.1 (the real HAService and HAClient over loopback TCP):

1. catch-up: the master stores N messages while its slave is away, then the slave comes
   back and copies them all from its own offset; reported in MB/s and seconds;
2. puts: N/10 blocking puts each on an ASYNC_MASTER and a SYNC_MASTER (ASYNC_FLUSH both).

Bounded: N defaults to 20,000 1 KiB messages (about 21 MB), the whole run < 1 minute.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

from rocketq.common.message import MessageExt
from rocketq.store.config import BrokerRole, FlushDiskType, StoreConfig
from rocketq.store.message_store import MessageStore

HA = {"ha_listen_port": 0, "ha_listen_host": "127.0.0.1", "ha_send_heartbeat_interval_ms": 200}


def open_store(root: Path, role: BrokerRole, **kw: object) -> MessageStore:
    config = dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=str(root),
        mapped_file_size_commit_log=16 * 1024 * 1024,
        max_hash_slot_num=5000,
        max_index_num=20000,
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
        broker_role=role,
        **{**HA, **kw},  # type: ignore[arg-type]
    )
    store = MessageStore(config)
    store.load()
    store.start()
    store.start_ha()
    return store


def message(i: int, size: int) -> MessageExt:
    return MessageExt(
        topic="BenchHA",
        body=b"%08d" % i + b"x" * (size - 8),
        queue_id=i % 8,
        born_timestamp=int(time.time() * 1000),
        born_host=("127.0.0.1", 1),
        store_host=("127.0.0.1", 10911),
    )


def wait_caught_up(master: MessageStore, slave: MessageStore, timeout_s: float = 120) -> float:
    started = time.monotonic()
    while slave.get_max_phy_offset() < master.get_max_phy_offset():
        if time.monotonic() - started > timeout_s:
            raise TimeoutError("the slave did not catch up")
        time.sleep(0.005)
    return time.monotonic() - started


def catch_up(root: Path, count: int, size: int) -> None:
    """The slave links once (so it holds the log from offset 0), goes away while the master
    stores ``count`` messages, comes back and copies them from its own offset."""
    master = open_store(root / "m", BrokerRole.ASYNC_MASTER)
    address = f"127.0.0.1:{master.ha_service.listen_port}"
    try:
        master.put_message(message(0, size))  # an empty slave would start at the last file
        slave = open_store(root / "s", BrokerRole.SLAVE, ha_master_address=address)
        wait_caught_up(master, slave)
        slave.shutdown()
        start = master.get_max_phy_offset()
        for i in range(count):
            master.put_message(message(i, size))
        total = master.get_max_phy_offset() - start
        slave = open_store(root / "s", BrokerRole.SLAVE, ha_master_address=address)
        try:
            elapsed = wait_caught_up(master, slave)
        finally:
            slave.shutdown()
        print(
            f"catch-up: {total / 1e6:.1f} MB ({count} msgs) in {elapsed:.2f} s "
            f"= {total / 1e6 / elapsed:.1f} MB/s"
        )
    finally:
        master.shutdown()


def puts(root: Path, role: BrokerRole, count: int, size: int) -> None:
    master = open_store(root / f"p-{role.value}", role)
    slave = open_store(
        root / f"p-{role.value}-s",
        BrokerRole.SLAVE,
        ha_master_address=f"127.0.0.1:{master.ha_service.listen_port}",
    )
    try:
        while master.ha_service.connection_count == 0:
            time.sleep(0.01)
        started = time.monotonic()
        for i in range(count):
            status = master.put_message(message(i, size)).status
            assert status.name == "PUT_OK", status
        elapsed = time.monotonic() - started
        print(
            f"{role.value:<13} blocking puts: {count / elapsed:>8,.0f} msg/s "
            f"({elapsed / count * 1e6:.0f} us each)"
        )
    finally:
        slave.shutdown()
        master.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ha-bench-", dir=args.dir))
    try:
        catch_up(root, args.messages, args.size)
        for role in (BrokerRole.ASYNC_MASTER, BrokerRole.SYNC_MASTER):
            puts(root, role, args.messages // 10, args.size)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
