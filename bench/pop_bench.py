"""POP benchmark (issue 18): pop+ack against pull on the same backlog, and redelivery lag.

    .venv/bin/python bench/pop_bench.py              # about 2 minutes
    .venv/bin/python bench/pop_bench.py --quick      # smoke run
    .venv/bin/python bench/pop_bench.py --calls 20000  # CPU a pop / batch ack, in process

The broker runs in its own process (``rocketq broker``, no name server), as in broker_bench:

- ``batch 32``: 8 senders build a backlog of ``--backlog`` messages in 4 queues.
- ``pull 32``: 4 consumers (one per queue) drain it by PULL_MESSAGE, 32 a request.
- ``pop+ack 32``: 4 consumers (queue -1: the broker picks) drain the same backlog with a new
  group by POP_MESSAGE, 32 a request, each reply acked by one BATCH_ACK_MESSAGE; the RT
  column is pop + ack.
- ``pop+ack 32 pipe``: the same with another new group, each consumer's batch ack sent
  without waiting for it before its next pop (one ack in flight a consumer), as RocketMQ's
  clients ack: the pop's round trip no longer waits for the ack's.
- ``pop 32``: the same with a fourth group and no ack (the ack's share of the cost).
- ``redeliver``: ``--redeliver`` messages are popped with a ``--invisible-ms`` invisible time
  and not acked; a consumer then pops with long polling and acks. The lag of each message is
  its receipt time minus its handle's expiry (pop time + invisible time); target p99 <= 1 s.

Printed: TPS, RTs, the broker's CPU per message, and pop+ack / pull.
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from broker_bench import batch_rocketq, drain_rocketq, print_table, send_command
from figures import BATCH, QUEUES, TIMEOUT_S, Figures, Plan, Probe
from pop_calls import measure_calls, print_calls

from rocketq.remoting import event_loop
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.pop_headers import INIT_MODE_MIN, PopMessageRequestHeader
from rocketq.response_code import ResponseCode
from rocketq.testing.pop import Popped, batch_ack, batch_ack_request, popped_handles, popped_of

BROKER = "broker-a"
CONF = {"autoCreateTopicEnable": "true", "brokerName": BROKER}


def pop_command(group: str, topic: str, invisible_ms: int, poll_ms: int) -> RemotingCommand:
    """A POP of 32 from any queue; a new group starts at the queues' first offset."""
    header = PopMessageRequestHeader(
        consumer_group=group, topic=topic, queue_id=-1, max_msg_nums=BATCH,
        invisible_time=invisible_ms, poll_time=poll_ms, born_time=int(time.time() * 1000),
        init_mode=INIT_MODE_MIN,
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.POP_MESSAGE, header.to_ext_fields())


async def pop_reply(
    client: RemotingClient, addr: str, group: str, topic: str, invisible_ms: int, poll_ms: int
) -> RemotingCommand:
    r = await client.invoke(addr, pop_command(group, topic, invisible_ms, poll_ms), TIMEOUT_S)
    ok = (ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.POLLING_TIMEOUT)
    if r.code not in ok:
        raise RuntimeError(f"pop answered {r.code}: {r.remark}")
    return r


async def pop(
    client: RemotingClient, addr: str, group: str, topic: str, invisible_ms: int, poll_ms: int
) -> list[Popped]:
    return popped_of(await pop_reply(client, addr, group, topic, invisible_ms, poll_ms), BROKER)


async def drain_pop(
    client: RemotingClient,
    addr: str,
    backlog: int,
    plan: Plan,
    probe: Probe,
    *,
    acks: bool,
    pipelined: bool = False,
) -> Figures:
    """A new group drains the backlog by pops of 32, each reply batch-acked when ``acks``:
    the ack awaited before the next pop, or, ``pipelined``, sent and awaited only before the
    consumer's next ack (one ack in flight a consumer, as RocketMQ's clients ack: the
    push consumer's pop mode acks asynchronously while it pops on)."""
    group = "BenchPopPipeCG" if pipelined else "BenchPopCG" if acks else "BenchPopNoAckCG"
    phase = "pop+ack 32 pipe" if pipelined else "pop+ack 32" if acks else "pop 32"
    fig = Figures("rocketq", phase)
    probe.start()
    start = time.perf_counter()
    deadline = start + plan.cap_s * 3

    async def acked(handles: list[str]) -> None:
        check(await batch_ack(client, addr, BROKER, group, "BenchBacklog", handles))

    def check(r: RemotingCommand) -> None:
        if r.code != ResponseCode.SUCCESS:
            raise RuntimeError(f"batch ack answered {r.code}: {r.remark}")

    async def consume() -> None:
        empty = 0
        in_flight: asyncio.Future[RemotingCommand] | None = None
        while time.perf_counter() < deadline and fig.messages < backlog and empty < 3:
            t0 = time.perf_counter()
            # the messages decoded as the client does (popped_messages), their handles kept
            got = popped_handles(
                await pop_reply(client, addr, group, "BenchBacklog", 600_000, 0), BROKER
            )
            if not got:
                empty += 1  # the backlog is drained (or the broker has nothing visible)
                continue
            empty = 0
            if pipelined:  # the previous ack's answer, then this one sent (invokeAsync)
                if in_flight is not None:
                    check(await in_flight)
                request = batch_ack_request(BROKER, group, "BenchBacklog", got)
                in_flight = await client.invoke_async(addr, request, TIMEOUT_S)
            elif acks:
                await acked(got)
            fig.rts_ms.append((time.perf_counter() - t0) * 1000)
            fig.messages += len(got)
        if in_flight is not None:
            check(await in_flight)

    await asyncio.gather(*(consume() for _ in range(QUEUES)))
    fig.seconds = time.perf_counter() - start
    probe.stop(fig)
    return fig


def syscalls(pid: int, since: tuple[int, int] = (0, 0)) -> tuple[int, int]:
    """The read and write syscalls ``pid`` has made (``/proc/<pid>/io``), less ``since``;
    (0, 0) where the file cannot be read."""
    try:
        text = Path(f"/proc/{pid}/io").read_text()
    except OSError:
        return (0, 0)
    fields = dict(line.split(": ") for line in text.splitlines() if ": " in line)
    return int(fields["syscr"]) - since[0], int(fields["syscw"]) - since[1]


async def redelivery(
    client: RemotingClient, addr: str, count: int, invisible_ms: int, cap_s: float
) -> Figures:
    """Pop ``count`` messages without acking; the lag of each is receipt - handle expiry."""
    fig = Figures("rocketq", "redeliver")
    topic, group = "BenchRedeliver", "BenchRedeliverCG"
    for seq in range(count):
        cmd = send_command(topic, seq % QUEUES, struct.pack(">q", seq) + b"x" * 56)
        r = await client.invoke(addr, cmd, TIMEOUT_S)
        assert r.code == ResponseCode.SUCCESS, r.remark
    expiry: dict[int, int] = {}
    deadline = time.perf_counter() + cap_s
    while len(expiry) < count and time.perf_counter() < deadline:
        for p in await pop(client, addr, group, topic, invisible_ms, 0):
            e = p.extra
            expiry[struct.unpack_from(">q", p.msg.body)[0]] = e.pop_time + e.invisible_time
    lags: dict[int, float] = {}
    revived: dict[int, float] = {}  # the retry message's store time - the handle's expiry
    start = time.perf_counter()

    async def consume() -> None:
        while len(lags) < len(expiry) and time.perf_counter() < deadline:
            got = await pop(client, addr, group, topic, 60_000, 1000)
            now_ms = time.time() * 1000
            for p in got:
                seq = struct.unpack_from(">q", p.msg.body)[0]
                if seq in expiry and seq not in lags:
                    lags[seq] = now_ms - expiry[seq]
                    revived[seq] = p.msg.store_timestamp - expiry[seq]
            if got:
                await batch_ack(client, addr, BROKER, group, topic, [p.handle for p in got])

    await asyncio.gather(*(consume() for _ in range(QUEUES)))
    fig.seconds = time.perf_counter() - start
    fig.messages = len(lags)
    fig.rts_ms = list(lags.values())  # here: lag after the invisible time, ms
    missing = len(expiry) - len(lags)
    print(f"redeliver: {len(expiry)} popped without ack, {len(lags)} came back, {missing} not "
          f"within the cap; lags below are receipt - (pop time + invisible time)")  # fmt: skip
    if revived:
        put = sorted(revived.values())
        print(f"redeliver: of which the revive (retry message stored - expiry): p50 "
              f"{put[len(put) // 2]:.0f} ms, p99 {put[int(len(put) * 0.99)]:.0f} ms, max "
              f"{put[-1]:.0f} ms")  # fmt: skip
    return fig


async def run(server: peers.Server, plan: Plan, args: argparse.Namespace) -> list[Figures]:
    addr = f"127.0.0.1:{server.port}"
    probe = Probe(server.cpu_s)
    async with RemotingClient() as client:
        built = await batch_rocketq(client, server, plan, probe)
        backlog = built.messages + 1  # and the message that created the topic
        cpu = time.process_time()
        pulled = await drain_rocketq(client, addr, backlog, plan, probe)
        pulled.phase = "pull 32"
        cpu_pull, cpu = time.process_time() - cpu, time.process_time()
        calls = syscalls(server.proc.pid)
        popped = await drain_pop(client, addr, backlog, plan, probe, acks=True)
        cpu_pop = time.process_time() - cpu
        calls_pop, calls = syscalls(server.proc.pid, calls), syscalls(server.proc.pid)
        piped = await drain_pop(client, addr, backlog, plan, probe, acks=True, pipelined=True)
        calls_piped = syscalls(server.proc.pid, calls)
        print(f"broker read/write syscalls a pop of 32 and its ack: pop+ack 32 "
              f"{calls_pop[0] * BATCH / popped.messages:.2f}/"
              f"{calls_pop[1] * BATCH / popped.messages:.2f}, pop+ack 32 pipe "
              f"{calls_piped[0] * BATCH / piped.messages:.2f}/"
              f"{calls_piped[1] * BATCH / piped.messages:.2f}")  # fmt: skip
        unacked = await drain_pop(client, addr, backlog, plan, probe, acks=False)
        # the load generator shares the machine's cores with the broker: its own cost
        print(f"load generator CPU us/msg: pull 32 {cpu_pull / pulled.messages * 1e6:.1f}, "
              f"pop+ack 32 {cpu_pop / popped.messages * 1e6:.1f}")  # fmt: skip
        lag = await redelivery(client, addr, args.redeliver, args.invisible_ms, plan.cap_s * 3)
    return [built, pulled, popped, piped, unacked, lag]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small counts (smoke run)")
    ap.add_argument("--backlog", type=int, default=100_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--redeliver", type=int, default=2_000)
    ap.add_argument("--invisible-ms", type=int, default=2_000)
    ap.add_argument(
        "--calls", type=int, metavar="COUNT", help="only the CPU a pop and an ack cost, in process"
    )
    args = ap.parse_args()
    if args.calls:
        print_calls(*event_loop.run(measure_calls(args.calls)))
        return
    if args.quick:
        args.backlog, args.redeliver = 3_200, 200
    plan = Plan(args.size, (1,), 0, 0, args.backlog, 20.0)
    kind = "uvloop" if event_loop.uvloop_wanted() and event_loop.uvloop_installed() else "asyncio"
    print(f"event loop: {kind}; backlog {args.backlog} x {args.size} B in {QUEUES} queues",
          flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-pop-") as d, peers.rocketq_broker(d, CONF) as s:
        rows = event_loop.run(run(s, plan, args))
    print_table(rows)
    pulled, popped, piped, unacked, lag = rows[1], rows[2], rows[3], rows[4], rows[5].row()

    def ratio(fig: Figures) -> float:
        return fig.tps / pulled.tps if pulled.tps else 0.0

    print(f"pop+ack / pull, 32 a request: {ratio(popped):.2f}x, ack awaited before the next "
          f"pop; {ratio(piped):.2f}x, ack pipelined (target >= 0.7x: "
          f"{'met' if ratio(piped) >= 0.7 else 'MISSED'}); pop alone / pull: "
          f"{ratio(unacked):.2f}x")  # fmt: skip
    print(f"redelivery lag after the invisible time: p50 {lag['rt_p50_ms']} ms, p99 "
          f"{lag['rt_p99_ms']} ms, max {lag['rt_max_ms']} ms (target p99 <= 1000 ms: "
          f"{'met' if lag['rt_p99_ms'] <= 1000 else 'MISSED'})")  # fmt: skip


if __name__ == "__main__":
    main()
