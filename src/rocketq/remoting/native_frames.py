"""The switch between the compiled request frames and the pure-Python ones (issue 22).

``FRAMES`` is the C module ``rocketq._native._remoting`` (built by ``setup.py``) or None: None
when the extension is missing or the environment says ``ROCKETQ_NATIVE=0`` (the same switch
as the record paths, ``rocketq.common.native_record``). ``FrameDecoder`` (codec.py) reads it on
every read, so :func:`use` (the tests run both paths) switches every connection at once.
The pure-Python decoder is the reference: the C splitter hands back, as bytes, every frame
whose header it does not handle, and the Python decoder decodes it or words its error.
"""

from __future__ import annotations

import logging
import os
from typing import Protocol

from rocketq.common.native_record import ENV_SWITCH
from rocketq.remoting.protocol.codes import LanguageCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand

log = logging.getLogger(__name__)


class FramePaths(Protocol):
    """What codec.py uses of ``rocketq._native._remoting`` (its stub has the details)."""

    def split_frames(
        self, buffer: bytes | bytearray | memoryview, max_frame_size: int, /
    ) -> tuple[list[RemotingCommand | bytes], int, str | None]: ...


COMPILED: FramePaths | None
try:
    from rocketq._native import _remoting as _compiled
except ImportError as exc:  # pragma: no cover - a source tree without the built extension
    log.debug("rocketq._native._remoting not built (%s): pure-Python frames", exc)
    COMPILED = None
else:
    _compiled.configure(
        RemotingCommand,
        sorted(LanguageCode, key=int),
        LanguageCode.OTHER,
        SerializeType.JSON,
        SerializeType.ROCKETMQ,
    )
    COMPILED = _compiled

FRAMES: FramePaths | None = COMPILED if os.environ.get(ENV_SWITCH, "1") != "0" else None


def use(native: bool) -> bool:
    """Select the C frames (when built) or the pure-Python ones; True when C is now in use."""
    global FRAMES
    FRAMES = COMPILED if native else None
    return FRAMES is not None
