"""``rocketq controller -c`` and ``rocketq namesrv -c`` with ``enableControllerInNamesrv=true``,
as real processes started from the keys of RocketMQ's own sample files
(distribution/conf/controller/...), on ports the test allocated. A controller's port must be
in the peers list before it starts, so it is picked: a process that exits because a picked
port was taken meanwhile is started again on fresh ports (START_ATTEMPTS in all)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import urllib.request
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest

from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.response_code import ResponseCode
from rocketq.testing.broker_process import PORT_TAKEN_LINE
from rocketq.testing.cli_process import CLI_PROGRAM, read_until
from rocketq.testing.controller_group import START_ATTEMPTS, free_ports, peers_text
from rocketq.testing.wait import until

pytestmark = pytest.mark.timeout(60)
WAIT_S = 20.0
CONTROLLER_GET_METADATA_INFO = 1005


@asynccontextmanager
async def cli_process(
    args: list[str], stderr_path: Path
) -> AsyncIterator[asyncio.subprocess.Process]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    stderr = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-c", CLI_PROGRAM, *args, stdout=asyncio.subprocess.PIPE,
            stderr=stderr, env=env,
        )  # fmt: skip
    finally:
        os.close(stderr)  # the child holds its own copy
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def boot_line(
    proc: asyncio.subprocess.Process, pattern: str, stderr_path: Path
) -> re.Match[str] | None:
    """The boot line's match; None if the process ended because a port it was given is taken
    (pick fresh ports); AssertionError if it ended for another reason."""
    assert proc.stdout is not None
    try:
        return await read_until(proc.stdout, pattern, WAIT_S)
    except AssertionError:
        async with asyncio.timeout(WAIT_S):
            await proc.wait()
        if PORT_TAKEN_LINE.search(await asyncio.to_thread(stderr_path.read_text)):
            return None
        raise


def retries() -> range:
    """The attempts of a test whose ports are picked (for/else: the else fails the test)."""
    return range(START_ATTEMPTS)


async def stop(proc: asyncio.subprocess.Process) -> int:
    proc.send_signal(signal.SIGTERM)
    async with asyncio.timeout(WAIT_S):
        return await proc.wait()


async def invoke(addr: str, request: RemotingCommand) -> RemotingCommand:
    async with RemotingClient() as client:
        return await client.invoke(addr, request, WAIT_S)


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=WAIT_S) as response:
        text: str = response.read().decode()
    return text


def write_conf(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


async def test_a_standalone_controller_boots_leads_and_refuses_what_it_does_not_serve(
    tmp_path: Path,
) -> None:
    for _ in retries():
        (port,) = free_ports(1)
        conf = write_conf(
            tmp_path / "controller-standalone.conf",
            "controllerDLegerGroup = group1\n"
            f"controllerDLegerPeers = n0-127.0.0.1:{port}\n"
            "controllerDLegerSelfId = n0\n"
            f"controllerStorePath = {tmp_path / 'store'}\n",
        )
        stderr = tmp_path / "stderr"
        async with cli_process(["controller", "-c", str(conf)], stderr) as proc:
            pattern = f"boot success. n0 of group group1 .*:{port}"
            if await boot_line(proc, pattern, stderr) is not None:
                await a_standalone_controller_leads_and_refuses(proc, port, stderr)
                break
    else:
        raise AssertionError(f"no free port in {START_ATTEMPTS} picks")
    assert (tmp_path / "store" / "raft-n0" / "hardstate").exists()


async def a_standalone_controller_leads_and_refuses(
    proc: asyncio.subprocess.Process, port: int, stderr: Path
) -> None:
    assert await until(lambda: "leader in term" in stderr.read_text(), WAIT_S)
    request = RemotingCommand.create_request(CONTROLLER_GET_METADATA_INFO)
    response = await invoke(f"127.0.0.1:{port}", request)
    assert response.code == ResponseCode.SUCCESS
    assert response.ext_fields["controllerLeaderAddress"] == f"127.0.0.1:{port}"
    epoch_cache = RemotingCommand.create_request(RequestCode.GET_BROKER_EPOCH_CACHE)
    response = await invoke(f"127.0.0.1:{port}", epoch_cache)  # a broker's request
    assert response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
    assert await stop(proc) == 0


async def test_jraft_is_refused_in_one_line(tmp_path: Path) -> None:
    conf = write_conf(tmp_path / "c.conf", "controllerType = jRaft\n")
    async with cli_process(["controller", "-c", str(conf)], tmp_path / "stderr") as proc:
        async with asyncio.timeout(WAIT_S):
            assert await proc.wait() == 1
    lines = (tmp_path / "stderr").read_text().strip().splitlines()
    assert lines == ["Error: controllerType=jRaft is not supported: use DLedger (rocketq's Raft)"]


async def test_three_controllers_from_the_cluster_3n_files_elect_a_leader(tmp_path: Path) -> None:
    stderrs = [tmp_path / f"n{i}.stderr" for i in range(3)]

    def leader_elected() -> bool:
        return any(": leader in term" in path.read_text() for path in stderrs)

    for _ in retries():
        peers = peers_text(free_ports(3))
        async with AsyncExitStack() as stack:
            procs = []
            for i in range(3):
                conf = write_conf(
                    tmp_path / f"controller-n{i}.conf",  # cluster-3n-independent/controller-n<i>
                    f"controllerDLegerGroup = group1\ncontrollerDLegerPeers = {peers}\n"
                    f"controllerDLegerSelfId = n{i}\ncontrollerStorePath = {tmp_path / 'store'}\n",
                )
                args = ["controller", "-c", str(conf)]
                procs.append(await stack.enter_async_context(cli_process(args, stderrs[i])))
            booted = [
                await boot_line(p, "boot success", e) for p, e in zip(procs, stderrs, strict=True)
            ]
            if None in booted:
                continue  # a picked port was taken: all three again on fresh ones
            assert await until(leader_elected, WAIT_S)
            for proc in procs:
                assert await stop(proc) == 0
            break
    else:
        raise AssertionError(f"no free ports in {START_ATTEMPTS} picks")
    for i in range(3):  # one store path, a directory per peer (as DLedger's dledger-<selfId>)
        assert (tmp_path / "store" / f"raft-n{i}" / "hardstate").exists()


async def test_a_name_server_with_enable_controller_in_namesrv_runs_both(tmp_path: Path) -> None:
    for _ in retries():  # the name server's port is 0 (read from its boot line)
        controller_port, metrics_port = free_ports(2)
        conf = write_conf(
            tmp_path / "namesrv.conf",  # RocketMQ's quick-start/namesrv.conf, ports and store
            "listenPort = 0\nenableControllerInNamesrv = true\n"
            f"metricsExporterType = PROM\nmetricsPromExporterPort = {metrics_port}\n"
            "controllerDLegerGroup = group1\n"
            f"controllerDLegerPeers = n0-127.0.0.1:{controller_port}\n"
            f"controllerDLegerSelfId = n0\ncontrollerStorePath = {tmp_path / 'store'}\n",
        )
        stderr = tmp_path / "stderr"
        async with cli_process(["namesrv", "-c", str(conf)], stderr) as proc:
            booted = r"Name Server boot success\. listening on [^:]*:(\d+), metrics: (\S+)"
            found = await boot_line(proc, booted, stderr)
            if found is not None:
                assert found.group(2).endswith(f":{metrics_port}/metrics")  # the URL it serves
                ports = (int(found.group(1)), controller_port, metrics_port)
                await a_name_server_serves_both(proc, *ports)
                break
    else:
        raise AssertionError(f"no free ports in {START_ATTEMPTS} picks")


async def a_name_server_serves_both(
    proc: asyncio.subprocess.Process,
    namesrv_port: int,
    controller_port: int,
    metrics_port: int,
) -> None:
    # the controller's boot line came first: its port is checked by the request below
    route = RemotingCommand.create_request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "X"})
    assert (await invoke(f"127.0.0.1:{namesrv_port}", route)).code == (ResponseCode.TOPIC_NOT_EXIST)
    request = RemotingCommand.create_request(CONTROLLER_GET_METADATA_INFO)
    response = await invoke(f"127.0.0.1:{controller_port}", request)
    assert response.code == ResponseCode.SUCCESS
    assert response.ext_fields["group"] == "group1"
    # one /metrics: the name server's series and its controller's
    text = await asyncio.to_thread(scrape, f"http://127.0.0.1:{metrics_port}/metrics")
    assert "rocketmq_namesrv_topics" in text
    assert f'rocketmq_role{{address="127.0.0.1:{controller_port}",group="group1"' in text
    assert await stop(proc) == 0
