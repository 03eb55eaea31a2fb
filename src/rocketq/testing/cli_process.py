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
