"""A broker in its own process, for tests that kill it: prints ``{"broker": "ip:port"}``, then
serves until SIGTERM (clean shutdown) or SIGKILL (a crash).

python -m tests.e2e.broker_process --store DIR --namesrv ADDR [--set key=value ...]

``--set`` overrides a BrokerConfig field (ints and booleans are converted).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from typing import Any

from rocketq.testing.broker import run_broker


def value(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.lstrip("-").isdigit() else text


async def serve(args: argparse.Namespace) -> None:
    overrides = {k: value(v) for k, v in (item.split("=", 1) for item in args.set)}
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with run_broker(args.store, namesrv_addr=args.namesrv, **overrides) as broker:
        sys.stdout.write(json.dumps({"broker": broker.broker_addr}) + "\n")
        sys.stdout.flush()
        await stop.wait()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", required=True)
    parser.add_argument("--namesrv", required=True)
    parser.add_argument("--set", action="append", default=[])
    asyncio.run(serve(parser.parse_args(argv)))


if __name__ == "__main__":
    main(sys.argv[1:])
