"""SIGKILL a SYNC_FLUSH writer process at random moments; every acknowledged message survives."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore
from rocketq.store.check import check_store
from rocketq.testing.store_writer import TOPIC, store_config

CYCLES = 20


def _run_cycle(root: Path, cycle: int, rng: random.Random) -> list[tuple[int, int, bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocketq.testing.store_writer", str(root), str(cycle), "4"],
        stdout=subprocess.PIPE,
        text=True,
    )
    acks: list[tuple[int, int, bytes]] = []
    assert proc.stdout is not None
    ready = proc.stdout.readline().strip()
    assert ready == "ready", ready
    stdout = proc.stdout

    def reader() -> None:
        for line in stdout:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "ack":
                acks.append((int(parts[1]), int(parts[2]), bytes.fromhex(parts[3])))

    t = threading.Thread(target=reader)
    t.start()
    time.sleep(rng.uniform(0.05, 0.6))  # the fault: kill at a random moment
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    t.join(30)
    stdout.close()
    return acks


@pytest.mark.slow
def test_sigkill_loop_loses_no_acknowledged_message(tmp_path: Path) -> None:
    rng = random.Random(1234)
    root = tmp_path / "store"
    acked: dict[tuple[int, int], bytes] = {}
    for cycle in range(CYCLES):
        for qid, qoff, body in _run_cycle(root, cycle, rng):
            acked[(qid, qoff)] = body
        store = MessageStore(store_config(str(root)))
        store.load()
        try:
            for (qid, qoff), body in acked.items():
                res = store.get_message("check", TOPIC, qid, qoff, 1)
                assert res.message_buffers, (cycle, qid, qoff, res.status)
                assert decode_message(res.message_buffers[0]).body == body
        finally:
            store.shutdown()
        report = check_store(str(root))
        assert report.ok, report
    assert len(acked) > CYCLES
