"""Store benchmark: put/flush/recovery rates plus the disk's own reference figures.

Run: ``.venv/bin/python bench/store_bench.py [--dir DIR] [--seconds S]``. Bounded: each
phase runs at most ``--seconds`` (default 4) or its message count, whole run < 3 minutes.
Records are pre-encoded (the store's encode step happens outside the put lock; the codec is
``rocketq.common``'s and is measured separately when present).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from rocketq.store import StoreConfig
from rocketq.store.commitlog import CommitLog, EncodedMessage
from rocketq.store.flush import FlushRealTimeService, GroupCommitService

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def build_record(topic: str, queue_id: int, body: bytes, props: bytes = b"") -> bytearray:
    from tests.store.records import build_record as build

    return build(topic, queue_id, body, props)


SEG = 256 * 1024 * 1024


def fig(name: str, count: int, elapsed: float, rts_us: list[float] | None = None) -> None:
    line = f"{name:<38} {count / elapsed:>12,.0f} msg/s  ({count} in {elapsed:.2f}s)"
    if rts_us:
        rts = sorted(rts_us)
        p = lambda q: rts[min(len(rts) - 1, int(q * len(rts)))]  # noqa: E731
        line += (
            f"  RT avg {statistics.fmean(rts):.1f}us max {rts[-1]:.0f}us"
            f" p50 {p(0.5):.1f}us p99 {p(0.99):.1f}us"
        )
    print(line, flush=True)


def cfg(root: str) -> StoreConfig:
    return dataclasses.replace(
        StoreConfig(), store_path_root_dir=root, mapped_file_size_commit_log=SEG
    )


def disk_reference(root: str) -> None:
    path = os.path.join(root, "raw")
    block = os.urandom(1 << 20)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    t0 = time.perf_counter()
    for _ in range(256):
        os.write(fd, block)
    os.fsync(fd)
    el = time.perf_counter() - t0
    print(f"{'disk: sequential write+fsync':<38} {256 / el:>12,.1f} MiB/s", flush=True)
    lats = []
    for _ in range(200):
        os.pwrite(fd, b"x" * 1024, 0)
        t = time.perf_counter()
        os.fdatasync(fd)
        lats.append((time.perf_counter() - t) * 1e6)
    os.close(fd)
    os.unlink(path)
    lats.sort()
    print(
        f"{'disk: fdatasync latency (1 KiB)':<38} avg {statistics.fmean(lats):.0f}us"
        f" p50 {lats[100]:.0f}us p99 {lats[197]:.0f}us",
        flush=True,
    )


def bench_async_put(root: str, body_size: int, seconds: float, limit: int) -> None:
    d = os.path.join(root, f"async{body_size}")
    config = cfg(d)
    cl = CommitLog(config)
    svc = FlushRealTimeService(config, cl.mapped_file_queue, lambda: cl.store_timestamp)
    svc.start()
    body = os.urandom(body_size)
    template = build_record("BenchTopic", 0, body, b"TAGS\x01TagA\x02KEYS\x01k1\x02")
    n = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while n < limit and (n & 1023 or time.perf_counter() < deadline):
        cl.append(EncodedMessage(bytearray(template), "BenchTopic", n & 7))
        n += 1
    el = time.perf_counter() - t0
    svc.shutdown()
    fig(f"ASYNC_FLUSH put {body_size} B", n, el)
    cl.shutdown()
    shutil.rmtree(d)


def bench_sync_put(root: str, writers: int, seconds: float) -> float:
    d = os.path.join(root, f"sync{writers}")
    config = cfg(d)
    cl = CommitLog(config)
    svc = GroupCommitService(config, cl.mapped_file_queue, lambda: cl.store_timestamp)
    svc.start()
    template = build_record("BenchTopic", 0, os.urandom(1024))
    rts: list[float] = []
    counts = [0] * writers
    stop = time.perf_counter() + seconds

    def writer(i: int) -> None:
        local: list[float] = []
        while time.perf_counter() < stop:
            t = time.perf_counter()
            r = cl.append(EncodedMessage(bytearray(template), "BenchTopic", i))
            svc.flush_and_wait(r.wrote_offset + r.wrote_bytes)
            local.append((time.perf_counter() - t) * 1e6)
        counts[i] = len(local)
        rts.extend(local)

    t0 = time.perf_counter()
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    el = time.perf_counter() - t0
    svc.shutdown()
    fig(f"SYNC_FLUSH put 1 KiB, {writers} writers", sum(counts), el, rts)
    cl.shutdown()
    shutil.rmtree(d)
    return sum(counts) / el


def bench_awaited_sync_put(root: str, writers: int, seconds: float) -> float:
    """SYNC_FLUSH puts as the broker makes them: coroutines awaiting the group commit."""
    import asyncio

    from rocketq.broker.store_future import await_store_future
    from rocketq.common.message import MessageExt
    from rocketq.store import FlushDiskType, MessageStore

    d = os.path.join(root, f"awaited{writers}")
    store = MessageStore(dataclasses.replace(cfg(d), flush_disk_type=FlushDiskType.SYNC_FLUSH))
    store.load()
    store.start()
    body = os.urandom(1024)
    rts: list[float] = []
    stop = time.perf_counter() + seconds

    async def writer(i: int) -> None:
        while time.perf_counter() < stop:
            t = time.perf_counter()
            msg = MessageExt(
                topic="BenchTopic",
                body=body,
                properties={"TAGS": "TagA"},
                queue_id=i % 8,
                born_host=("127.0.0.1", 1),
                store_host=("127.0.0.1", 10911),
            )
            result = await await_store_future(store.async_put_message(msg))
            assert result.status.name == "PUT_OK", result.status
            rts.append((time.perf_counter() - t) * 1e6)

    async def run() -> float:
        t0 = time.perf_counter()
        await asyncio.gather(*(writer(i) for i in range(writers)))
        return time.perf_counter() - t0

    el = asyncio.run(run())
    store.shutdown()
    shutil.rmtree(d)
    fig(f"SYNC_FLUSH awaited put (broker), {writers} w", len(rts), el, rts)
    return len(rts) / el


def bench_recovery(root: str, mib: int) -> None:
    from rocketq.common import native_record
    from rocketq.store.recovery import scan_file

    print(f"{'record paths':<38} {native_record.active():>12}", flush=True)

    d = os.path.join(root, "recover")
    config = cfg(d)
    cl = CommitLog(config)
    template = build_record("BenchTopic", 0, os.urandom(1024), b"TAGS\x01TagA\x02")
    while cl.get_max_offset() < mib * 1024 * 1024:
        cl.append(EncodedMessage(bytearray(template), "BenchTopic", 0))
    cl.mapped_file_queue.flush(0)
    total = cl.get_max_offset()
    cl.shutdown()
    cl = CommitLog(config)
    cl.load()
    t0 = time.perf_counter()
    scanned = 0
    for mf in cl.mapped_file_queue.mapped_files:
        pos, blank = scan_file(mf, 0, True, {})  # recovery's walk of one file
        pos = mf.file_size if blank else pos
        scanned += min(pos, total - mf.file_from_offset)
    el = time.perf_counter() - t0
    assert scanned == total, (scanned, total)
    print(
        f"{'recovery scan with CRC (1 KiB records)':<38} {scanned / el / 2**20:>12,.1f} MiB/s"
        f"  ({scanned / 2**20:.0f} MiB in {el:.2f}s)",
        flush=True,
    )
    t0 = time.perf_counter()
    reqs_n = 0
    off = 0
    while off < total:
        reqs, off, _bad = cl.read_dispatch_requests(off, check_crc=False, max_bytes=4 << 20)
        reqs_n += len(reqs)
        if not reqs:
            break
    el = time.perf_counter() - t0
    fig("reput decode (DispatchRequests)", reqs_n, el)
    cl.shutdown()
    shutil.rmtree(d)


def bench_message_store(root: str, seconds: float) -> None:
    """put_message with encoding, then get_message, through MessageStore (needs rocketq.common)."""
    from rocketq.common import native_record

    try:
        from rocketq.common.message import MessageExt
        from rocketq.store import MessageStore
    except ImportError as exc:
        print(f"{'MessageStore put/get':<38} skipped ({exc})", flush=True)
        return
    d = os.path.join(root, "ms")
    store = MessageStore(cfg(d))
    store.load()
    store.start()
    body = os.urandom(1024)
    n = 0
    cpu0 = time.process_time()  # every thread's: the put loop, the reput's dispatch, the flush
    t0 = time.perf_counter()
    while n < 500_000 and (n & 1023 or time.perf_counter() < t0 + seconds):
        msg = MessageExt(
            topic="BenchTopic",
            body=body,
            properties={"TAGS": "TagA"},
            queue_id=n & 7,
            born_timestamp=0,
            born_host=("127.0.0.1", 1),
            store_host=("127.0.0.1", 10911),
        )
        store.put_message(msg)
        n += 1
    fig("MessageStore.put_message 1 KiB (encode)", n, time.perf_counter() - t0)
    store.wait_for_dispatch(60)
    cpu_us = (time.process_time() - cpu0) / n * 1e6
    print(
        f"{'  CPU per put, dispatch included':<38} {cpu_us:>12.2f} us  "
        f"({1e6 / cpu_us:,.0f} msg per CPU second; record paths {native_record.active()})",
        flush=True,
    )
    got = 0
    t0 = time.perf_counter()
    for qid in range(8):
        offset = 0
        while True:
            res = store.get_message("g", "BenchTopic", qid, offset, 32)
            if not res.message_buffers:
                break
            got += res.message_count
            offset = res.next_begin_offset
    fig("MessageStore.get_message (32/pull)", got, time.perf_counter() - t0)
    store.shutdown()
    shutil.rmtree(d)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=None)
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--only-recovery", action="store_true")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="rocketq-bench-", dir=args.dir)
    try:
        if args.only_recovery:
            bench_recovery(root, 512)
            return
        print(f"store bench in {root} (python {sys.version.split()[0]})", flush=True)
        disk_reference(root)
        for size in (128, 1024, 16 * 1024):
            bench_async_put(root, size, args.seconds, 2_000_000)
        one = bench_sync_put(root, 1, args.seconds)
        many = bench_sync_put(root, 32, args.seconds)
        print(f"{'group commit speed-up (32 vs 1)':<38} {many / one:>12.1f}x", flush=True)
        one = bench_awaited_sync_put(root, 1, args.seconds)
        many = bench_awaited_sync_put(root, 32, args.seconds)
        print(f"{'awaited group commit speed-up':<38} {many / one:>12.1f}x", flush=True)
        bench_recovery(root, 512)
        bench_message_store(root, args.seconds)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
