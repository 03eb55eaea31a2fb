"""The take of a read's sends: SendMessageProcessor's side of ``RemotingChannel.on_read``'s
``split_sends`` (issue 22, lever 1).

A read's SEND_MESSAGE_V2 frames come read into their puts (``spec_for`` gives the split the
rules and hosts); ``take`` queues one send in the ``PutBatcher`` when its topic passes the
checks ``_topic_takes`` remembers (the broker and the topic writable, the name valid and
allowed, the queue in range), else leaves it to ``process_fast``, the reference. With the C
frames on, the leading sends of a read are taken in one C call (``take_sends``, send_take.c,
fed by ``taker``): the same checks against the same table, the same ``DeferredReply`` and
the same queues, stopping at the first send it does not take; that one and every later one
go through ``take`` (or the Python path) in order.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from rocketq.common import native_record
from rocketq.common.topic import NOT_ALLOWED_SEND_TOPICS, validate_topic
from rocketq.common.topic_config import PERM_WRITE, TopicConfig
from rocketq.remoting import native_frames
from rocketq.remoting.channel import DeferredReply, RemotingChannel
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.store.commitlog_send import SendPut

if TYPE_CHECKING:
    from rocketq.broker.broker_context import BrokerContext
    from rocketq.broker.put_batcher import PutBatcher

_TOPICS_CACHED = 4096  # topics _topic_takes let through, remembered, then forgotten
_SPEC_KEY = "rocketq.send_spec"  # a connection's split_sends spec, in its attributes


@lru_cache(maxsize=4096)
def _valid_topic(topic: str) -> bool:
    """``validate_topic``'s verdict (as ``_msg_check`` asks it), remembered per topic."""
    return validate_topic(topic) is None


class SendTakes:
    """The take of split sends, for ``SendMessageProcessor`` (which sets the fields below)."""

    broker: BrokerContext
    put_batcher: PutBatcher
    # topic -> (its config, the queue limit) of topics _topic_takes let through; valid while
    # the table holds that same (frozen) config
    _takes: dict[str, tuple[TopicConfig, int]]
    native_reads: int  # sends read by send_put_of, for tests and benches
    split_reads: int  # of them, read in their read's split (split_sends)
    #: take_sends' state (``native_frames.SendTaker``), made by the first ``spec_for``
    taker: native_frames.SendTaker | None
    #: False: no taker (every send through ``take``, the reference), for tests and benches
    take_native = True

    def _rules_now(self) -> tuple[tuple[bytes, ...], bytes, bytes, bytes, int]:
        raise NotImplementedError

    def _bytes_of(self, host: str | tuple[str, int]) -> bytes:
        raise NotImplementedError

    def spec_for(self, channel: RemotingChannel) -> native_frames.SendSpec | None:
        """The ``split_sends`` spec of a read of ``channel`` (``spec_state``'s first)."""
        state = self.spec_state(channel)
        return state[0] if state is not None else None

    def spec_state(self, channel: RemotingChannel) -> tuple[native_frames.SendSpec, object] | None:
        """The ``split_sends`` spec of a read of ``channel`` (``RemotingChannel.on_read``)
        and the broker config it was made from: its SEND_MESSAGE_V2 frames read into
        SendPuts by the split; None with the C record module off (the puts are the Python
        path's then). Kept on the channel while the broker's config (the rules, the store
        host) stays the same object (the channel's ``split_take`` checks that per read)."""
        if native_record.RECORD is None:
            return None
        config = self.broker.config  # the store host is its broker_ip1 and the port
        cached = channel.attributes.get(_SPEC_KEY)
        if cached is not None and cached[0] is config:  # type: ignore[index]
            return cached[1], config  # type: ignore[index]
        spec: native_frames.SendSpec = (
            int(RequestCode.SEND_MESSAGE_V2),
            self._rules_now(),
            SendPut,
            self._bytes_of(channel.remote_addr),
            self._bytes_of(self.broker.store_host),
        )
        channel.attributes[_SPEC_KEY] = (config, spec)
        if self.taker is None and self.take_native:
            self.taker = (
                self._takes,
                self.broker.topic_config_manager.topic_config_table,
                self.broker,
                DeferredReply,
                self.put_batcher,
                self,
                PERM_WRITE,
            )
        return spec, config

    def take(
        self, channel: RemotingChannel, request: RemotingCommand, put: SendPut
    ) -> DeferredReply | None:
        """A send the read's split read into ``put`` (``split_sends``): queued as
        ``process_fast`` queues one; None leaves the request to ``process_fast``."""
        topic = put.topic
        taken = self._takes.get(topic)  # _topic_takes's remembered case, inline
        if (
            taken is None
            or taken[0] is not self.broker.topic_config_manager.topic_config_table.get(topic)
            or put.queue_id >= taken[1]
            or not self.broker.config.broker_permission & PERM_WRITE
        ) and not self._topic_takes(topic, put.queue_id):
            return None
        deferred = DeferredReply(channel, request)  # _queue_read's steps, one call less
        self.native_reads += 1
        self.split_reads += 1
        self.put_batcher.submit_send(put, deferred)
        return deferred

    def _queue_read(
        self, channel: RemotingChannel, request: RemotingCommand, put: SendPut
    ) -> DeferredReply | None:
        """A SendPut C read (``send_put_of``, alone or in the read's split) queued for the
        flush when its topic passes the checks (``_topic_takes``); None leaves the request
        to ``process_fast``'s Python path."""
        if not self._topic_takes(put.topic, put.queue_id):
            return None
        deferred = DeferredReply(channel, request)
        self.native_reads += 1
        self.put_batcher.submit_send(put, deferred)  # answered by self.answers (its lane)
        return deferred

    def _topic_takes(self, topic: str, queue_id: int) -> bool:
        """True when ``_msg_check`` lets a send to ``topic`` and ``queue_id`` through without
        a word: the broker and the existing topic writable, the name valid and allowed, the
        queue in range (else the Python path reads the send again and answers it)."""
        if not self.broker.config.broker_permission & PERM_WRITE:
            return False
        tc = self.broker.topic_config_manager.topic_config_table.get(topic)
        taken = self._takes.get(topic)
        if taken is None or taken[0] is not tc:  # first seen, or its config changed
            if tc is None or not self._topic_allowed(topic, tc):
                return False
            if len(self._takes) >= _TOPICS_CACHED:
                self._takes.clear()
            taken = self._takes[topic] = (tc, max(tc.read_queue_nums, tc.write_queue_nums))
        return queue_id < taken[1]

    @staticmethod
    def _topic_allowed(topic: str, tc: TopicConfig) -> bool:
        """The checks of ``_topic_takes`` that hold while the topic's config is the same."""
        return topic not in NOT_ALLOWED_SEND_TOPICS and _valid_topic(topic) and tc.writeable
