"""MessagingService: ``apache.rocketmq.v2.MessagingService`` on grpcio's asyncio server (the
Java proxy's ``GrpcMessagingApplication``), a thin layer over the activities.

Each unary RPC reads the call's metadata (``x-mq-client-id`` required), runs its activity and
answers ``status`` inside the response; an activity's failure becomes the status Java answers
(``status.status_of``), never a dropped call. ReceiveMessage streams a status, then the
messages, then the delivery timestamp. Telemetry is the client's stream (client_activity.py).
PullMessage, UpdateOffset, GetOffset, QueryOffset and SyncLiteSubscription are answered gRPC
UNIMPLEMENTED, as Java's 5.3 proxy does. Every RPC's latency goes to ``rocketmq_rpc_latency``
by RPC name and response Code. With ``aclEnable`` each request (and each Settings on Telemetry)
passes ``auth.GrpcAccessValidator`` first.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from rocketq.errors import AclError, RocketQError
from rocketq.proxy import consumer_activity as ca
from rocketq.proxy import route_activity
from rocketq.proxy.auth import REFUSAL_STATUS, GrpcAccessValidator
from rocketq.proxy.backend import MessagingBackend
from rocketq.proxy.client_activity import ClientActivity
from rocketq.proxy.config import ProxyConfig
from rocketq.proxy.context import CallContext
from rocketq.proxy.message_converter import (
    duration_ms,
    from_grpc,
    now_timestamp,
    to_grpc,
)
from rocketq.proxy.metrics import GrpcRpcStats
from rocketq.proxy.producer_activity import ProducerActivity
from rocketq.proxy.protos import definition_pb2 as pb
from rocketq.proxy.protos import service_pb2 as spb
from rocketq.proxy.status import Code, ProxyError, code_name, status, status_of
from rocketq.proxy.telemetry import ClientRegistry

log = logging.getLogger(__name__)
Context = grpc.aio.ServicerContext[Any, Any]
SERVICE = "apache.rocketmq.v2.MessagingService"
UNIMPLEMENTED = ("PullMessage", "UpdateOffset", "GetOffset", "QueryOffset", "SyncLiteSubscription")


class MessagingService:
    def __init__(
        self,
        backend: MessagingBackend,
        config: ProxyConfig,
        validator: GrpcAccessValidator | None = None,
    ) -> None:
        self.backend = backend
        self.config = config
        self.validator = validator  # aclEnable: each request's signature and permissions
        self.clients = ClientRegistry()
        self.producers = ProducerActivity(backend, config, self.clients)
        self.renewer = ca.ReceiptHandleRenewer(backend, config)
        self.stats = GrpcRpcStats()
        self.client_activity = ClientActivity(
            backend, config, validator, self.clients, self.producers
        )

    async def shutdown(self) -> None:
        await self.client_activity.shutdown()
        await self.renewer.shutdown()

    # ------------------------------------------------------------------ unary RPCs

    async def _authorize(self, call: CallContext, message: Any, context: Context) -> None:
        """aclEnable: a refused request ends with PERMISSION_DENIED (the Java proxy's
        AuthenticationInterceptor); the reason goes to the log, not to the client."""
        if self.validator is None:
            return
        try:
            self.validator.validate(call.metadata, message, f"{call.peer_host}:0")
        except AclError as exc:
            log.info("refused %s from %s: %s", message.DESCRIPTOR.name, call.peer_host, exc)
            await context.abort(getattr(grpc.StatusCode, REFUSAL_STATUS), "permission denied")

    async def _unary(
        self,
        rpc: str,
        request: Any,
        context: Context,
        run: Callable[[CallContext], Awaitable[Any]],
        fail: Callable[[pb.Status], Any],
    ) -> Any:
        started = time.monotonic()
        call = CallContext.of(context)
        await self._authorize(call, request, context)
        try:
            call.require_client_id()
            response = await run(call)
        except (RocketQError, OSError) as exc:
            if not isinstance(exc, ProxyError):
                log.warning("%s from %s failed: %r", rpc, call.client_id, exc)
            response = fail(status_of(exc))
        self.stats.observe(
            rpc, code_name(response.status.code), time.monotonic() - started, long_polling=False
        )
        return response

    async def QueryRoute(self, request: spb.QueryRouteRequest, context: Context) -> Any:
        async def run(call: CallContext) -> spb.QueryRouteResponse:
            queues = await route_activity.query_route(
                self.backend, request.topic.name, request.endpoints
            )
            return spb.QueryRouteResponse(status=status(), message_queues=queues)

        return await self._unary(
            "QueryRoute", request, context, run, lambda s: spb.QueryRouteResponse(status=s)
        )

    async def QueryAssignment(self, request: spb.QueryAssignmentRequest, context: Context) -> Any:
        async def run(call: CallContext) -> spb.QueryAssignmentResponse:
            found = await route_activity.query_assignment(
                self.backend, request.topic.name, request.group.name, request.endpoints
            )
            return spb.QueryAssignmentResponse(status=status(), assignments=found)

        return await self._unary(
            "QueryAssignment",
            request,
            context,
            run,
            lambda s: spb.QueryAssignmentResponse(status=s),
        )

    async def Heartbeat(self, request: spb.HeartbeatRequest, context: Context) -> Any:
        async def run(call: CallContext) -> spb.HeartbeatResponse:
            session = self.clients.sessions.get(call.client_id)
            if session is None or session.settings is None:
                raise ProxyError(
                    Code.UNRECOGNIZED_CLIENT_TYPE, f"client {call.client_id} sent no settings yet"
                )
            self.client_activity.heartbeats.touch(session)
            return spb.HeartbeatResponse(status=status())

        return await self._unary(
            "Heartbeat", request, context, run, lambda s: spb.HeartbeatResponse(status=s)
        )

    async def NotifyClientTermination(
        self, request: spb.NotifyClientTerminationRequest, context: Context
    ) -> Any:
        async def run(call: CallContext) -> spb.NotifyClientTerminationResponse:
            session = self.clients.sessions.get(call.client_id)
            if session is not None:
                await self.client_activity.heartbeats.terminate(session)
            return spb.NotifyClientTerminationResponse(status=status())

        return await self._unary(
            "NotifyClientTermination", request, context, run,
            lambda s: spb.NotifyClientTerminationResponse(status=s),
        )  # fmt: skip

    async def SendMessage(self, request: spb.SendMessageRequest, context: Context) -> Any:
        async def run(call: CallContext) -> spb.SendMessageResponse:
            if not request.messages:
                raise ProxyError(Code.MESSAGE_CORRUPTED, "no message to send")
            topics = {m.topic.name for m in request.messages}
            if len(topics) > 1:
                raise ProxyError(Code.MESSAGE_CORRUPTED, "messages of several topics in one send")
            route_activity.check_topic(request.messages[0].topic.name)
            entries = []
            for message in request.messages:
                try:
                    out = from_grpc(
                        message, call.peer_host, self.config.max_message_size_bytes,
                        max_delay_ms=self.config.max_delay_ms, now_ms=int(time.time() * 1000),
                    )  # fmt: skip
                    entries.append(await self.producers.send(out))
                except (RocketQError, OSError) as exc:
                    if len(request.messages) == 1:
                        raise
                    entries.append(spb.SendResultEntry(status=status_of(exc)))
            codes = {e.status.code for e in entries}
            top = entries[0].status if len(codes) == 1 else status(Code.MULTIPLE_RESULTS, "")
            return spb.SendMessageResponse(status=top, entries=entries)

        return await self._unary(
            "SendMessage", request, context, run, lambda s: spb.SendMessageResponse(status=s)
        )

    async def EndTransaction(self, request: spb.EndTransactionRequest, context: Context) -> Any:
        async def run(call: CallContext) -> spb.EndTransactionResponse:
            await self.producers.end_transaction(request)
            return spb.EndTransactionResponse(status=status())

        return await self._unary(
            "EndTransaction", request, context, run, lambda s: spb.EndTransactionResponse(status=s)
        )

    async def RecallMessage(self, request: spb.RecallMessageRequest, context: Context) -> Any:
        async def run(call: CallContext) -> spb.RecallMessageResponse:
            route_activity.check_topic(request.topic.name)
            msg_id = await self.backend.recall(request.topic.name, request.recall_handle)
            return spb.RecallMessageResponse(status=status(), message_id=msg_id)

        return await self._unary(
            "RecallMessage", request, context, run, lambda s: spb.RecallMessageResponse(status=s)
        )

    async def AckMessage(self, request: spb.AckMessageRequest, context: Context) -> Any:
        async def run(call: CallContext) -> spb.AckMessageResponse:
            entries = []
            for entry in request.entries:
                try:
                    await ca.ack(
                        self.backend, self.renewer, request.group.name, request.topic.name,
                        entry.receipt_handle,
                    )  # fmt: skip
                    entry_status = status()
                except (RocketQError, OSError) as exc:
                    entry_status = status_of(exc)
                entries.append(
                    spb.AckMessageResultEntry(
                        message_id=entry.message_id,
                        receipt_handle=entry.receipt_handle,
                        status=entry_status,
                    )
                )
            codes = {e.status.code for e in entries}
            if not entries:
                top = status()
            elif len(codes) == 1:
                top = entries[0].status
            else:
                top = status(Code.MULTIPLE_RESULTS, "")
            return spb.AckMessageResponse(status=top, entries=entries)

        return await self._unary(
            "AckMessage", request, context, run, lambda s: spb.AckMessageResponse(status=s)
        )

    async def ChangeInvisibleDuration(
        self, request: spb.ChangeInvisibleDurationRequest, context: Context
    ) -> Any:
        async def run(call: CallContext) -> spb.ChangeInvisibleDurationResponse:
            handle = await ca.change_invisible(
                self.backend, self.renewer, request.group.name, request.topic.name,
                request.receipt_handle, duration_ms(request.invisible_duration), self.config,
            )  # fmt: skip
            return spb.ChangeInvisibleDurationResponse(status=status(), receipt_handle=handle)

        # the client installs the reply's handle even on error: answer the old one then
        return await self._unary(
            "ChangeInvisibleDuration", request, context, run,
            lambda s: spb.ChangeInvisibleDurationResponse(
                status=s, receipt_handle=request.receipt_handle
            ),
        )  # fmt: skip

    async def ForwardMessageToDeadLetterQueue(
        self, request: spb.ForwardMessageToDeadLetterQueueRequest, context: Context
    ) -> Any:
        async def run(call: CallContext) -> spb.ForwardMessageToDeadLetterQueueResponse:
            await ca.forward_to_dlq(
                self.backend, self.renewer, request.group.name, request.topic.name,
                request.receipt_handle, request.message_id,
            )  # fmt: skip
            return spb.ForwardMessageToDeadLetterQueueResponse(status=status())

        return await self._unary(
            "ForwardMessageToDeadLetterQueue", request, context, run,
            lambda s: spb.ForwardMessageToDeadLetterQueueResponse(status=s),
        )  # fmt: skip

    # ------------------------------------------------------------------ ReceiveMessage

    async def ReceiveMessage(
        self, request: spb.ReceiveMessageRequest, context: Context
    ) -> AsyncIterator[spb.ReceiveMessageResponse]:
        started = time.monotonic()
        code = Code.OK
        try:
            async for response in self._receive(request, context):
                if response.HasField("status"):
                    code = response.status.code
                yield response
        finally:
            self.stats.observe(
                "ReceiveMessage", code_name(code), time.monotonic() - started, long_polling=True
            )

    async def _receive(
        self, request: spb.ReceiveMessageRequest, context: Context
    ) -> AsyncIterator[spb.ReceiveMessageResponse]:
        call = CallContext.of(context)
        await self._authorize(call, request, context)
        try:
            call.require_client_id()
            popped = await self._pop(call, request, context)
        except (RocketQError, OSError) as exc:
            if not isinstance(exc, ProxyError):
                log.warning("ReceiveMessage from %s failed: %r", call.client_id, exc)
            yield spb.ReceiveMessageResponse(status=status_of(exc))
            yield spb.ReceiveMessageResponse(delivery_timestamp=now_timestamp())
            return
        topic = request.message_queue.topic.name
        if not popped:
            yield spb.ReceiveMessageResponse(
                status=status(Code.MESSAGE_NOT_FOUND, "no new message")
            )
        else:
            yield spb.ReceiveMessageResponse(status=status())
            for msg, handle in popped:
                yield spb.ReceiveMessageResponse(message=to_grpc(msg, topic, receipt_handle=handle))
        yield spb.ReceiveMessageResponse(delivery_timestamp=now_timestamp())

    async def _pop(
        self, call: CallContext, request: spb.ReceiveMessageRequest, context: Context
    ) -> list[Any]:
        topic = request.message_queue.topic.name
        route_activity.check_topic(topic)
        session = self.clients.sessions.get(call.client_id)
        settings = session.settings if session is not None else None
        timeout_ms = 3000
        if settings is not None and settings.HasField("request_timeout"):
            timeout_ms = duration_ms(settings.request_timeout)
        params = ca.receive_params(
            self.config,
            auto_renew=request.auto_renew,
            invisible_ms=(
                duration_ms(request.invisible_duration)
                if request.HasField("invisible_duration")
                else None
            ),
            long_polling_ms=(
                duration_ms(request.long_polling_timeout)
                if request.HasField("long_polling_timeout")
                else None
            ),
            batch_size=request.batch_size,
            remaining_s=context.time_remaining(),
            request_timeout_ms=timeout_ms,
        )
        subscription = ca.subscription_of(topic, request.filter_expression)
        group = request.group.name
        config = await self.backend.group_config(group, topic)
        broker = request.message_queue.broker.name
        if not broker:
            route = await self.backend.route(topic)
            broker = sorted(qd.broker_name for qd in route.queue_datas)[0]
        return await ca.receive(
            self.backend, self.renewer, broker_name=broker, group=group,
            subscription=subscription, params=params, fifo=config.orderly,
            max_attempts=config.retry_max_times + 1, auto_renew=request.auto_renew,
            attempt_id=request.attempt_id if request.HasField("attempt_id") else None,
        )  # fmt: skip

    # ------------------------------------------------------------------ Telemetry

    async def Telemetry(
        self, requests: AsyncIterator[spb.TelemetryCommand], context: Context
    ) -> AsyncIterator[spb.TelemetryCommand]:
        stream = self.client_activity.telemetry(requests, context)
        async with contextlib.aclosing(stream):  # its cleanup runs when the call ends
            async for command in stream:
                yield command


def generic_handler(service: MessagingService) -> grpc.GenericRpcHandler:
    """The method handlers of ``apache.rocketmq.v2.MessagingService`` bound to ``service``."""
    methods = spb.DESCRIPTOR.services_by_name["MessagingService"].methods
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}
    for method in methods:
        request = getattr(spb, method.input_type.name)
        response = getattr(spb, method.output_type.name)
        options = {
            "request_deserializer": request.FromString,
            "response_serializer": response.SerializeToString,
        }
        if method.name in UNIMPLEMENTED:
            fn: Any = _unimplemented(method.name)
        else:
            fn = getattr(service, method.name)
        if method.client_streaming:
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(fn, **options)
        elif method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(fn, **options)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(fn, **options)
    return grpc.method_handlers_generic_handler(SERVICE, handlers)


def _unimplemented(name: str) -> Callable[..., Any]:
    async def refuse(request: Any, context: Context) -> Any:
        await context.abort(grpc.StatusCode.UNIMPLEMENTED, f"{name} is not implemented")

    return refuse
