"""``rocketq`` commands as real processes: the ``python -c`` program that runs the CLI, and
reading a process's output until a line matches (a boot line, a port)."""

from __future__ import annotations

import asyncio
import re

#: ``[sys.executable, "-c", CLI_PROGRAM, "server", ...]`` runs ``rocketq server ...``
CLI_PROGRAM = "import sys; from rocketq.cli.main import cli; sys.exit(cli())"


async def read_until(stream: asyncio.StreamReader, pattern: str, timeout_s: float) -> re.Match[str]:
    """The first match of ``pattern`` in a line of ``stream``; AssertionError if the stream
    ends first, TimeoutError after ``timeout_s``."""
    async with asyncio.timeout(timeout_s):
        while True:
            line = (await stream.readline()).decode()
            if not line:
                raise AssertionError(f"process ended before printing {pattern!r}")
            found = re.search(pattern, line)
            if found is not None:
                return found


async def read_all(
    stream: asyncio.StreamReader, patterns: list[str], timeout_s: float
) -> list[re.Match[str]]:
    """The first match of each of ``patterns``, in whatever order their lines come (a
    supervisor's lines about one event race each other); errors as :func:`read_until`."""
    found: list[re.Match[str] | None] = [None] * len(patterns)
    async with asyncio.timeout(timeout_s):
        while not all(found):
            line = (await stream.readline()).decode()
            if not line:
                missing = [p for p, m in zip(patterns, found, strict=True) if m is None]
                raise AssertionError(f"process ended before printing {missing!r}")
            for i, pattern in enumerate(patterns):
                if found[i] is None:
                    found[i] = re.search(pattern, line)
    return [m for m in found if m is not None]
