"""A transactional producer in its own process, for the test that kills it: sends one half,
prints it as a JSON line, then hangs inside ``execute_local_transaction`` until killed.

python -m tests.client.half_process --namesrv ADDR --group G --topic T
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import Any

from rocketq.client import LocalTransactionState, Message, MessageExt, TransactionProducer


class HangsForever:
    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        line = {"event": "half", "msg_id": msg.uniq_key}
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        threading.Event().wait()  # the process dies here, between the half and the end
        return LocalTransactionState.COMMIT

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        return LocalTransactionState.UNKNOWN


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namesrv", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True)
    args = parser.parse_args(argv)
    producer = TransactionProducer(
        args.group, HangsForever(), namesrv_addr=args.namesrv, instance_name="victim"
    )
    producer.start()
    producer.send_message_in_transaction(Message(args.topic, b"from the dead"))


if __name__ == "__main__":
    main(sys.argv[1:])
