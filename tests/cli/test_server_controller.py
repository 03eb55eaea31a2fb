"""``rocketq server --cluster controller`` as a real process: a controller and three broker
processes; kill -9 of the master's PID shows the switch; SIGTERM stops every broker."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from rocketq.testing.cli_process import CLI_PROGRAM, read_all, read_until

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

GROUP = r"broker-a: epoch (\d+), master pid (\d+) \(\S+, id (\d+)\), in-sync replicas \[([\d, ]*)\]"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_server_cluster_controller_shows_the_switch_when_the_master_is_killed(
    tmp_path: Path,
) -> None:
    args = ["server", "--cluster", "controller", "--store", str(tmp_path)]
    ports = ["--namesrv-port", "0", "--broker-port", "0", "--host", "127.0.0.1"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CLI_PROGRAM,
        *args,
        *ports,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    pids: list[int] = []
    try:
        assert proc.stdout is not None
        for _ in range(3):
            found = await read_until(proc.stdout, r"broker broker-a n\d pid (\d+) on ", 30)
            pids.append(int(found.group(1)))
        group = await read_until(proc.stdout, GROUP.replace(r"[\d, ]*", r"\d+, \d+, \d+"), 60)
        assert group.group(1) == "1"
        master = int(group.group(2))
        assert master in pids
        os.kill(master, signal.SIGKILL)
        # the switch and the supervisor's line about the killed PID come in either order
        switched, _exited = await read_all(
            proc.stdout,
            [GROUP.replace(r"(\d+), master", "(2), master"), rf"pid {master} exited \(-9\)"],
            30,
        )
        assert int(switched.group(2)) in set(pids) - {master}
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 60) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert not [pid for pid in pids if alive(pid)]
    assert identities(tmp_path) == [f"DefaultCluster#broker-a#{i}" for i in (1, 2, 3)]


def identities(root: Path) -> list[str]:
    return sorted(p.read_text() for p in root.glob("broker-a-n*/brokerIdentity"))
