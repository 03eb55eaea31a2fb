"""The switch between the compiled request frames and the pure-Python ones (issue 22).

``FRAMES`` is the C module ``rocketq._native._remoting`` (built by ``setup.py``) or None: None
when the extension is missing or the environment says ``ROCKETQ_NATIVE=0`` (the same switch
as the record paths, ``rocketq.common.native_record``). ``FrameDecoder`` (codec.py) reads it on
every read and ``CommandCustomHeader`` (custom_header.py) its header reader on every header,
so :func:`use` (the tests run both paths) switches every connection at once.
The pure-Python decoder is the reference: the C splitter hands back, as bytes, every frame
whose header it does not handle, and the Python decoder decodes it or words its error.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Protocol, TypeAlias

from rocketq.common.native_record import ENV_SWITCH
from rocketq.errors import RemotingCommandError
from rocketq.remoting.protocol import custom_header
from rocketq.remoting.protocol.codes import LanguageCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand

log = logging.getLogger(__name__)


#: split_sends's spec: (request code, send_put_of's rules, put class, born host, store host)
SendSpec: TypeAlias = tuple[
    int, tuple[tuple[bytes, ...], bytes, bytes, bytes, int], type, bytes, bytes
]
#: a fast-path send of a read as split_sends gives it: (the request, its put, its JSON
#: header), the request's extFields left empty (``full_request`` reads them when needed)
SendItem: TypeAlias = tuple[RemotingCommand, Any, bytes]
#: take_sends' state (the send processor's): its takes table (topic -> (config, queue
#: limit)), the topic table, the broker (its config's permission), the DeferredReply class,
#: the PutBatcher, the processor (its counters), PERM_WRITE
SendTaker: TypeAlias = tuple[dict[str, Any], dict[str, Any], Any, type, Any, Any, int]
#: send_answer_flush's answers of a flush: the indexes the Python path answers, the
#: connections, their reply buffers and counts, the requests answered in C and their
#: seconds, their sizes by topic
FlushAnswers: TypeAlias = tuple[
    list[int],
    list[Any],
    list[bytes],
    list[int],
    list[RemotingCommand],
    list[float],
    dict[str, list[int]],
]


#: count_figures' modes: put latencies (int ms, the maximum kept), an rpc histogram (float
#: ms, its sum kept), message sizes
PUT_LATENCIES, RPC_LATENCIES, SIZES = 0, 1, 2


class FramePaths(Protocol):
    """What codec.py uses of ``rocketq._native._remoting`` (its stub has the details)."""

    def encode_json_head(self, cmd: RemotingCommand, /) -> bytes | None: ...
    def send_reply_heads(
        self,
        pieces: tuple[bytes, ...],
        items: list[tuple[int, str, int, int]] | list[tuple[int, int, int, int]],
        prefix: bytes = ...,
        /,
    ) -> bytes | None: ...
    def send_reply_runs(
        self,
        pieces: tuple[bytes, ...],
        items: list[tuple[int, int, int, int]],
        prefix: bytes,
        ends: list[int],
        /,
    ) -> list[bytes] | None: ...
    def send_answer_flush(
        self,
        pieces: tuple[bytes, ...],
        prefix: bytes,
        deferreds: list[Any],
        puts: list[Any],
        values: list[int],
        indexes: Sequence[int],
        skip_topics: AbstractSet[str],
        json: object,
        now: float,
        /,
    ) -> FlushAnswers | None: ...
    def header_from_fields(self, cls: type, fields: object, table: object, /) -> object: ...
    def ext_fields_of(self, header: bytes, /) -> dict[str, str] | None: ...
    def send_put_of(
        self,
        fields: dict[str, str],
        body: bytes | bytearray | memoryview,
        rules: tuple[tuple[bytes, ...], bytes, bytes, bytes, int],
        put_cls: type,
        born_host: bytes,
        store_host: bytes,
        /,
    ) -> Any: ...
    def count_figures(
        self,
        counts: list[int],
        bounds: tuple[float, ...] | tuple[int, ...],
        values: list[float] | list[int],
        scale: float,
        mode: int,
        start: float,
        /,
    ) -> Any: ...
    def take_sends(
        self, items: list[Any], channel: object, room: int, taker: SendTaker, /
    ) -> int: ...
    def split_take(
        self,
        buffer: bytes | bytearray | memoryview,
        max_frame_size: int,
        spec: SendSpec,
        channel: object,
        room: int,
        taker: SendTaker,
        config: object,
        /,
    ) -> int | tuple[list[RemotingCommand | bytes | SendItem], int, str | None, int] | None: ...
    def split_frames(
        self, buffer: bytes | bytearray | memoryview, max_frame_size: int, /
    ) -> tuple[list[RemotingCommand | bytes], int, str | None]: ...
    def split_sends(
        self, buffer: bytes | bytearray | memoryview, max_frame_size: int, spec: SendSpec, /
    ) -> tuple[list[RemotingCommand | bytes | SendItem], int, str | None]: ...


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
    COMPILED = _compiled  # type: ignore[assignment]

FRAMES: FramePaths | None = None


def use(native: bool) -> bool:
    """Select the C frames and header reader (when built) or the pure-Python ones; True when
    C is now in use."""
    global FRAMES
    FRAMES = COMPILED if native else None
    custom_header.NATIVE = FRAMES.header_from_fields if FRAMES is not None else None
    return FRAMES is not None


def full_request(item: SendItem) -> RemotingCommand:
    """The request of a send ``split_sends`` read, with its extFields: the split reads a
    fast-path send's put straight from its header's text and leaves the request's dict empty
    (no str a field); a send the fast path declines goes to the Python path, which reads them."""
    request = item[0]
    if not request.ext_fields:
        compiled = COMPILED
        fields = compiled.ext_fields_of(item[2]) if compiled is not None else None
        if fields is None:  # the decoder that split these bytes reads them again: never
            raise RemotingCommandError("a split send's header no longer decodes")
        request.ext_fields = fields
    return request


use(os.environ.get(ENV_SWITCH, "1") != "0")
