"""The gRPC floor: server CPU per call of a bare SendMessage service, on each option grpcio has.

    .venv/bin/python bench/grpc_floor.py [--quick] [--count N] [--only NAME,...]

The server is a child process answering ``apache.rocketmq.v2.MessagingService/SendMessage``
with nothing behind it: the request (a 1 KiB body) is decoded into ``SendMessageRequest`` and
a ``SendMessageResponse`` with one entry is returned (the ``bytes`` rows skip protobuf and echo
the raw request). The load is this process: 32 threads of grpcio's sync client, each waiting
for its answer, as the 5.x clients send (``rmq5_load.py``'s ``sync 32``). The CPU column is
the server process's user + system time around the timed calls, divided by the calls; it is
what the endpoint of ``rocketq server`` cannot go below whatever RocketMQ does behind it
(issue 19's target: 80 us per message).

Variants: ``grpc.aio`` under asyncio and uvloop; grpcio's sync server (a ThreadPoolExecutor of
1 to 32 workers; also with each answer made on an asyncio loop's thread, as the endpoint's
async code would need); channel arguments (``grpc.optimization_target``,
``grpc.max_concurrent_streams``, compression, ``grpc.so_reuseport``, the HTTP/2 BDP probe and
pings); the C core's poller (``GRPC_POLL_STRATEGY``); protobuf's upb backend against its
pure-Python one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import uvloop

SERVICE, METHOD = "apache.rocketmq.v2.MessagingService", "SendMessage"
SENDERS = 32
REPO = Path(__file__).resolve().parents[1]

NO_PINGS = [("grpc.http2.bdp_probe", 0), ("grpc.http2.max_pings_without_data", 0),
            ("grpc.keepalive_time_ms", 2**31 - 1)]  # fmt: skip
VARIANTS: list[dict[str, Any]] = [
    {"name": "aio asyncio", "kind": "aio", "loop": "asyncio"},
    {"name": "aio uvloop", "kind": "aio", "loop": "uvloop"},
    {"name": "sync 1 worker", "kind": "sync", "workers": 1},
    {"name": "sync 4 workers", "kind": "sync", "workers": 4},
    {"name": "sync 32 workers", "kind": "sync", "workers": 32},
    {"name": "sync 4 workers, answer on an asyncio loop", "kind": "sync", "workers": 4,
     "hop": True},
    {"name": "aio uvloop, optimization_target=throughput", "kind": "aio", "loop": "uvloop",
     "options": [("grpc.optimization_target", "throughput")]},
    {"name": "aio uvloop, optimization_target=latency", "kind": "aio", "loop": "uvloop",
     "options": [("grpc.optimization_target", "latency")]},
    {"name": "aio uvloop, max_concurrent_streams=32", "kind": "aio", "loop": "uvloop",
     "options": [("grpc.max_concurrent_streams", 32)]},
    {"name": "aio uvloop, compression off", "kind": "aio", "loop": "uvloop",
     "compression": True},
    {"name": "aio uvloop, so_reuseport=0", "kind": "aio", "loop": "uvloop",
     "options": [("grpc.so_reuseport", 0)]},
    {"name": "aio uvloop, no BDP probe/pings", "kind": "aio", "loop": "uvloop",
     "options": NO_PINGS},
    {"name": "aio uvloop, GRPC_POLL_STRATEGY=poll", "kind": "aio", "loop": "uvloop",
     "env": {"GRPC_POLL_STRATEGY": "poll"}},
    {"name": "sync 4 workers, optimization_target=throughput", "kind": "sync", "workers": 4,
     "options": [("grpc.optimization_target", "throughput")]},
    {"name": "aio uvloop, protobuf pure-Python", "kind": "aio", "loop": "uvloop",
     "env": {"PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION": "python"}},
    {"name": "aio uvloop, bytes (no protobuf)", "kind": "aio", "loop": "uvloop",
     "codec": "bytes"},
    {"name": "sync 4 workers, bytes (no protobuf)", "kind": "sync", "workers": 4,
     "codec": "bytes"},
]  # fmt: skip


# ---------------------------------------------------------------- the server (child process)


def _handlers(variant: dict[str, Any], aio: bool) -> grpc.GenericRpcHandler:
    if variant.get("codec") == "bytes":

        def answer(request: Any) -> Any:
            return request

        decode: Any = None
        encode: Any = None
    else:
        from rocketq.proxy.protos import definition_pb2 as pb
        from rocketq.proxy.protos import service_pb2 as spb

        def answer(request: Any) -> Any:
            entry = spb.SendResultEntry(
                status=pb.Status(code=pb.OK),
                message_id=request.messages[0].system_properties.message_id,
                offset=1,
            )
            return spb.SendMessageResponse(status=pb.Status(code=pb.OK), entries=[entry])

        decode, encode = (
            spb.SendMessageRequest.FromString,
            spb.SendMessageResponse.SerializeToString,
        )

    async def answer_async(request: Any, context: Any) -> Any:
        return answer(request)

    def answer_sync(request: Any, context: Any) -> Any:
        return answer(request)

    if not aio and variant.get("hop"):  # the answer made on an asyncio loop's thread
        loop = uvloop.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()

        def answer_sync(request: Any, context: Any) -> Any:
            return asyncio.run_coroutine_threadsafe(answer_async(request, context), loop).result()

    method = grpc.unary_unary_rpc_method_handler(
        answer_async if aio else answer_sync,
        request_deserializer=decode,
        response_serializer=encode,
    )
    return grpc.method_handlers_generic_handler(SERVICE, {METHOD: method})


def serve(variant: dict[str, Any]) -> None:
    """Listen on a free port, print it, answer until stdin closes."""
    options = [tuple(o) for o in variant.get("options", [])]
    compression = grpc.Compression.NoCompression if variant.get("compression") else None
    if variant["kind"] == "sync":
        pool = futures.ThreadPoolExecutor(max_workers=variant["workers"])
        server = grpc.server(pool, options=options, compression=compression)
        server.add_generic_rpc_handlers((_handlers(variant, aio=False),))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        print(json.dumps({"port": port, "protobuf": _protobuf_backend()}), flush=True)
        sys.stdin.read()
        server.stop(0)
        return

    async def main() -> None:
        server = grpc.aio.server(options=options, compression=compression)
        server.add_generic_rpc_handlers((_handlers(variant, aio=True),))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        print(json.dumps({"port": port, "protobuf": _protobuf_backend()}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await server.stop(0)

    if variant["loop"] == "uvloop":
        uvloop.run(main())
    else:
        asyncio.run(main())


def _protobuf_backend() -> str:
    from google.protobuf.internal import api_implementation

    return str(api_implementation.Type())


# ---------------------------------------------------------------- the load (this process)


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def request_bytes(size: int) -> bytes:
    from rocketq.proxy.protos import definition_pb2 as pb
    from rocketq.proxy.protos import service_pb2 as spb

    message = pb.Message(
        topic=pb.Resource(name="BenchFloor"),
        body=os.urandom(size),
        system_properties=pb.SystemProperties(
            message_id="01" + "0" * 30, body_encoding=pb.IDENTITY, message_type=pb.NORMAL
        ),
    )
    return spb.SendMessageRequest(messages=[message]).SerializeToString()


def load(port: int, count: int, body: bytes) -> tuple[float, int, int]:
    """``count`` calls from SENDERS threads; (seconds, calls answered, calls refused)."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(f"/{SERVICE}/{METHOD}")
        for _ in range(50):  # warm-up: connection, first-call paths
            call(body, timeout=10)
        todo, done, failed, lock = iter(range(count)), [0], [0], threading.Lock()

        def sender() -> None:
            n = 0
            for _ in todo:
                try:
                    call(body, timeout=10)
                    n += 1
                except grpc.RpcError:  # max_concurrent_streams may refuse a stream
                    failed[0] += 1
            with lock:
                done[0] += n

        threads = [threading.Thread(target=sender) for _ in range(SENDERS)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.perf_counter() - start, done[0], failed[0]


def measure(variant: dict[str, Any], count: int, body: bytes) -> dict[str, Any]:
    env = {**os.environ, **variant.get("env", {})}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", json.dumps(variant)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdin is not None
        hello = json.loads(proc.stdout.readline())
        load(hello["port"], 200, body)  # warm-up outside the timing
        before = cpu_s(proc.pid)
        seconds, calls, refused = load(hello["port"], count, body)
        used = cpu_s(proc.pid) - before
        proc.stdin.close()
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return {
        "name": variant["name"],
        "protobuf": hello["protobuf"] if variant.get("codec") != "bytes" else "-",
        "calls": calls,
        "refused": refused,
        "tps": round(calls / seconds),
        "cpu_us": round(used / calls * 1e6),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--quick", action="store_true", help="1,000 calls a variant, one run")
    ap.add_argument("--count", type=int, default=0, help="calls a variant (default 3,000)")
    ap.add_argument("--runs", type=int, default=3, help="rounds over the variants (median)")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--only", default="", help="variant names, separated by ;")
    args = ap.parse_args()
    if args.serve:
        serve(json.loads(args.serve))
        return
    count = args.count or (1_000 if args.quick else 3_000)
    runs = 1 if args.quick else args.runs
    wanted = {n.strip() for n in args.only.split(";") if n.strip()}
    chosen = [v for v in VARIANTS if not wanted or v["name"] in wanted]
    body = request_bytes(args.size)
    rows: dict[str, list[dict[str, Any]]] = {v["name"]: [] for v in chosen}
    for _ in range(runs):  # rounds interleave the variants: a load change hits them all
        for variant in chosen:
            rows[variant["name"]].append(measure(variant, count, body))
    print(f"grpcio {grpc.__version__}, {SENDERS} sync senders, {count} calls a variant x {runs}")
    print(
        f"{'variant':<50}{'protobuf':>9}{'refused':>8}{'TPS':>7}"
        f"{'us/call median':>16}{'min':>6}{'max':>6}"
    )
    for name, got in rows.items():
        cpu = sorted(r["cpu_us"] for r in got)
        tps = statistics.median(r["tps"] for r in got)
        print(
            f"{name:<50}{got[0]['protobuf']:>9}{sum(r['refused'] for r in got):>8}{tps:>7.0f}"
            f"{statistics.median(cpu):>16.0f}{cpu[0]:>6}{cpu[-1]:>6}"
        )
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
