"""The compiled modules of rocketq: ``rocketq._native._record`` (issue 13, lever 4), the
record paths, and ``rocketq._native._remoting`` (issue 22, lever 1), the request frames, and
``rocketq._native._client`` (issue 22, lever 2), the producer's send codec, and
``rocketq._native._pop`` (issue 18), the POP request's paths, and ``rocketq._native._pop_client``
(issue 18), a consumer's batch ack.

Everything else is in pyproject.toml. The extensions are not optional: a compiler error fails
``pip install`` (and so ``make venv`` / ``make test``) loudly; the pure-Python code paths stay
and are selected with ``ROCKETQ_NATIVE=0`` (``rocketq.common.native_record`` and
``rocketq.remoting.native_frames``). ``ROCKETQ_SANITIZE=1`` builds both with AddressSanitizer
and UndefinedBehaviorSanitizer (``make fuzz``; never an installed build).
"""

import os

from setuptools import Extension, setup

COMPILE_ARGS = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden"]
LINK_ARGS: list[str] = []
if os.environ.get("ROCKETQ_SANITIZE") == "1":
    SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    COMPILE_ARGS += [*SANITIZE, "-O1", "-g", "-fno-omit-frame-pointer"]
    LINK_ARGS += SANITIZE

setup(
    ext_modules=[
        Extension(
            "rocketq._native._record",
            sources=[
                f"src/rocketq/_native/{part}.c"
                for part in (
                    "_record",
                    "crc32",
                    "properties",
                    "encode",
                    "append",
                    "send_batch",
                    "scan",
                    "decode",
                    "columns",
                    "get_message",
                    "dispatch",
                    "populate",
                    "reput_run",
                )
            ],
            depends=["src/rocketq/_native/record.h"],
            # the parts share functions; only PyInit__record leaves the shared object
            extra_compile_args=COMPILE_ARGS,
            extra_link_args=LINK_ARGS,
            libraries=["dl"],  # dlopen of libz.so.1 (in libc itself from glibc 2.34 on)
        ),
        Extension(
            "rocketq._native._remoting",
            sources=[
                f"src/rocketq/_native/{part}.c"
                for part in (
                    "_remoting",
                    "header",
                    "custom_header",
                    "command_encode",
                    "send_reply",
                    "send_flush",
                    "send_put",
                    "send_take",
                    "send_figures",
                )
            ],
            depends=["src/rocketq/_native/remoting.h"],
            extra_compile_args=COMPILE_ARGS,
            extra_link_args=LINK_ARGS,
        ),
        # issue 22, sync 1: BrokerStatsManager's put figures of a flush (broker_stats_manager)
        Extension(
            "rocketq._native._stats",
            sources=["src/rocketq/_native/stats.c"],
            extra_compile_args=COMPILE_ARGS,
            extra_link_args=LINK_ARGS,
        ),
        # issue 22, lever 2: the producer's send codec (rocketq.client.send_codec)
        Extension(
            "rocketq._native._client",
            sources=["src/rocketq/_native/client_codec.c"],
            extra_compile_args=COMPILE_ARGS,
            extra_link_args=LINK_ARGS,
        ),
        # issue 18: the POP request's paths (rocketq.broker.pop.pop_codec)
        Extension(
            "rocketq._native._pop",
            sources=["src/rocketq/_native/pop.c"],
            depends=["src/rocketq/_native/text.h"],
            extra_compile_args=COMPILE_ARGS,
            extra_link_args=LINK_ARGS,
        ),
        # issue 18: a consumer's batch ack of popped messages (rocketq.testing.pop)
        Extension(
            "rocketq._native._pop_client",
            sources=["src/rocketq/_native/pop_client.c"],
            depends=["src/rocketq/_native/text.h"],
            extra_compile_args=COMPILE_ARGS,
            extra_link_args=LINK_ARGS,
        ),
    ]
)
