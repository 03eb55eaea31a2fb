"""A push consumer in its own process, for tests that kill it: prints one JSON line per message.

python -m tests.client.consumer_process --namesrv ADDR --group G --topic T [--delay-s 0.05]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

from rocketq.client import ConsumeStatus, MessageExt, PushConsumer


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namesrv", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--delay-s", type=float, default=0.05)
    parser.add_argument("--timeout-s", type=float, default=60.0)
    args = parser.parse_args(argv)
    lock = threading.Lock()

    def listener(msgs: list[MessageExt]) -> ConsumeStatus:
        time.sleep(args.delay_s)
        with lock:
            for m in msgs:
                line = {"event": "msg", "seq": int(m.properties["seq"]), "queue_id": m.queue_id}
                sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
        return ConsumeStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        args.group,
        namesrv_addr=args.namesrv,
        instance_name="victim",
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        consume_thread_max=4,
        poll_name_server_interval_s=1.0,
        heartbeat_broker_interval_s=1.0,
        persist_consumer_offset_interval_s=0.5,
        rebalance_interval_s=1.0,
        broker_suspend_max_time_s=2.0,
        consumer_timeout_when_suspend_s=5.0,
    )
    consumer.subscribe(args.topic)
    consumer.register_message_listener(listener)
    consumer.start()
    sys.stdout.write(json.dumps({"event": "started"}) + "\n")
    sys.stdout.flush()
    time.sleep(args.timeout_s)  # the test kills this process long before
    consumer.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
