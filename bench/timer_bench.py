"""Timer benchmark (issue 18): lateness of timer messages, the broker's RSS with pending
timers, and a long-span check (timers delivered once, none early).

    .venv/bin/python bench/timer_bench.py lateness             # 100k timers at 1000 and 100 ms
    .venv/bin/python bench/timer_bench.py rss --count 1000000  # RssAnon at 0 and N pending
    .venv/bin/python bench/timer_bench.py span --seconds 3600  # make timer-hour

Each phase runs a broker in its own process (``rocketq broker``, no name server) with the
``timerPrecisionMs`` it measures. Timers are single SEND_MESSAGE_V2 requests carrying
``TIMER_DELIVER_MS`` (32 in flight), each body holding its sequence number and due time.

- ``lateness``: ``--count`` timers due over ``--window`` seconds, the first due
  ``--lead`` seconds after the puts start (so all are pending before the first is due). 4
  long-polling pull consumers record receipt - due: p50/p99/max and how many came early
  (target: p99 <= the precision, none early).
- ``rss``: RssAnon of the broker (as broker_bench reads it) with no timer, then with
  ``--count`` timers due a day ahead, the puts capped at ``--cap`` seconds; if the cap cuts the
  puts, the per-timer growth is extrapolated to 1 M and printed as such.
- ``span``: ``--count`` timers due evenly up to ``--seconds`` ahead; waits for the last and
  checks each was received exactly once and none before its due time (exit status 1 if not).
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peers
from figures import BATCH, QUEUES, TIMEOUT_S, Figures

from rocketq.client.aio.api import send_v2_ext_fields
from rocketq.common.message_const import PROPERTY_TIMER_DELIVER_MS, PROPERTY_TIMER_DEQUEUE_MS
from rocketq.common.message_decoder import decode_messages
from rocketq.common.properties import properties_to_string
from rocketq.common.pull_sys_flag import FLAG_SUSPEND
from rocketq.remoting import event_loop
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import PullMessageRequestHeader, SendMessageRequestHeader
from rocketq.response_code import ResponseCode

TOPIC = "BenchTimer"
IN_FLIGHT = 32
BODY = struct.Struct(">qq")  # sequence number, due time (epoch ms)


def conf(precision_ms: int) -> dict[str, str]:
    return {"autoCreateTopicEnable": "true", "timerPrecisionMs": str(precision_ms)}


def timer_command(queue_id: int, seq: int, due_ms: int | None) -> RemotingCommand:
    props = {"WAIT": "true"}
    if due_ms is not None:
        props[PROPERTY_TIMER_DELIVER_MS] = str(due_ms)
    header = SendMessageRequestHeader(
        producer_group="BenchTimerPG", topic=TOPIC, default_topic="TBW102",
        default_topic_queue_nums=QUEUES, queue_id=queue_id, sys_flag=0,
        born_timestamp=int(time.time() * 1000), flag=0, properties=properties_to_string(props),
    )  # fmt: skip
    body = BODY.pack(seq, due_ms or 0) + b"x" * 48
    return RemotingCommand.create_request(
        RequestCode.SEND_MESSAGE_V2, send_v2_ext_fields(header), body
    )


def pull_command(queue_id: int, offset: int) -> RemotingCommand:
    header = PullMessageRequestHeader(
        consumer_group="BenchTimerCG", topic=TOPIC, queue_id=queue_id, queue_offset=offset,
        max_msg_nums=BATCH, sys_flag=0x4 | FLAG_SUSPEND, commit_offset=0,
        suspend_timeout_millis=1000, sub_version=0, subscription="*",
    )  # fmt: skip
    return RemotingCommand.create_request(RequestCode.PULL_MESSAGE, header.to_ext_fields())


async def put_timers(
    client: RemotingClient, addr: str, count: int, due_of: Callable[[int], int], cap_s: float
) -> Figures:
    """``count`` timers (or as many as ``cap_s`` allows), 32 in flight."""
    fig = Figures("rocketq", "put")
    seqs = iter(range(count))
    start = time.perf_counter()
    deadline = start + cap_s

    async def sender() -> None:
        for seq in seqs:
            if time.perf_counter() > deadline:
                return
            t0 = time.perf_counter()
            r = await client.invoke(addr, timer_command(seq % QUEUES, seq, due_of(seq)), TIMEOUT_S)
            if r.code != ResponseCode.SUCCESS:
                raise RuntimeError(f"send answered {r.code}: {r.remark}")
            fig.rts_ms.append((time.perf_counter() - t0) * 1000)
            fig.messages += 1

    await asyncio.gather(*(sender() for _ in range(IN_FLIGHT)))
    fig.seconds = time.perf_counter() - start
    return fig


class Receiver:
    """4 long-polling pull loops; ``seen`` counts receipts per sequence number and
    ``late_ms`` holds receipt - due of each timer (the plain message that created the topic,
    due 0, is skipped)."""

    def __init__(self, client: RemotingClient, addr: str) -> None:
        self.client, self.addr = client, addr
        self.seen: dict[int, int] = {}
        self.late_ms: list[float] = []
        self.dequeued_ms: list[float] = []  # the timer's TIMER_DEQUEUE_MS - due
        self.stored_ms: list[float] = []  # the delivered copy's store time - due
        self._stop = False
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.ensure_future(self._loop(q)) for q in range(QUEUES)]

    async def stop(self) -> None:
        self._stop = True
        await asyncio.gather(*self._tasks)

    async def _loop(self, qid: int) -> None:
        offset = 0
        while not self._stop:
            r = await self.client.invoke(self.addr, pull_command(qid, offset), TIMEOUT_S)
            if r.code == ResponseCode.SUCCESS:
                now_ms = time.time() * 1000
                for msg in decode_messages(r.body):
                    seq, due = BODY.unpack_from(msg.body)
                    if due:
                        self.seen[seq] = self.seen.get(seq, 0) + 1
                        self.late_ms.append(now_ms - due)
                        dequeued = msg.properties.get(PROPERTY_TIMER_DEQUEUE_MS)
                        if dequeued:
                            self.dequeued_ms.append(int(dequeued) - due)
                        self.stored_ms.append(msg.store_timestamp - due)
            if "nextBeginOffset" in r.ext_fields:
                offset = int(r.ext_fields["nextBeginOffset"])

    async def wait_for(self, count: int, deadline: float) -> None:
        while len(self.seen) < count and time.time() < deadline:  # noqa: ASYNC110 -- bounded wait for the last timers
            await asyncio.sleep(0.2)


async def create_topic(client: RemotingClient, addr: str) -> None:
    for q in range(QUEUES):  # one plain message per queue: the topic and its queues exist
        r = await client.invoke(addr, timer_command(q, -1, None), TIMEOUT_S)
        assert r.code == ResponseCode.SUCCESS, r.remark


def percentiles(values: list[float]) -> str:
    v = sorted(values) or [0.0]
    p = [v[min(len(v) - 1, int(len(v) * q))] for q in (0.5, 0.99)]
    return f"p50 {p[0]:.0f} ms, p99 {p[1]:.0f} ms, max {v[-1]:.0f} ms"


async def lateness(server: peers.Server, precision: int, args: argparse.Namespace) -> bool:
    addr = f"127.0.0.1:{server.port}"
    async with RemotingClient() as client:
        await create_topic(client, addr)
        receiver = Receiver(client, addr)
        receiver.start()
        first = int(time.time() * 1000) + args.lead * 1000
        step = args.window * 1000 / args.count
        put = await put_timers(
            client, addr, args.count, lambda s: first + int(s * step), args.lead - 2
        )
        pending = put.messages - len(receiver.seen)
        print(f"precision {precision} ms: {put.messages} timers put in {put.seconds:.1f} s "
              f"({put.tps:.0f}/s), {pending} pending when the puts ended", flush=True)  # fmt: skip
        last = first + int(put.messages * step)
        await receiver.wait_for(put.messages, last / 1000 + 60)
        await receiver.stop()
    early = sum(1 for x in receiver.late_ms if x < 0)
    dup = sum(1 for n in receiver.seen.values() if n > 1)
    late = sorted(receiver.late_ms) or [0.0]
    p99 = late[min(len(late) - 1, int(len(late) * 0.99))]
    print(f"precision {precision} ms: {len(receiver.seen)}/{put.messages} received, "
          f"lateness (receipt - due) {percentiles(receiver.late_ms)}, {early} early, "
          f"{dup} twice; target p99 <= {precision} ms, none early: "
          f"{'met' if p99 <= precision and early == 0 else 'MISSED'}", flush=True)  # fmt: skip
    print(f"precision {precision} ms: of which the timer's (TIMER_DEQUEUE_MS - due) "
          f"{percentiles(receiver.dequeued_ms)}; stored - due "
          f"{percentiles(receiver.stored_ms)}", flush=True)  # fmt: skip
    return early == 0 and dup == 0 and len(receiver.seen) == put.messages


async def rss(server: peers.Server, args: argparse.Namespace) -> bool:
    addr = f"127.0.0.1:{server.port}"
    async with RemotingClient() as client:
        await create_topic(client, addr)
        await asyncio.sleep(2)
        base = server.rss_anon_mb()
        due = int(time.time() * 1000) + 86_400_000  # a day ahead, inside the default max delay
        put = await put_timers(client, addr, args.count, lambda s: due + s % 1000, args.cap)
        await asyncio.sleep(5)  # the enqueue moves the last ones into the timerlog
        after = server.rss_anon_mb()
    grown = after - base
    print(f"rss: {put.messages} timers put in {put.seconds:.1f} s ({put.tps:.0f}/s, the cap "
          f"{args.cap:.0f} s); RssAnon {base:.1f} MB with none, {after:.1f} MB with "
          f"{put.messages} pending: +{grown:.1f} MB", flush=True)  # fmt: skip
    if put.messages < 1_000_000 and put.messages:
        print(f"rss: EXTRAPOLATED linearly to 1 M pending: +{grown * 1e6 / put.messages:.1f} MB "
              f"(measured at {put.messages})")  # fmt: skip
    return True


async def span(server: peers.Server, args: argparse.Namespace) -> bool:
    addr = f"127.0.0.1:{server.port}"
    async with RemotingClient() as client:
        await create_topic(client, addr)
        receiver = Receiver(client, addr)
        receiver.start()
        now = int(time.time() * 1000)
        step = args.seconds * 1000 / args.count
        put = await put_timers(
            client, addr, args.count, lambda s: now + int((s + 1) * step), args.seconds
        )
        print(f"span: {put.messages} timers due over {args.seconds} s put in "
              f"{put.seconds:.1f} s", flush=True)  # fmt: skip
        await receiver.wait_for(put.messages, now / 1000 + args.seconds + 60)
        await asyncio.sleep(3)  # a duplicate would come right after the first delivery
        await receiver.stop()
    early = sum(1 for x in receiver.late_ms if x < 0)
    dup = sum(1 for n in receiver.seen.values() if n > 1)
    missing = put.messages - len(receiver.seen)
    ok = early == 0 and dup == 0 and missing == 0
    print(f"span {args.seconds} s: {len(receiver.seen)}/{put.messages} received, {missing} "
          f"missing, {dup} twice, {early} early; lateness {percentiles(receiver.late_ms)}: "
          f"{'OK' if ok else 'FAILED'}")  # fmt: skip
    return ok


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("phase", choices=("lateness", "rss", "span"))
    ap.add_argument("--count", type=int, help="timers (100000; rss 1000000; span 3600)")
    ap.add_argument("--precisions", default="1000,100", help="lateness: timerPrecisionMs list")
    ap.add_argument("--window", type=int, default=60, help="lateness: seconds the dues span")
    ap.add_argument("--lead", type=int, default=40, help="lateness: seconds to the first due")
    ap.add_argument("--cap", type=float, default=150.0, help="rss: seconds of puts at most")
    ap.add_argument("--seconds", type=int, default=3600, help="span: the last timer's delay")
    args = ap.parse_args()
    args.count = args.count or {"lateness": 100_000, "rss": 1_000_000, "span": 3600}[args.phase]
    ok = True
    lateness_phase = args.phase == "lateness"
    precisions = [int(p) for p in args.precisions.split(",")] if lateness_phase else [1000]
    for precision in precisions:
        with (
            tempfile.TemporaryDirectory(prefix="bench-timer-") as d,
            peers.rocketq_broker(d, conf(precision)) as server,
        ):
            if args.phase == "lateness":
                ok &= event_loop.run(lateness(server, precision, args))
            elif args.phase == "rss":
                ok &= event_loop.run(rss(server, args))
            else:
                ok &= event_loop.run(span(server, args))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
