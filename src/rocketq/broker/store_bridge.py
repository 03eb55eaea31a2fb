"""The broker's view of the message store and the message codec: every call the processors
make into ``rocketq.store`` and ``rocketq.common`` goes through here, so the processors read
as RocketMQ's and the seam to the store stays in one place.

Store calls that may touch the disk run in threads (the callers use ``asyncio.to_thread``);
puts are submitted to the store and awaited through :func:`await_put`: a put that is already
complete (ASYNC_FLUSH) costs no loop hop, and the futures the group commit completes from
its thread (SYNC_FLUSH) wake the loop once per burst, not once per message.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocketq.broker.config import BrokerConfig
    from rocketq.broker.filter import ExpressionMessageFilter

log = logging.getLogger(__name__)

InnerMessage = Any  # rocketq.common.message.MessageExt


def open_message_store(
    config: BrokerConfig, store_host: tuple[str, int], arriving: Callable[..., None]
) -> Any:
    """Build the StoreConfig from broker.conf's store keys, open (recover) and start the store."""
    from rocketq.store.config import StoreConfig
    from rocketq.store.message_store import MessageStore

    props = config.store_properties
    if "haListenPort" in props:
        ha_port = int(props["haListenPort"])
    else:  # BrokerStartup: listenPort + 1 (a test broker on port 0 takes any free port)
        ha_port = config.listen_port + 1 if config.listen_port else 0
    store_config, unknown = StoreConfig.from_properties(
        props,
        store_path_root_dir=config.store_path_root_dir,
        store_host=store_host,
        max_message_size=config.max_message_size,
        broker_role=config.broker_role,
        ha_listen_port=ha_port,
        ha_listen_host=config.listen_host,
    )
    for key in sorted(unknown):
        log.info("broker.conf store key %s is not used by this store", key)
    store = MessageStore(store_config, message_arriving_listener=arriving)
    store.load()
    store.start()
    try:
        store.start_ha()
    except BaseException:
        store.shutdown()
        raise
    return store


def new_message(
    *,
    topic: str,
    queue_id: int,
    body: bytes,
    flag: int,
    properties: dict[str, str],
    sys_flag: int,
    born_timestamp: int,
    born_host: tuple[str, int],
    store_host: tuple[str, int],
    reconsume_times: int,
) -> InnerMessage:
    from rocketq.common.message import MessageExt

    return MessageExt(
        topic=topic,
        body=bytes(body),
        flag=flag,
        properties=properties,
        queue_id=queue_id,
        sys_flag=sys_flag,
        born_timestamp=born_timestamp,
        born_host=born_host,
        store_host=store_host,
        reconsume_times=reconsume_times,
    )


def decode_batch(body: bytes) -> list[Any]:
    from rocketq.common.message_decoder import decode_batch_messages

    return list(decode_batch_messages(body))


async def put_message(store: Any, msg: InnerMessage, *, wait_store_msg_ok: bool = True) -> Any:
    return await await_put(store.async_put_message(msg))


async def put_messages(store: Any, msgs: list[InnerMessage]) -> Any:
    """One append for the whole batch: consecutive queue offsets, comma-joined msg ids."""
    return await await_put(store.async_put_messages(msgs))


class _BurstWaker:
    """Completes loop futures for store-thread futures, one ``call_soon_threadsafe`` a burst."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._done: collections.deque[tuple[asyncio.Future[Any], Future[Any]]] = collections.deque()
        self._lock = threading.Lock()
        self._scheduled = False

    def wrap(self, source: Future[Any]) -> asyncio.Future[Any]:
        target: asyncio.Future[Any] = self.loop.create_future()
        source.add_done_callback(lambda f: self._completed(target, f))
        return target

    def _completed(self, target: asyncio.Future[Any], source: Future[Any]) -> None:
        self._done.append((target, source))
        with self._lock:
            wake, self._scheduled = not self._scheduled, True
        if wake:
            self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        with self._lock:
            self._scheduled = False
        while self._done:
            target, source = self._done.popleft()
            if target.done():
                continue
            exc = source.exception()
            if exc is not None:
                target.set_exception(exc)
            else:
                target.set_result(source.result())


_wakers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _BurstWaker] = (
    weakref.WeakKeyDictionary()
)


async def await_put(future: Future[Any]) -> Any:
    """The result of a store put future, awaited on the running loop."""
    if future.done():
        return future.result()
    loop = asyncio.get_running_loop()
    waker = _wakers.get(loop)
    if waker is None:
        waker = _wakers[loop] = _BurstWaker(loop)
    return await waker.wrap(future)


def put_status(result: Any) -> str:
    return str(result.status.name)


def queue_offset(result: Any) -> int:
    append = result.append_result
    return 0 if append is None else int(append.queue_offset)


def offset_msg_id(result: Any, store_host: tuple[str, int]) -> str:
    append = result.append_result
    if append is None:
        return ""
    if append.msg_id:
        return str(append.msg_id)
    from rocketq.common.message_decoder import create_message_id

    return str(create_message_id(store_host, int(append.wrote_offset)))


def get_message(
    store: Any,
    group: str,
    topic: str,
    queue_id: int,
    offset: int,
    max_nums: int,
    message_filter: ExpressionMessageFilter,
) -> Any:
    return store.get_message(group, topic, queue_id, offset, max_nums, message_filter)


def _buffers(result: Any) -> list[bytes]:
    return [bytes(b) for b in result.message_buffers]


def filter_by_tags(result: Any, message_filter: ExpressionMessageFilter) -> bytes:
    """The FOUND records whose TAGS string matches (hash collisions are dropped), concatenated."""
    buffers = _buffers(result)
    if message_filter.matches_all:
        return b"".join(buffers)
    from rocketq.common import message_const as mc
    from rocketq.common.message_decoder import decode_message

    kept = []
    for buf in buffers:
        msg = decode_message(buf, check_crc=False, read_body=False)
        if message_filter.is_matched_by_tags(msg.properties.get(mc.PROPERTY_TAGS)):
            kept.append(buf)
    return b"".join(kept)


def decode_records(result: Any) -> list[Any]:
    from rocketq.common.message_decoder import decode_message

    return [decode_message(buf, check_crc=False, decompress=False) for buf in _buffers(result)]


def get_max_offset_in_queue(store: Any, topic: str, queue_id: int) -> int:
    return int(store.get_max_offset_in_queue(topic, queue_id))


def get_min_offset_in_queue(store: Any, topic: str, queue_id: int) -> int:
    return int(store.get_min_offset_in_queue(topic, queue_id))


def check_in_disk_by_consume_offset(store: Any, topic: str, queue_id: int, offset: int) -> bool:
    return bool(store.check_in_disk_by_consume_offset(topic, queue_id, offset))


def get_offset_in_queue_by_time(store: Any, topic: str, queue_id: int, timestamp: int) -> int:
    return int(store.get_offset_in_queue_by_time(topic, queue_id, timestamp))


def get_earliest_message_time(store: Any, topic: str, queue_id: int) -> int:
    return int(store.get_earliest_message_time(topic, queue_id))


async def look_message_by_offset(store: Any, offset: int) -> Any:
    return await asyncio.to_thread(store.look_message_by_offset, offset)


def select_one_message_by_offset(store: Any, offset: int) -> bytes | None:
    found = store.select_one_message_by_offset(offset)
    return None if found is None else bytes(found)


def query_message(
    store: Any, topic: str, key: str, max_num: int, begin: int, end: int
) -> tuple[bytes, int, int]:
    result = store.query_message(topic, key, max_num, begin, end)
    body = b"".join(bytes(b) for b in result.message_buffer_list)
    return body, int(result.index_last_update_timestamp), int(result.index_last_update_phyoffset)


def delete_topics(store: Any, topics: set[str]) -> None:
    delete = getattr(store, "delete_topics", None)
    if delete is not None:
        delete(topics)


def runtime_info(store: Any) -> dict[str, str]:
    info = getattr(store, "get_runtime_info", None)
    return {str(k): str(v) for k, v in (info() if info is not None else {}).items()}
