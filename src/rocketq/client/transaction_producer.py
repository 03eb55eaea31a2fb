"""The blocking TransactionProducer: the asyncio one on the loop thread, the API of
``rocketq.client.transaction``.

``execute_local_transaction`` runs in the caller's thread (between the half and the end, as
in RocketMQ's client); ``check_local_transaction`` runs on a worker thread, so a slow check
never blocks the loop.
"""

from __future__ import annotations

import logging
from typing import Any

from rocketq.client import aio
from rocketq.client.aio.transaction_producer import transaction_send_result
from rocketq.client.blocking import Producer
from rocketq.client.blocking_facade import BlockingFacade, blocking_twin
from rocketq.client.status import SendStatus
from rocketq.client.transaction import (
    LocalTransactionState,
    TransactionListener,
    TransactionSendResult,
    as_state,
)
from rocketq.common.message import Message
from rocketq.errors import ClientError, RocketQError

log = logging.getLogger(__name__)


class TransactionProducer(Producer, BlockingFacade[aio.TransactionProducer]):
    not_mirrored = {
        "check_transaction_state": "ClientRemotingProcessor: answers CHECK_TRANSACTION_STATE",
    }

    def __init__(
        self,
        producer_group: str = "DEFAULT_PRODUCER",
        listener: TransactionListener | None = None,
        *,
        namesrv_addr: str = "",
        **kw: Any,
    ) -> None:
        super().__init__(producer_group, namesrv_addr=namesrv_addr, **kw)
        self.tx = aio.TransactionProducer(
            producer_group, listener, namesrv_addr=namesrv_addr, listener_in_thread=True, **kw
        )
        self.impl = self.tx

    send_half_message = blocking_twin(aio.TransactionProducer.send_half_message)
    send_half = blocking_twin(aio.TransactionProducer.send_half)
    send_half_batch = blocking_twin(aio.TransactionProducer.send_half_batch)
    end_transaction = blocking_twin(aio.TransactionProducer.end_transaction)

    def send_message_in_transaction(
        self, msg: Message, arg: Any = None, *, timeout_s: float | None = None
    ) -> TransactionSendResult:
        """Half, local transaction in the caller's thread, end (aio's, with a plain listener)."""
        listener = self.tx.listener
        if listener is None:
            raise ClientError("TransactionListener is null")
        try:
            sent, handle = self.send_half(msg, timeout_s=timeout_s)
        except ClientError:
            raise
        except (RocketQError, OSError) as exc:
            raise ClientError(f"send message in transaction failed: {exc!r}") from exc
        remark = None
        try:
            if sent.status is not SendStatus.SEND_OK:  # stored, not safely: roll back
                state = LocalTransactionState.ROLLBACK
            else:
                state = as_state(listener.execute_local_transaction(msg, arg))
        except Exception as exc:  # noqa: BLE001 -- a listener's error: UNKNOWN, as RocketMQ
            log.warning("executeLocalTransaction of %s raised: %r", handle.msg_id, exc)
            state, remark = (
                LocalTransactionState.UNKNOWN,
                f"executeLocalTransactionBranch exception: {exc!r}",
            )
        try:
            self.end_transaction(None, handle, state, remark=remark)
        except (RocketQError, OSError) as exc:
            log.warning("transaction %s is %s; ending it failed: %r", handle.msg_id, state, exc)
        return transaction_send_result(sent, handle, state)
