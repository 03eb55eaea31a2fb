"""The one compiled module of rocketq: ``rocketq._native._record`` (issue 13, lever 4).

Everything else is in pyproject.toml. The extension is not optional: a compiler error fails
``pip install`` (and so ``make venv`` / ``make test``) loudly; the pure-Python code paths stay
and are selected with ``ROCKETQ_NATIVE=0`` (``rocketq.common.native_record``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "rocketq._native._record",
            sources=[
                f"src/rocketq/_native/{part}.c"
                for part in ("_record", "crc32", "properties", "encode", "scan", "decode")
            ],
            depends=["src/rocketq/_native/record.h"],
            # the parts share functions; only PyInit__record leaves the shared object
            extra_compile_args=[
                "-Wall",
                "-Wextra",
                "-Wno-unused-parameter",
                "-fvisibility=hidden",
            ],
            libraries=["dl"],  # dlopen of libz.so.1 (in libc itself from glibc 2.34 on)
        )
    ]
)
