"""rocketq.proxy: RocketMQ 5's gRPC endpoint (RocketMQ's ``proxy`` module), to come.

It will hold the ``apache.rocketmq.v2.MessagingService`` servicers as a thin layer: each gRPC
activity translates a request into calls on the broker's processors (local mode, in the
broker's process) or into remoting requests to brokers (cluster mode), behind one interface.
It sits above ``broker`` and ``client`` and may import both; nothing but ``cli`` imports it.
The import contracts in pyproject.toml check that already.
"""
