"""Where the broker's (or the load generator's) CPU goes in pop_bench's pipelined pop+ack
phase (py-spy), as bench/broker_profile.py does for the send and pull phases.

    PYTHONPATH=src .venv/bin/python bench/pop_profile.py --backlog 300000
    PYTHONPATH=src .venv/bin/python bench/pop_profile.py --backlog 300000 --load

Starts ``rocketq broker`` as pop_bench.py does, fills the backlog, attaches ``py-spy record``
to the broker (``--load``: to this process, the load generator), drains the backlog by pops
of 32 each batch-acked with invokeAsync (``pop_bench.drain_pop(pipelined=True)``) and prints
the functions with the most samples (``self`` and ``total``, in percent).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from broker_bench import batch_rocketq
from broker_profile import py_spy, summarize
from figures import Plan, Probe
from pop_bench import CONF, drain_pop

from rocketq.remoting import event_loop
from rocketq.remoting.client import RemotingClient


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backlog", type=int, default=300_000)
    ap.add_argument("--load", action="store_true", help="profile the load generator instead")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--rate", type=int, default=250, help="py-spy samples a second")
    args = ap.parse_args()
    plan = Plan(1024, (1,), 0, 0, args.backlog, 60.0)
    spy = py_spy()
    with (
        tempfile.TemporaryDirectory(prefix="pop-profile-") as d,
        peers.rocketq_broker(d, CONF) as server,
    ):
        out = os.path.join(d, "profile.txt")
        pid = os.getpid() if args.load else server.proc.pid
        cmd = [spy, "record", "-p", str(pid), "-r", str(args.rate), "--nonblocking"]

        def recorder() -> subprocess.Popen[bytes]:
            return subprocess.Popen([*cmd, "--format", "raw", "-o", out], stdout=subprocess.DEVNULL)

        async def run() -> None:
            addr = f"127.0.0.1:{server.port}"
            probe = Probe(server.cpu_s)
            async with RemotingClient() as client:
                built = await batch_rocketq(client, server, plan, probe)
                rec = recorder()
                try:
                    fig = await drain_pop(
                        client, addr, built.messages + 1, plan, probe, acks=True, pipelined=True
                    )
                finally:
                    rec.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                    rec.wait(60)
                print(fig.row())

        event_loop.run(run())
        summarize(Path(out).read_text(), args.top)


if __name__ == "__main__":
    main()
