"""rocketq's own ``.proto`` files for RocketMQ 5's gRPC protocol, and the modules generated
from them.

``definition.proto``, ``service.proto`` and ``admin.proto`` restate the wire facts of
apache/rocketmq-apis v2.1.2 (``apache/rocketmq/v2/``, the version the 5.1.2 Python client was
generated from): the package ``apache.rocketmq.v2``, every message, field name, number and type,
enum value and RPC, so the official 5.x clients interoperate. The ``*_pb2.py``, ``*_pb2.pyi``
and ``*_pb2_grpc.py`` beside them are generated and committed; ``make protos`` (``python -m
rocketq.proxy.protos.regenerate``) rebuilds them with grpcio-tools, and a test checks the
committed ones are current.
"""
