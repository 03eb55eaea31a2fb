"""Restart time after a kill -9 under load, by store size (issue 22: "recovery bounded by what
was not checkpointed").

Run: ``.venv/bin/python bench/recovery_bench.py [--gib 4] [--dir DIR]``. A writer process fills
a store to ``--gib`` GiB with 1 KiB messages (batches of 32, a key each, 8 queues, ASYNC_FLUSH,
1 GiB commitlog files as RocketMQ's default), keeps writing, and is killed -9 mid-load. Then a
fresh process loads the store (recovery included) twice: with the dispatch checkpoint
(rocketq's rule, ``store/dispatch_checkpoint.py``) and without it (RocketMQ's file rule, the
file removed). The page cache is dropped before each load where this process may
(``/proc/sys/vm/drop_caches``, root), else the figures are warm-cache and say so. Needs free
disk of the store's size plus 1 GiB; stops with one line when short. Bounded: the fill stops at
the size or after ``--fill-seconds``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from rocketq.common import message_const as mc
from rocketq.common.message import MessageExt
from rocketq.store import MessageStore, StoreConfig
from rocketq.store.config import FlushDiskType
from rocketq.store.dispatch_checkpoint import FILE_NAME

GIB = 1 << 30
BODY = b"r" * 1024
QUEUES = 8


def config(root: str) -> StoreConfig:
    return dataclasses.replace(
        StoreConfig(),
        store_path_root_dir=root,
        flush_disk_type=FlushDiskType.ASYNC_FLUSH,
        check_crc_on_recover=True,
    )


def writer(root: str, gib: float, fill_seconds: float) -> None:
    store = MessageStore(config(root))
    store.load()
    store.start()
    target = int(gib * GIB)
    deadline = time.monotonic() + fill_seconds
    n = 0
    said = False
    while True:
        batch = []
        for _ in range(32):
            batch.append(
                MessageExt(
                    topic="RecoveryBench",
                    body=BODY,
                    properties={mc.PROPERTY_KEYS: f"k{n}"},
                    queue_id=n % QUEUES,
                    born_host=("127.0.0.1", 5000),
                    store_host=("127.0.0.1", 10911),
                )
            )
            n += 1
        for msg in batch:  # one put each: the broker's single-send path
            store.put_message(msg)
        if not said and (store.get_max_phy_offset() >= target or time.monotonic() > deadline):
            print(f"filled {store.get_max_phy_offset()} {n}", flush=True)
            said = True


def recover(root: str) -> None:
    t0 = time.perf_counter()
    store = MessageStore(config(root))
    store.load()
    elapsed = time.perf_counter() - t0
    report = {
        "load_s": round(elapsed, 3),
        "abnormal": store.recovered_abnormally,
        "scan_start": store.recovery_scan_start,
        "max_offset": store.get_max_phy_offset(),
    }
    print(json.dumps(report), flush=True)
    os._exit(0)  # no shutdown: the abort file stays, the next load is abnormal again


def drop_caches() -> bool:
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        return False
    return True


def load_once(root: str) -> dict[str, object]:
    cold = drop_caches()
    out = subprocess.run(
        [sys.executable, __file__, "--recover", root],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    report: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    report["cache"] = "cold" if cold else "warm"
    return report


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=4.0)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--fill-seconds", type=float, default=600.0)
    ap.add_argument("--writer", nargs=2, metavar=("ROOT", "GIB"))
    ap.add_argument("--recover", metavar="ROOT")
    args = ap.parse_args()
    if args.writer:
        writer(args.writer[0], float(args.writer[1]), args.fill_seconds)
        return
    if args.recover:
        recover(args.recover)
        return
    base = args.dir or tempfile.gettempdir()
    free = shutil.disk_usage(base).free
    if free < (args.gib + 1) * GIB:
        print(f"recovery_bench: {free / GIB:.1f} GiB free under {base}, needs {args.gib + 1:.1f}")
        sys.exit(1)
    root = tempfile.mkdtemp(prefix="recovery-bench-", dir=base)
    try:
        proc = subprocess.Popen(
            [sys.executable, __file__, "--fill-seconds", str(args.fill_seconds),
             "--writer", root, str(args.gib)],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        t0 = time.monotonic()
        line = proc.stdout.readline().split()
        fill_s = time.monotonic() - t0
        time.sleep(2.0)  # the kill lands while the writer is still putting
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        ours = load_once(root)
        if len(line) > 2:
            print(f"store {int(line[1]) / GIB:.2f} GiB ({line[2]} messages)"
                  f" filled in {fill_s:.0f} s; writer killed -9 under load")  # fmt: skip
        else:  # the writer ended before the size: say so, with what the store holds
            held = int(str(ours["max_offset"])) / GIB
            print(f"writer ended after {fill_s:.0f} s before the size (exit {proc.returncode});"
                  f" the store holds {held:.2f} GiB")  # fmt: skip
        os.unlink(os.path.join(root, FILE_NAME))
        theirs = load_once(root)
        print(f"{'rule':<34} {'restart s':>10} {'rescanned MiB':>14} {'cache':>6}")
        for name, r in (("dispatch checkpoint (rocketq)", ours), ("file rule (RocketMQ)", theirs)):
            rescanned = (int(str(r["max_offset"])) - int(str(r["scan_start"]))) / (1 << 20)
            print(f"{name:<34} {r['load_s']:>10} {rescanned:>14,.1f} {r['cache']:>6}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
