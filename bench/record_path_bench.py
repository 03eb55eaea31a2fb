"""CPU cost of the record paths: decode, reput/recovery checks, get_message (with the broker's
filter), put_message. Rates are per CPU second (``time.process_time``), best of ``--reps``,
so a run on a loaded machine still compares with a run of another tree made the same minute:

    .venv/bin/python bench/record_path_bench.py                 # this tree
    (cd ../main && .venv/bin/python <this tree>/bench/record_path_bench.py)   # main's code

Only APIs that exist on both sides of issue 8 are used (and ``scan_file`` where present);
``ROCKETQ_NATIVE=0`` runs the pure-Python record paths of a tree with the compiled ones.
Bounded: 20,000 records in memory, 5,000 in a temporary store, ``--reps`` repetitions of each
row.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import tempfile
import time
from collections.abc import Callable

from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.common.hashing import java_string_hash
from rocketq.common.message import MessageExt
from rocketq.common.message_decoder import decode_messages, encode_message
from rocketq.store.commitlog import check_message_and_return_size
from rocketq.store.config import FlushDiskType, StoreConfig
from rocketq.store.message_store import MessageStore

try:  # after issue 13 lever 4
    from rocketq.store.recovery import scan_file
except ImportError:  # before
    scan_file = None  # type: ignore[assignment]

try:  # after issue 8
    from rocketq.remoting.protocol.subscription import SubscriptionData
except ImportError:  # before
    from rocketq.remoting.protocol.bodies import SubscriptionData  # type: ignore[attr-defined,no-redef]

RECORDS = 20_000
STORED = 5_000
PULL = 32


def message(i: int) -> MessageExt:
    return MessageExt(
        topic="BenchTopic",
        body=b"x" * 1024,
        properties={"TAGS": "TagA", "KEYS": f"k{i}", "UNIQ_KEY": f"AC11{i:028d}"},
        born_host=("127.0.0.1", 5000),
        store_host=("127.0.0.1", 10911),
        born_timestamp=1,
    )


def best_rate(run: Callable[[], int], reps: int) -> float:
    rates = []
    for _ in range(reps):
        start = time.process_time()
        count = run()
        rates.append(count / max(1e-9, time.process_time() - start))
    return max(rates)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    records = [bytes(encode_message(message(i))) for i in range(RECORDS)]
    blob = memoryview(b"".join(records))
    pull_body = b"".join(records[:PULL])

    def decode() -> int:
        for _ in range(200):
            decode_messages(pull_body, check_crc=False)
        return 200 * PULL

    def scan(check_crc: bool) -> Callable[[], int]:
        def run() -> int:
            pos = count = 0
            while pos < len(blob):  # records were encoded at offset 0: pass -pos as the base
                req = check_message_and_return_size(
                    blob, pos, len(blob), -pos, check_crc=check_crc, delay_table={1: 1000}
                )
                assert req is not None
                pos += req.msg_size
                count += 1
            return count

        return run

    root = tempfile.mkdtemp(prefix="rocketq-record-bench-")
    config = dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=root,
        mapped_file_size_commit_log=64 << 20,
        mapped_file_size_consume_queue=300_000 * 20,
        max_hash_slot_num=1000,
        max_index_num=4000,
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
    )
    store = MessageStore(config)
    store.load()
    store.start()
    try:

        def put() -> int:
            for i in range(STORED):
                store.put_message(message(i))
            return STORED

        put()
        assert store.wait_for_dispatch(30.0)

        def get(message_filter: ExpressionMessageFilter | None) -> Callable[[], int]:
            def run() -> int:
                count = 0
                for offset in range(0, STORED, PULL):
                    result = store.get_message("g", "BenchTopic", 0, offset, PULL, message_filter)
                    count += len(result.message_buffers)
                return count

            return run

        tag_a = SubscriptionData(
            topic="BenchTopic",
            sub_string="TagA",
            tags_set=["TagA"],
            code_set=[java_string_hash("TagA")],
        )

        def reput() -> int:
            reqs, _next, bad = store.commit_log.read_dispatch_requests(
                0, check_crc=False, max_bytes=64 << 20
            )
            assert not bad
            assert len(reqs) == STORED
            return len(reqs)

        def recovery_walk() -> int:
            mf = store.commit_log.mapped_file_queue.mapped_files[0]
            end, _blank = scan_file(mf, 0, True, {})
            assert end == mf.wrote_position
            return STORED

        rows: list[tuple[str, Callable[[], int]]] = [
            ("decode_messages, a 32-record pull body (client)", decode),
            ("check_message_and_return_size, no CRC (reput)", scan(False)),
            ("check_message_and_return_size, CRC (recovery)", scan(True)),
            ("CommitLog.read_dispatch_requests (reput)", reput),
        ]
        if scan_file is not None:
            rows.append(("recovery.scan_file, CRC (recovery)", recovery_walk))
        rows += [
            ("MessageStore.get_message, 32 a pull, no filter", get(None)),
            ("get_message + the broker's filter, '*'", get(ExpressionMessageFilter(None))),
            ("get_message + the broker's filter, 'TagA'", get(ExpressionMessageFilter(tag_a))),
            ("MessageStore.put_message 1 KiB (encode + append)", put),
        ]
        for name, run in rows:
            print(f"{name:<52}{best_rate(run, args.reps):>12,.0f} /CPU s", flush=True)
    finally:
        store.shutdown()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
