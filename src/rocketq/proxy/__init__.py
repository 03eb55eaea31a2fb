"""rocketq.proxy: RocketMQ 5's gRPC endpoint (RocketMQ's ``proxy`` module).

``apache.rocketmq.v2.MessagingService`` as a thin layer (``messaging_service``): each RPC runs
an activity (``route_activity``, ``producer_activity``, ``consumer_activity``, ``telemetry``)
that talks to brokers through one ``MessagingBackend`` over remoting, so local mode (inside the
broker process, ``rocketq broker --enable-proxy``) and cluster mode (``rocketq proxy -n NS``)
share all code. ``message_converter`` maps the gRPC message model onto 4.x messages,
``status`` the failures onto ``apache.rocketmq.v2.Code``; ``protos`` holds rocketq's own
``.proto`` files and the modules generated from them. It sits above ``broker`` and ``client``
and may import both; nothing but ``cli`` imports it (pyproject.toml's import contracts).
"""
