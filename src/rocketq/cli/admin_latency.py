"""``rocketq admin`` send-latency commands: checkMsgSendRT (round robin over a topic's queues),
sendMsgStatus (to one broker, on the topic named after it) and clusterRT (each broker of a
cluster), as mqadmin's CheckMsgSendRTCommand, SendMsgStatusCommand and CLusterSendMsgRTCommand
time them: the wall time of each synchronous send, in milliseconds."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command
from rocketq.client import Message
from rocketq.common.message import MessageQueue
from rocketq.errors import RocketQError


@dataclass
class Timed:
    """One send: where it went, whether it was stored, how long it took."""

    queue: MessageQueue
    ok: bool
    rt_ms: float
    detail: str = ""


@dataclass
class Round:
    sends: list[Timed] = field(default_factory=list)

    def count(self, *, ok: bool) -> int:
        return sum(1 for t in self.sends if t.ok is ok)

    def avg_ms(self, skip_first: bool = False) -> float:
        """Average RT; CheckMsgSendRTCommand leaves the first (connecting) send out."""
        rts = [t.rt_ms for t in self.sends[1 if skip_first else 0 :]]
        return sum(rts) / len(rts) if rts else 0.0


async def _timed_sends(
    ctx: AdminContext, queues: list[MessageQueue], amount: int, size: int
) -> Round:
    """``amount`` sends of a ``size``-byte body, the i-th to ``queues[i % len(queues)]``."""
    body = b"a" * size
    done = Round()
    async with ctx.producer(f"PID_RT_{time.time_ns()}") as producer:
        for i in range(amount):
            mq = queues[i % len(queues)]
            start = time.perf_counter()
            try:
                result = await producer.send(Message(mq.topic, body), message_queue=mq)
                ok, detail = True, f"{result.status.name} msgId={result.msg_id}"
            except RocketQError as exc:
                ok, detail = False, str(exc)
            done.sends.append(Timed(mq, ok, (time.perf_counter() - start) * 1000, detail))
    return done


async def _write_queues(admin: AsyncAdminClient, topic: str) -> list[MessageQueue]:
    route = await admin.examine_topic_route_info(topic)
    return [
        MessageQueue(topic, q.broker_name, i)
        for q in sorted(route.queue_datas, key=lambda q: q.broker_name)
        for i in range(q.write_queue_nums)
    ]


@click.command("checkMsgSendRT")
@click.option("-t", "--topic", required=True)
@click.option("-a", "--amount", type=click.IntRange(min=2), default=100, show_default=True)
@click.option("-s", "--size", type=click.IntRange(min=1), default=128, show_default=True)
@admin_command
def check_msg_send_rt(ctx: AdminContext, topic: str, amount: int, size: int) -> None:
    """Time sends to a topic, round robin over its queues, and print the average.

    \b
    Example:
      rocketq admin checkMsgSendRT -n 127.0.0.1:9876 -t TopicA -a 20 -s 128
    """

    async def call(admin: AsyncAdminClient) -> Round:
        return await _timed_sends(ctx, await _write_queues(admin, topic), amount, size)

    done = ctx.run(call)
    if ctx.as_json:
        sends = [
            {
                "brokerName": t.queue.broker_name,
                "queueId": t.queue.queue_id,
                "ok": t.ok,
                "rtMs": t.rt_ms,
            }
            for t in done.sends
        ]
        ctx.json({"avgRtMs": done.avg_ms(skip_first=True), "sends": sends})
        return
    ctx.table(
        ["#Broker Name", "#QID", "#Send Result", "#RT"],
        [
            (t.queue.broker_name, t.queue.queue_id, str(t.ok).lower(), round(t.rt_ms))
            for t in done.sends
        ],
    )
    click.echo(f"Avg RT: {done.avg_ms(skip_first=True):.2f}")


@click.command("sendMsgStatus")
@click.option("-b", "--brokerName", "broker", required=True)
@click.option("-s", "--messageSize", "size", type=click.IntRange(min=1), default=128)
@click.option("-c", "--count", type=click.IntRange(min=1), default=50, show_default=True)
@admin_command
def send_msg_status(ctx: AdminContext, broker: str, size: int, count: int) -> None:
    """Time sends to one broker (on the topic named after it, which every broker has).

    \b
    Example:
      rocketq admin sendMsgStatus -n 127.0.0.1:9876 -b broker-a -c 10
    """

    async def call(admin: AsyncAdminClient) -> Round:
        queues = [q for q in await _write_queues(admin, broker) if q.broker_name == broker]
        if not queues:
            raise click.ClickException(f"the broker {broker} has no writable queue of {broker}")
        return await _timed_sends(ctx, queues, count + 1, size)  # the first warms up

    for timed in ctx.run(call).sends[1:]:
        click.echo(f"rt={timed.rt_ms:.0f}ms, SendResult={timed.detail}")


@click.command("clusterRT")
@click.option("-a", "--amount", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("-s", "--size", type=click.IntRange(min=1), default=128, show_default=True)
@click.option("-c", "--cluster", default=None, help="Only this cluster.")
@click.option("-p", "print_log", default=None, help="mqadmin's 'print log' switch; ignored.")
@click.option("-m", "machine_room", default="noname", help="Machine room shown in the table.")
@click.option("-i", "--interval", type=float, default=None, help="Print again every this many s.")
@admin_command
def cluster_rt(
    ctx: AdminContext,
    amount: int,
    size: int,
    cluster: str | None,
    print_log: str | None,
    machine_room: str,
    interval: float | None,
) -> None:
    """Time sends to every broker of each cluster (the topic named after each broker).

    \b
    Example:
      rocketq admin clusterRT -n 127.0.0.1:9876 -a 20 -c DefaultCluster
    """
    del print_log

    async def call(admin: AsyncAdminClient) -> list[tuple[str, str, Round]]:
        info = await admin.examine_broker_cluster_info()
        rows = []
        for name in sorted(info.cluster_addr_table):
            if cluster is not None and name != cluster:
                continue
            for broker in sorted(info.cluster_addr_table[name]):
                queues = [MessageQueue(broker, broker, 0)]
                rows.append((name, broker, await _timed_sends(ctx, queues, amount, size)))
        return rows

    while True:
        rows = ctx.run(call)
        ctx.table(
            ["#Cluster Name", "#Broker Name", "#RT", "#successCount", "#failCount", "#MachineRoom"],
            [
                (c, b, f"{r.avg_ms():.2f}", r.count(ok=True), r.count(ok=False), machine_room)
                for c, b, r in rows
            ],
        )
        if interval is None:
            return
        time.sleep(interval)


COMMANDS = [check_msg_send_rt, send_msg_status, cluster_rt]
