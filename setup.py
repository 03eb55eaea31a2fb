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
            sources=["src/rocketq/_native/_record.c"],
            extra_compile_args=["-Wall", "-Wextra", "-Wno-unused-parameter"],
            libraries=["dl"],  # dlopen of libz.so.1 (in libc itself from glibc 2.34 on)
        )
    ]
)
