"""ACL cost: the broker's check per request, and sends through a broker with ACL off and on.

    .venv/bin/python bench/acl_bench.py [--count 4000] [--senders 8]

1. ``check``: ``parse`` + ``PlainPermissionManager.validate`` of one signed SEND_MESSAGE_V2 and
   one signed HEART_BEAT, in process (no network), microseconds per request.
2. ``send``: ``--senders`` concurrent senders, each waiting for its reply, 1 KiB bodies, to a
   broker on 127.0.0.1: ACL off and unsigned, ACL off and signed (the client's signing cost
   alone), ACL on and signed, interleaved ``--repeat`` times; TPS and p99 of a request, then
   the median TPS. Each run is bounded by ``--count`` and 60 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rocketq.broker.acl.access_resource import parse
from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.remoting.acl import AclClientRPCHook, sign_request
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing import run_broker
from rocketq.testing.wire import heartbeat, send_request

ACCOUNT = ("BenchAK01", "BenchSK01")
TIME_CAP_S = 60.0
BODY = b"x" * 1024


def write_acl(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    account = {"accessKey": ACCOUNT[0], "secretKey": ACCOUNT[1], "defaultTopicPerm": "PUB|SUB"}
    account["defaultGroupPerm"] = "SUB"
    path.write_text(yaml.safe_dump({"accounts": [account]}))


def bench_check(tmp: Path, rounds: int) -> None:
    path = tmp / "check" / "plain_acl.yml"
    write_acl(path)
    manager = PlainPermissionManager(path)
    manager.load()
    for name, cmd in (
        ("SEND_MESSAGE_V2", send_request("BenchTopic", BODY, code=RequestCode.SEND_MESSAGE_V2)),
        ("HEART_BEAT", heartbeat("127.0.0.1@bench", "BenchGroup", "BenchTopic")),
    ):
        sign_request(cmd, *ACCOUNT)
        start = time.perf_counter()
        for _ in range(rounds):
            manager.validate(parse(cmd, "127.0.0.1:50000"), cmd)
        per_us = (time.perf_counter() - start) / rounds * 1e6
        print(f"check {name:16s} {per_us:7.1f} us/request over {rounds} requests")


async def bench_send(
    tmp: Path, label: str, acl: bool, sign: bool, count: int, senders: int
) -> None:
    root = Path(tempfile.mkdtemp(prefix=label.replace(" ", "-").replace(",", ""), dir=tmp))
    if acl:
        write_acl(root / "config" / "plain_acl.yml")
    hook = AclClientRPCHook(*ACCOUNT) if sign else None
    async with run_broker(root, acl_enable=acl) as broker, RemotingClient(rpc_hook=hook) as client:
        latencies: list[float] = []
        deadline = time.monotonic() + TIME_CAP_S

        async def sender(n: int) -> None:
            for i in range(n):
                if time.monotonic() > deadline:
                    return
                cmd = send_request(
                    "BenchTopic", BODY, queue_id=i % 4, code=RequestCode.SEND_MESSAGE_V2
                )
                t0 = time.perf_counter()
                response = await client.invoke(broker.broker_addr, cmd, 10.0)
                latencies.append(time.perf_counter() - t0)
                if response.code != ResponseCode.SUCCESS:
                    raise RuntimeError(f"{label}: {response.code} {response.remark}")

        await sender(50)  # warm up: topic creation, connection
        latencies.clear()
        start = time.perf_counter()
        await asyncio.gather(*(sender(count // senders) for _ in range(senders)))
        elapsed = time.perf_counter() - start
    p99 = statistics.quantiles(latencies, n=100)[98] * 1000
    tps = len(latencies) / elapsed
    print(f"send {label:22s} {tps:8.0f} msg/s  p99 {p99:6.2f} ms  ({len(latencies)} sends)")
    return tps


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=4000)
    parser.add_argument("--senders", type=int, default=8)
    parser.add_argument("--check-rounds", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="acl-bench-") as tmp_dir:
        tmp = Path(tmp_dir)
        bench_check(tmp, args.check_rounds)
        runs: dict[str, list[float]] = {}
        for _ in range(args.repeat):  # interleaved: a busy moment hits every configuration
            for label, acl, sign in (
                ("acl off, unsigned", False, False),
                ("acl off, signed", False, True),
                ("acl on, signed", True, True),
            ):
                tps = await bench_send(tmp, label, acl, sign, args.count, args.senders)
                runs.setdefault(label, []).append(tps)
        for label, values in runs.items():
            print(f"median {label:20s} {statistics.median(values):8.0f} msg/s")


if __name__ == "__main__":
    asyncio.run(main())
