"""AdminCommandRelay: the broker's requests for a gRPC consumer, carried over Telemetry.

``consumerStatus`` (GET_CONSUMER_RUNNING_INFO) and ``consumeMessageDirectly``
(CONSUME_MESSAGE_DIRECTLY) reach a broker, which forwards them to the client's channel; for a
gRPC client that is the proxy's connection (``ProxiedChannel``), so they arrive here with the
client's id in the header. As the Java proxy's ``GrpcClientChannel`` does, the relay writes a
PrintThreadStackTraceCommand or a VerifyMessageCommand with a fresh nonce on the client's
Telemetry stream and waits for the ThreadStackTrace or VerifyMessageResult with that nonce
(``ClientActivity`` completes it); the answer becomes a ConsumerRunningInfo (its jstack) or a
ConsumeMessageDirectlyResult. A client that does not answer within ``timeout_s`` (the Python
5.1.2 client never does) gets a refusal whose remark says so, well before the broker's own
10 s, so an admin command never hangs.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid

from rocketq.common.message_decoder import decode_message
from rocketq.errors import DecodeError, RocketQError
from rocketq.proxy.consumer_activity import subscription_of
from rocketq.proxy.message_converter import to_grpc
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.proxy.status import Code
from rocketq.proxy.telemetry import ClientRegistry
from rocketq.remoting.channel import RemotingChannel
from rocketq.remoting.client import RemotingClient
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.consumer_bodies import (
    PROP_CLIENT_VERSION,
    PROP_CONSUME_TYPE,
    CMResult,
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
)
from rocketq.remoting.protocol.headers import (
    ConsumeMessageDirectlyResultRequestHeader,
    GetConsumerRunningInfoRequestHeader,
)
from rocketq.response_code import ResponseCode

CLIENT_ANSWER_TIMEOUT_S = 3.0


def _refuse(code: int, remark: str) -> RemotingCommand:
    return RemotingCommand.create_response(code, remark)


class AdminCommandRelay:
    def __init__(
        self, clients: ClientRegistry, *, timeout_s: float = CLIENT_ANSWER_TIMEOUT_S
    ) -> None:
        self.clients = clients
        self.timeout_s = timeout_s
        self._waiting: dict[str, asyncio.Future[spb.TelemetryCommand]] = {}

    def register(self, remoting: RemotingClient) -> None:
        """Take over both codes on the proxy's connection (it has no 4.x consumers)."""
        remoting.register_processor(
            RequestCode.GET_CONSUMER_RUNNING_INFO, self.get_consumer_running_info
        )
        remoting.register_processor(
            RequestCode.CONSUME_MESSAGE_DIRECTLY, self.consume_message_directly
        )

    def on_client_answer(self, command: spb.TelemetryCommand) -> None:
        """A ThreadStackTrace or VerifyMessageResult from a client's Telemetry stream."""
        kind = command.WhichOneof("command")
        if kind == "thread_stack_trace":
            nonce = command.thread_stack_trace.nonce
        elif kind == "verify_message_result":
            nonce = command.verify_message_result.nonce
        else:
            return
        waiter = self._waiting.pop(nonce, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(command)

    async def _ask(
        self, client_id: str, command: spb.TelemetryCommand, nonce: str
    ) -> spb.TelemetryCommand | str:
        """The client's answer, or the remark to refuse with."""
        session = self.clients.sessions.get(client_id)
        if session is None or session.outbox is None:
            return f"the gRPC client {client_id} has no open Telemetry stream on this proxy"
        waiter = asyncio.get_running_loop().create_future()
        self._waiting[nonce] = waiter
        try:
            self.clients.push(session, command)
            return await asyncio.wait_for(waiter, self.timeout_s)
        except TimeoutError:
            name = command.WhichOneof("command")
            return (
                f"the gRPC client {client_id} ({session.language} {session.version}) did not "
                f"answer the {name} within {int(self.timeout_s * 1000)} ms; the Python 5.x "
                "client never answers it"
            )
        finally:
            self._waiting.pop(nonce, None)

    async def get_consumer_running_info(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        """What the proxy knows of the client; with ``jstack`` also its ThreadStackTrace."""
        h = GetConsumerRunningInfoRequestHeader.from_ext_fields(request.ext_fields)
        session = self.clients.sessions.get(h.client_id)
        if session is None:
            return _refuse(
                ResponseCode.SYSTEM_ERROR, f"the gRPC client {h.client_id} is not on this proxy"
            )
        info = ConsumerRunningInfo()
        info.properties[PROP_CLIENT_VERSION] = session.version
        info.properties[PROP_CONSUME_TYPE] = "CONSUME_POP"
        info.properties["PROP_CLIENT_LANGUAGE"] = session.language
        settings = session.settings
        if settings is not None and settings.HasField("subscription"):
            for entry in settings.subscription.subscriptions:
                with contextlib.suppress(RocketQError):
                    info.subscription_set.append(
                        subscription_of(entry.topic.name, entry.expression)
                    )
        if h.jstack_enable:
            nonce = uuid.uuid4().hex
            command = spb.TelemetryCommand(
                print_thread_stack_trace_command=spb.PrintThreadStackTraceCommand(nonce=nonce)
            )
            answer = await self._ask(h.client_id, command, nonce)
            if isinstance(answer, str):
                return _refuse(ResponseCode.SYSTEM_ERROR, answer)
            info.jstack = answer.thread_stack_trace.thread_stack_trace
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=info.encode())

    async def consume_message_directly(
        self, channel: RemotingChannel, request: RemotingCommand
    ) -> RemotingCommand:
        h = ConsumeMessageDirectlyResultRequestHeader.from_ext_fields(request.ext_fields)
        try:
            msg = decode_message(request.body, check_crc=False, decompress=False)
        except DecodeError as exc:
            return _refuse(ResponseCode.SYSTEM_ERROR, f"the message does not decode: {exc}")
        nonce = uuid.uuid4().hex
        command = spb.TelemetryCommand(
            verify_message_command=spb.VerifyMessageCommand(
                nonce=nonce, message=to_grpc(msg, msg.topic)
            )
        )
        started = time.monotonic()
        answer = await self._ask(h.client_id or "", command, nonce)
        if isinstance(answer, str):
            return _refuse(ResponseCode.CONSUME_MSG_TIMEOUT, answer)
        ok = answer.status.code == Code.OK
        result = ConsumeMessageDirectlyResult(
            consume_result=CMResult.CR_SUCCESS if ok else CMResult.CR_THROW_EXCEPTION,
            order=False,
            auto_commit=True,
            remark=None if ok else answer.status.message,
            spent_time_mills=int((time.monotonic() - started) * 1000),
        )
        return RemotingCommand.create_response(ResponseCode.SUCCESS, body=result.encode())

    def cancel_all(self) -> None:
        for waiter in self._waiting.values():
            with contextlib.suppress(asyncio.InvalidStateError):
                waiter.cancel()
        self._waiting.clear()
