"""A writer killed *inside* a store file's creation (a failpoint, not luck of timing): the
restart removes what the cut creation left, loses no acknowledged message and finds every
acknowledged key through the index; ``rocketq store check`` reports the store whole."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from rocketq.common import failpoint
from rocketq.common.message_decoder import decode_message
from rocketq.store import MessageStore
from rocketq.store.check import check_store
from rocketq.store.mapped_file import CREATING_SUFFIX
from rocketq.testing.store_writer import TOPIC, store_config

BODY = re.compile(r"^c(\d+)-w(\d+)-n(\d+)")


def _run_until_failpoint(root: Path, cycle: int, points: str) -> list[tuple[int, int, bytes]]:
    env = {**os.environ, failpoint.ENV: points}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocketq.testing.store_writer", str(root), str(cycle), "2"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    acks: list[tuple[int, int, bytes]] = []
    assert proc.stdout is not None
    stdout = proc.stdout

    def reader() -> None:
        for line in stdout:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "ack":
                acks.append((int(parts[1]), int(parts[2]), bytes.fromhex(parts[3])))

    t = threading.Thread(target=reader)
    t.start()
    try:
        code = proc.wait(60)  # the failpoint kills it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    t.join(30)
    stdout.close()
    assert code == -signal.SIGKILL, f"the writer was not killed by the failpoint ({code})"
    return acks


def _key(body: bytes) -> str:
    m = BODY.match(body.decode())
    assert m is not None
    return f"k{m[1]}-{m[2]}-{m[3]}"


@pytest.mark.parametrize(
    "points",
    [
        "mapped_file.create.index@2",  # the second index file: 4,000 keys a file
        "mapped_file.linked.index@2",  # linked under its name, the .tmp still there
        "mapped_file.create.commitlog@3",
        "mapped_file.create.consumequeue@9",
    ],
)
def test_kill_inside_file_creation_loses_nothing(tmp_path: Path, points: str) -> None:
    root = tmp_path / "store"
    acked: dict[tuple[int, int], bytes] = {}
    for qid, qoff, body in _run_until_failpoint(root, 0, points):
        acked[(qid, qoff)] = body
    assert len(acked) > 100
    leftovers = list(root.rglob(f"*{CREATING_SUFFIX}"))
    if "create." in points:
        assert leftovers, "the failpoint should have cut a creation"
    store = MessageStore(store_config(str(root)))
    store.load()
    try:
        assert not list(root.rglob(f"*{CREATING_SUFFIX}"))
        for (qid, qoff), body in acked.items():
            res = store.get_message("check", TOPIC, qid, qoff, 1)
            assert res.message_buffers, (qid, qoff, res.status)
            assert decode_message(res.message_buffers[0]).body == body
        missing = [
            _key(body)
            for body in acked.values()
            if not store.query_messages(TOPIC, _key(body), 4, 0, 2**62)
        ]
        assert not missing, f"{len(missing)} acknowledged keys not found, e.g. {missing[:3]}"
    finally:
        store.shutdown()
    report = check_store(str(root))
    assert report.ok, report
