"""Transactions seen by the official C++ client (PyPI ``rocketmq`` 0.4.4).

The 0.4.4 Python binding exposes no TransactionMQProducer (librocketmq.so has the C++ class
but its C API, which the binding wraps, has no transactional producer), so the C++ side here
is the consumer: it gets exactly the committed messages, intact, and the store written by
commits, rollbacks and checks passes ``rocketq store check`` (the ``env`` fixture).
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from rocketq.client import LocalTransactionState, Message
from rocketq.client.aio import TransactionProducer
from rocketq.common.message import MessageExt
from rocketq.testing.cluster import FAST_CLIENT
from tests.interop.cpp_env import CONSUME_TIMEOUT_S, Env, cpp_env

pytestmark = [
    pytest.mark.interop,
    pytest.mark.skipif(
        importlib.util.find_spec("rocketmq") is None, reason="rocketmq wheel not installed"
    ),
]


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    async with cpp_env(tmp_path) as running:
        yield running


class ByParity:
    """Commits even ``seq``, rolls back odd ones; checks (none expected) commit."""

    def execute_local_transaction(self, msg: Message, arg: Any) -> LocalTransactionState:
        even = int(msg.properties["seq"]) % 2 == 0
        return LocalTransactionState.COMMIT if even else LocalTransactionState.ROLLBACK

    def check_local_transaction(self, msg: MessageExt) -> LocalTransactionState:
        return LocalTransactionState.COMMIT


async def test_cpp_consumer_gets_exactly_the_committed_transactional_messages(env: Env) -> None:
    env.create_topic("TxCpp")
    await env.broker.register_broker_all()
    async with TransactionProducer(
        "pg-tx-cpp", ByParity(), namesrv_addr=env.namesrv.addr, **FAST_CLIENT
    ) as producer:
        results = [
            await producer.send_message_in_transaction(
                Message("TxCpp", f"body-{i}".encode(), tags="TagTx", properties={"seq": str(i)})
            )
            for i in range(10)
        ]
    committed = {r.msg_id for r in results if r.local_transaction_state.name == "COMMIT"}
    assert len(committed) == 5
    run = await env.consumer(
        "TxCpp", "GroupTxCpp", "--expect", "5", "--timeout", str(CONSUME_TIMEOUT_S), "--linger", "2"
    )
    try:
        await run.wait(CONSUME_TIMEOUT_S + 15)
    finally:
        await run.kill()
    msgs = run.messages()
    seqs = Counter(int(m["properties"]["seq"]) for m in msgs)
    assert seqs == Counter({0: 1, 2: 1, 4: 1, 6: 1, 8: 1})
    assert {m["msg_id"] for m in msgs} == committed
    for m in msgs:
        assert m["body"] == f"body-{m['properties']['seq']}"
        assert m["tags"] == "TagTx"
        assert "TRAN_MSG" not in m["properties"]
