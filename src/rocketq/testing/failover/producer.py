"""One SYNC producer of the fault suite in its own OS process:

    python -m rocketq.testing.failover.producer --group broker-a --id 3 \\
        --controllers 127.0.0.1:p0;127.0.0.1:p1 --aliases '{"addr": "addr"}' \\
        --ledger ledger-p3.txt [--pace 0.05] [--namesrv 127.0.0.1:n0;127.0.0.1:n1] \\
        [--via '{"broker addr": "proxy addr"}']

It sends unique keys (``body_of(id, seq)``) to the group's master as the controller names it,
the same key again until it is acknowledged (a resend after a lost answer is a duplicate the
checker counts), and appends each SEND_OK to its ledger file (flushed per line) and to stdout
(``A <ack>``; ``F <time>`` for a failed attempt) for the runner's live timings. SIGTERM ends
it after the send in flight. With ``--namesrv`` the sends go through our client's producer
(``rocketq.client.aio.Producer``: routes from the name servers, its route refresh and its wait
for a new master) to the group's queues, instead of straight to the controller's master
(those sends take the name servers' broker addresses: ``--via`` proxies do not apply).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
import time
from typing import TextIO

from rocketq.client import Message, SendStatus
from rocketq.client.aio import Producer as MQProducer
from rocketq.common.message import MessageQueue
from rocketq.common.message_id import decode_message_id
from rocketq.errors import RemotingError, RocketQError
from rocketq.remoting.client import RemotingClient
from rocketq.response_code import ResponseCode
from rocketq.testing.failover.load import QUEUES, SEND_TIMEOUT_S, TOPIC, Ack, Route, body_of
from rocketq.testing.failover.partition import AliasedControllerClient
from rocketq.testing.wire import send_request

RETRY_PACE_S = 0.02  # a refused or cut send is tried again after this (a retry pace)


class Producer:
    def __init__(self, route: Route, n: int, pace_s: float, ledger: TextIO) -> None:
        self.route = route
        self.n = n
        self.pace_s = pace_s
        self.ledger = ledger
        self.client = RemotingClient()
        self.stop = asyncio.Event()

    async def run(self) -> None:
        seq = 0
        while not self.stop.is_set():
            seq += 1
            while not self.stop.is_set():  # the same key until acknowledged
                sent = await self.send(seq)
                if sent:
                    break
                if sent is not None:  # None: no master known yet, nothing was sent
                    print("F", time.monotonic(), flush=True)
                await asyncio.sleep(RETRY_PACE_S)
            if self.pace_s:
                await asyncio.sleep(self.pace_s)  # the load's own rate, not synchronization
        await self.client.shutdown()

    async def send(self, seq: int) -> bool | None:
        addr = self.route.master
        if not addr:
            return None
        sent_at = time.monotonic()
        try:
            request = send_request(TOPIC, body_of(self.n, seq), queue_id=seq % QUEUES)
            to = self.route.client_addr(addr)
            response = await self.client.invoke(to, request, SEND_TIMEOUT_S)
        except (OSError, RemotingError):
            return False
        if response.code != ResponseCode.SUCCESS:
            return False
        fields = response.ext_fields
        ack = Ack(
            self.route.broker_name,
            self.n,
            seq,
            int(fields["queueId"]),
            int(fields["queueOffset"]),
            decode_message_id(fields["msgId"])[1],
            addr,
            sent_at,
            time.monotonic(),
        )
        self.record(ack)
        return True

    def record(self, ack: Ack) -> None:
        line = ack.line()
        self.ledger.write(line + "\n")
        self.ledger.flush()
        print("A", line, flush=True)


class ClientProducer(Producer):
    """The same load through our client's producer (``--namesrv``): each key to the queue
    ``seq % QUEUES`` of the group, one ``send`` of ``SEND_TIMEOUT_S`` per attempt."""

    def __init__(self, route: Route, n: int, pace_s: float, ledger: TextIO, namesrv: str) -> None:
        super().__init__(route, n, pace_s, ledger)
        self.producer = MQProducer(
            f"FaultsProducer{n}", namesrv_addr=namesrv, send_msg_timeout_s=SEND_TIMEOUT_S
        )

    async def run(self) -> None:
        await self.producer.start()
        try:
            await super().run()
        finally:
            await self.producer.shutdown()

    async def send(self, seq: int) -> bool | None:
        mq = MessageQueue(TOPIC, self.route.broker_name, seq % QUEUES)
        msg = Message(topic=TOPIC, body=body_of(self.n, seq))
        sent_at = time.monotonic()
        try:
            result = await self.producer.send(msg, message_queue=mq)
        except (OSError, RocketQError):
            return False
        if result.status is not SendStatus.SEND_OK:
            return False
        (host, port), phy = decode_message_id(result.offset_msg_id)
        broker = f"{host}:{port}"
        queue = result.message_queue.queue_id
        ack = Ack(
            mq.broker_name, self.n, seq, queue, result.queue_offset, phy, broker, sent_at,
            time.monotonic(),
        )  # fmt: skip
        self.record(ack)
        return True


async def produce(args: argparse.Namespace, ledger: TextIO) -> None:
    ctl = AliasedControllerClient(args.controllers.split(";"), json.loads(args.aliases))
    route = Route(ctl, args.group, json.loads(args.via))
    producer = (
        ClientProducer(route, args.id, args.pace, ledger, args.namesrv)
        if args.namesrv
        else Producer(route, args.id, args.pace, ledger)
    )
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, producer.stop.set)
    poll = asyncio.create_task(route.poll(producer.stop))
    await producer.run()
    await poll
    await ctl.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--group", required=True)
    parser.add_argument("--id", type=int, required=True)
    parser.add_argument("--controllers", required=True)
    parser.add_argument("--aliases", default="{}")
    parser.add_argument("--via", default="{}", help="broker address -> client-side proxy")
    parser.add_argument("--ledger", required=True)
    parser.add_argument("--pace", type=float, default=0.0)
    parser.add_argument("--namesrv", default="", help="send through our client's producer")
    args = parser.parse_args()
    with open(args.ledger, "a", encoding="ascii") as ledger:
        asyncio.run(produce(args, ledger))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
