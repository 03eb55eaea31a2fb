"""Every request code the broker serves, for five accounts, against an explicit table of what
each code needs (RocketMQ 4.9.8's PlainAccessValidator#parse plus the stricter rules of
RELIABILITY.md): about 190 cells, checked in process through the same parse + validate the
broker's hook runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from rocketq.broker.acl.access_resource import parse
from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.errors import AclError
from rocketq.remoting.protocol.bodies import LockBatchRequestBody, MessageQueueData
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.testing.acl import ACCOUNTS, ADMIN, NORMAL, PUB_ONLY, SUB_ONLY, signed, write_acl
from rocketq.testing.wire import heartbeat, pull_request, send_request

DENIED = ("DeniedAK1", "DeniedSK1")
PRINCIPALS = {"admin": ADMIN, "pub_only": PUB_ONLY, "sub_only": SUB_ONLY, "normal": NORMAL}
PRINCIPALS["denied"] = DENIED
PUB, SUB = "PUB", "SUB"

# what each account owns, written out by hand from conftest.ACCOUNTS (the oracle)
OWNED: dict[str, Callable[[str], set[str]]] = {
    "admin": lambda res: {PUB, SUB},
    "pub_only": lambda res: {PUB} if res == "topic:TopicA" else set(),
    "sub_only": lambda res: {SUB} if res in ("topic:TopicA", "group:GroupA") else set(),
    "normal": lambda res: (
        set() if res == "topic:Forbidden" else ({PUB, SUB} if res.startswith("topic:") else {SUB})
    ),
    "denied": lambda res: set(),
}
IS_ADMIN = {"admin"}


def req(code: int, **fields: object) -> RemotingCommand:
    return RemotingCommand.create_request(code, {k: str(v) for k, v in fields.items()})


def lock(code: int) -> RemotingCommand:
    body = LockBatchRequestBody(
        consumer_group="GroupA",
        client_id="c1",
        mq_set=[MessageQueueData(topic="TopicA", broker_name="b", queue_id=0)],
    )
    return RemotingCommand.create_request(code, body=body.encode())


def producer_heartbeat() -> RemotingCommand:
    cmd = heartbeat("c1", "GroupA", "TopicA")
    cmd.body = b'{"clientID":"c1","consumerDataSet":[],"producerDataSet":[{"groupName":"PG"}]}'
    return cmd


V2 = RequestCode.SEND_MESSAGE_V2
TOPIC_A = {"topic:TopicA": SUB}
TOPIC_GROUP = {"topic:TopicA": SUB, "group:GroupA": SUB}
GROUP = {"group:GroupA": SUB}
# name -> (request builder, needs admin, resources needed)
CASES: dict[str, tuple[Callable[[], RemotingCommand], bool, dict[str, str]]] = {
    "10 send": (lambda: send_request("TopicA", b"x"), False, {"topic:TopicA": PUB}),
    "310 send v2": (lambda: send_request("TopicA", b"x", code=V2), False, {"topic:TopicA": PUB}),
    "310 send forbidden": (
        lambda: send_request("Forbidden", b"x", code=V2),
        False,
        {"topic:Forbidden": PUB},
    ),
    "310 send to retry topic": (
        lambda: req(V2, a="GroupA", b="%RETRY%GroupA", c="TBW102", d=4, e=0, f=0, g=0, h=0),
        False,
        GROUP,
    ),
    "320 batch": (
        lambda: send_request("TopicA", b"x", code=RequestCode.SEND_BATCH_MESSAGE),
        False,
        {"topic:TopicA": PUB},
    ),
    "324 reply": (
        lambda: req(RequestCode.SEND_REPLY_MESSAGE, producerGroup="PG", topic="TopicA"),
        False,
        {"topic:TopicA": PUB},
    ),
    "325 reply v2": (
        lambda: req(RequestCode.SEND_REPLY_MESSAGE_V2, a="PG", b="TopicA"),
        False,
        {"topic:TopicA": PUB},
    ),
    "11 pull": (lambda: pull_request("GroupA", "TopicA", 0, 0), False, TOPIC_GROUP),
    "11 pull retry topic": (lambda: pull_request("GroupA", "%RETRY%GroupA", 0, 0), False, GROUP),
    "12 query": (lambda: req(RequestCode.QUERY_MESSAGE, topic="TopicA", key="k"), False, TOPIC_A),
    "14 query offset": (
        lambda: req(RequestCode.QUERY_CONSUMER_OFFSET, consumerGroup="GroupA", topic="TopicA"),
        False,
        TOPIC_GROUP,
    ),
    "15 update offset": (
        lambda: req(RequestCode.UPDATE_CONSUMER_OFFSET, consumerGroup="GroupA", topic="TopicA"),
        False,
        TOPIC_GROUP,
    ),
    "29 search offset": (
        lambda: req(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, topic="TopicA"),
        False,
        TOPIC_A,
    ),
    "30 max offset": (lambda: req(RequestCode.GET_MAX_OFFSET, topic="TopicA"), False, TOPIC_A),
    "31 min offset": (lambda: req(RequestCode.GET_MIN_OFFSET, topic="TopicA"), False, TOPIC_A),
    "32 earliest": (
        lambda: req(RequestCode.GET_EARLIEST_MSG_STORETIME, topic="TopicA"),
        False,
        TOPIC_A,
    ),
    "33 view by id": (lambda: req(RequestCode.VIEW_MESSAGE_BY_ID, offset=0), False, {}),
    "34 consumer heartbeat": (lambda: heartbeat("c1", "GroupA", "TopicA"), False, TOPIC_GROUP),
    "34 producer heartbeat": (producer_heartbeat, False, {}),
    "35 unregister producer": (
        lambda: req(RequestCode.UNREGISTER_CLIENT, clientID="c1", producerGroup="PG"),
        False,
        {},
    ),
    "35 unregister consumer": (
        lambda: req(RequestCode.UNREGISTER_CLIENT, clientID="c1", consumerGroup="GroupA"),
        False,
        GROUP,
    ),
    "36 send back": (
        lambda: req(RequestCode.CONSUMER_SEND_MSG_BACK, group="GroupA", offset=0),
        False,
        GROUP,
    ),
    "37 end transaction": (lambda: req(RequestCode.END_TRANSACTION, producerGroup="PG"), False, {}),
    "38 consumer list": (
        lambda: req(RequestCode.GET_CONSUMER_LIST_BY_GROUP, consumerGroup="GroupA"),
        False,
        GROUP,
    ),
    "41 lock": (lambda: lock(RequestCode.LOCK_BATCH_MQ), False, TOPIC_GROUP),
    "42 unlock": (lambda: lock(RequestCode.UNLOCK_BATCH_MQ), False, TOPIC_GROUP),
    "26 broker config": (lambda: req(RequestCode.GET_BROKER_CONFIG), False, {}),
    "28 runtime info": (lambda: req(RequestCode.GET_BROKER_RUNTIME_INFO), False, {}),
    "52 acl version": (lambda: req(RequestCode.GET_BROKER_CLUSTER_ACL_INFO), False, {}),
    **{
        f"{int(code)} admin": ((lambda code=code: req(code, topic="TopicA")), True, {})
        for code in (
            RequestCode.UPDATE_AND_CREATE_TOPIC,
            RequestCode.UPDATE_BROKER_CONFIG,
            RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
            RequestCode.DELETE_SUBSCRIPTIONGROUP,
            RequestCode.DELETE_TOPIC_IN_BROKER,
            RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
            RequestCode.DELETE_ACL_CONFIG,
            RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
            RequestCode.GET_BROKER_CLUSTER_ACL_CONFIG,
        )
    },
}


def expected(principal: str, needs_admin: bool, resources: dict[str, str]) -> bool:
    if needs_admin and principal not in IS_ADMIN:
        return False
    return all(perm in OWNED[principal](res) for res, perm in resources.items())


@pytest.fixture(scope="module")
def manager(tmp_path_factory: pytest.TempPathFactory) -> PlainPermissionManager:
    path = Path(tmp_path_factory.mktemp("acl")) / "plain_acl.yml"
    denied = {"accessKey": DENIED[0], "secretKey": DENIED[1], "defaultTopicPerm": "DENY"}
    write_acl(path, [*ACCOUNTS, denied | {"defaultGroupPerm": "DENY"}])
    loaded = PlainPermissionManager(path)
    loaded.load()
    return loaded


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("principal", sorted(PRINCIPALS))
def test_each_code_needs_exactly_its_table_entry(
    manager: PlainPermissionManager, principal: str, case: str
) -> None:
    build, needs_admin, resources = CASES[case]
    cmd = signed(build(), PRINCIPALS[principal])
    if expected(principal, needs_admin, resources):
        manager.validate(parse(cmd, "10.1.2.3:4567"), cmd)
    else:
        with pytest.raises(AclError, match=f"accessKey={PRINCIPALS[principal][0]}"):
            manager.validate(parse(cmd, "10.1.2.3:4567"), cmd)
