"""Disk full under the store: a 4 MiB tmpfs mounted for the test, a broker in its own
process (a SIGBUS would show as its exit status, not kill the test run).

Two ways to run out: a new 1 MiB commitlog file that cannot be preallocated (ENOSPC:
SYSTEM_ERROR "create mapped file failed"), and the partition above 90 % (the store refuses
puts: SERVICE_NOT_AVAILABLE, code 14). In both the broker stays up, every acknowledged
message stays readable, and sends succeed again once space returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.broker import SMALL_INDEX
from rocketq.testing.broker_process import BrokerProcess
from rocketq.testing.store import small_store_properties
from rocketq.testing.wire import send_request
from tests.e2e.ha_support import TOPIC, Ack, missing_in_store, open_stopped_store

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

FS_BYTES = 4 * 1024 * 1024
SEGMENT = 1024 * 1024
BODY = 30 * 1024


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={FS_BYTES}", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a 4 MiB tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def fill_until_free(mnt: Path, filler: Path, leave: int) -> None:
    """Grow ``filler`` until ``leave`` bytes are free (allocated blocks, not a sparse hole)."""
    grow = free_bytes(mnt) - leave
    if grow > 0:
        with open(filler, "ab") as f:
            os.posix_fallocate(f.fileno(), f.seek(0, os.SEEK_END), grow)


async def send(client: RemotingClient, addr: str, body: bytes) -> RemotingCommand:
    return await client.invoke(addr, send_request(TOPIC, body, keys=body[:12].decode()), 10)


async def send_until_code(
    client: RemotingClient, addr: str, code: int, acked: list[Ack], tag: str, limit: int = 200
) -> RemotingCommand:
    """Send until the broker answers ``code``; SUCCESS answers go into ``acked``."""
    for i in range(limit):
        body = f"{tag}-{i:05d}-".encode().ljust(BODY, b"d")
        response = await send(client, addr, body)
        if response.code == ResponseCode.SUCCESS:
            h = response.ext_fields
            acked.append(Ack(body, int(h["queueId"]), int(h["queueOffset"]), 0, "broker-a"))
        if response.code == code:
            return response
        await asyncio.sleep(0.01 if response.code == ResponseCode.SUCCESS else 0.2)
    raise AssertionError(f"no answer {code} in {limit} sends")


async def test_disk_full_refuses_sends_keeps_what_was_stored_and_recovers(
    small_fs: Path, tmp_path: Path
) -> None:
    conf = {
        "brokerName": "broker-a",
        "brokerIP1": "127.0.0.1",
        "storePathRootDir": str(small_fs / "store"),
        **small_store_properties(SEGMENT),
        "cleanResourceInterval": "200",
        "maxHashSlotNum": "100",
        "maxIndexNum": "400",
        **{k: v for k, v in SMALL_INDEX.items() if k not in ("maxHashSlotNum", "maxIndexNum")},
    }
    broker = BrokerProcess(tmp_path / "proc", conf)
    filler = small_fs / "filler"
    acked: list[Ack] = []
    await asyncio.to_thread(broker.start)
    client = RemotingClient()
    try:
        for _ in range(3):  # the first commitlog file exists before the disk fills
            await send_until_code(client, broker.addr, ResponseCode.SUCCESS, acked, "z")
        # 1. ENOSPC: below the 90 % mark but with no room for the next 1 MiB file
        fill_until_free(small_fs, filler, leave=700 * 1024)
        refused = await send_until_code(client, broker.addr, ResponseCode.SYSTEM_ERROR, acked, "a")
        assert "create mapped file failed" in (refused.remark or "")
        assert len(acked) > 3  # the rest of the first file filled up
        assert broker.running
        # 2. above 90 %: every send refused with SERVICE_NOT_AVAILABLE before any file is needed
        fill_until_free(small_fs, filler, leave=150 * 1024)
        refused = await send_until_code(
            client, broker.addr, ResponseCode.SERVICE_NOT_AVAILABLE, acked, "b"
        )
        assert "disk is full" in (refused.remark or "")
        assert broker.running
        # 3. space returns: sends succeed again without a restart
        filler.unlink()
        started = time.monotonic()
        before = len(acked)
        await send_until_code(client, broker.addr, ResponseCode.SUCCESS, acked, "c", limit=100)
        assert len(acked) == before + 1
        recovered_s = time.monotonic() - started
        assert recovered_s < 10
        for _ in range(40):  # and roll into a new commitlog file
            await send_until_code(client, broker.addr, ResponseCode.SUCCESS, acked, "d")
    finally:
        await client.shutdown()
        proc = broker.proc
        broker.stop()
    assert proc is not None
    assert proc.returncode == 0, f"broker exit status {proc.returncode} (-7 is SIGBUS)"
    store = open_stopped_store(conf)
    try:
        assert missing_in_store(store, acked) == []
        assert len(os.listdir(store.config.commit_log_dir)) >= 2
    finally:
        store.shutdown()
    print(  # the figures RELIABILITY.md reports (pytest -s shows them)
        f"disk full: {len(acked)} acknowledged, lost 0, SYSTEM_ERROR then SERVICE_NOT_AVAILABLE,"
        f" SUCCESS again {recovered_s:.2f} s after space returned, exit status 0"
    )
    with contextlib.suppress(OSError):
        filler.unlink()
