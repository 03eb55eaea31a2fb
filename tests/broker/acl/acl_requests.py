"""One request of each kind the ACL tests sign as each principal: name -> builder(principal)."""

from __future__ import annotations

from collections.abc import Callable

from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import UpdateConsumerOffsetRequestHeader
from rocketq.testing.wire import create_topic_request, heartbeat, pull_request, send_request


def offset_update(group: str, topic: str, offset: int) -> RemotingCommand:
    header = UpdateConsumerOffsetRequestHeader(
        consumer_group=group, topic=topic, queue_id=0, commit_offset=offset
    )
    return RemotingCommand.create_request(
        RequestCode.UPDATE_CONSUMER_OFFSET, header.to_ext_fields()
    )


def runtime_info() -> RemotingCommand:
    return RemotingCommand.create_request(RequestCode.GET_BROKER_RUNTIME_INFO)


REQUESTS: dict[str, Callable[[str], RemotingCommand]] = {
    "send": lambda who: send_request(
        "TopicA", f"from-{who}".encode(), code=RequestCode.SEND_MESSAGE_V2
    ),
    "pull": lambda who: pull_request("GroupA", "TopicA", 0, 0, suspend_ms=0),
    "heartbeat": lambda who: heartbeat(f"127.0.0.1@{who}", "GroupA", "TopicA"),
    "offset": lambda who: offset_update("GroupA", "TopicA", 700 + len(who)),
    "create_topic": lambda who: create_topic_request(f"Created-{who}"),
    "runtime_info": lambda who: runtime_info(),
}
