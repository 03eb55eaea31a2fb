"""Running a server command, and turning what stops it from starting into one line.

RocketMQ's startup scripts print the exception; an operator then reads a stack to learn
that a port is taken. Here a port in use names the option that moves it, and a store whose
``lock`` another process holds names that process (``rocketq.store.store_lock``); anything
else still raises (a bug should show its traceback).
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import re
import socket
from collections.abc import Coroutine, Mapping
from typing import Any

import click

from rocketq.common.heap_freeze import HEAP
from rocketq.errors import StoreLockedError
from rocketq.remoting import event_loop
from rocketq.store.store_lock import describe_holder

GC_FREEZE_ENV = "ROCKETQ_GC_FREEZE"
_BIND_ADDRESS = re.compile(r"address \('([^']*)', (\d+)")
_PORT_ERRORS = {errno.EADDRINUSE, errno.EACCES, errno.EADDRNOTAVAIL}


def run_server(
    main: Coroutine[Any, Any, None], *, ports: Mapping[int, str], host: str, store_option: str
) -> None:
    """``event_loop.run(main)``; a taken port or a locked store exits 1 with one line.

    ``ports`` maps each port the command binds to the option that sets it."""
    try:
        event_loop.run(main)
    except StoreLockedError as exc:
        raise click.ClickException(locked_store_line(exc, store_option)) from None
    except OSError as exc:
        if exc.errno not in _PORT_ERRORS:
            raise
        raise click.ClickException(port_line(exc, ports, host)) from None


def freeze_start_up_heap() -> None:
    """Collect once, then move every object alive after start-up (modules, configs, topic
    and subscription tables) to the permanent generation (``gc.freeze``), so that a full
    collection walks only what was made since. A broker holds 80-95k start-up objects, and a
    full collection over them stopped its loop for ~40 ms of CPU (BENCHMARKS.md, issue 22:
    latency at 1,000 msg/s). The topic and route tables that grow later are frozen after
    each growth step from then on (``rocketq.common.heap_freeze``). Called once a server
    command's servers listen; ``ROCKETQ_GC_FREEZE=0`` turns both off."""
    if os.environ.get(GC_FREEZE_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return
    gc.collect()
    gc.freeze()
    HEAP.enable()


def locked_store_line(exc: StoreLockedError, store_option: str) -> str:
    lock = exc.filename if isinstance(exc.filename, str) else ""
    if not lock:
        return f"{exc.strerror or exc}: stop the other broker or give another {store_option}"
    return (
        f"the store {os.path.dirname(lock)} is in use by {describe_holder(lock)}: stop it, "
        f"or give another {store_option}"
    )


def port_line(exc: OSError, ports: Mapping[int, str], host: str) -> str:
    """Which port failed (from the message, else the first of ``ports`` that will not bind)."""
    found = _BIND_ADDRESS.search(str(exc))
    port = int(found.group(2)) if found else _first_unbindable(ports, host)
    if port is None or port not in ports:
        return f"cannot listen: {exc.strerror or exc} (is another server running?)"
    why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror})"
    return (
        f"port {port} {why} on {host}: stop what listens there, or choose another with "
        f"{ports[port]}"
    )


def _first_unbindable(ports: Mapping[int, str], host: str) -> int | None:
    for port in ports:
        try:
            with socket.socket() as probe:
                probe.bind((host, port))
        except OSError:
            return port
    return None


def setup_logging() -> None:
    """INFO to stderr with time, level and logger, unless logging is already set up."""
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s"
        )
