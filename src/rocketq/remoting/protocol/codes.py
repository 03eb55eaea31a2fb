"""RocketMQ's request, language and serialize-type numbers and the version ordinals.

Names are RocketMQ's constant names (4.9.8 ``RequestCode``, ``LanguageCode``,
``SerializeType``, ``MQVersion.Version``). The response codes are ``rocketq.response_code``:
they sit below both this package and ``rocketq.errors``, whose error classes they key.
"""

from __future__ import annotations

from enum import IntEnum


class SerializeType(IntEnum):
    """The type byte in the high 8 bits of the header-length word."""

    JSON = 0
    ROCKETMQ = 1


class LanguageCode(IntEnum):
    """Sender language; JSON headers carry the name, binary headers the byte."""

    JAVA = 0
    CPP = 1
    DOTNET = 2
    PYTHON = 3
    DELPHI = 4
    ERLANG = 5
    RUBY = 6
    OTHER = 7
    HTTP = 8
    GO = 9
    PHP = 10
    OMS = 11
    RUST = 12
    NODE_JS = 13

    @classmethod
    def from_name(cls, name: str) -> LanguageCode:
        """Map a JSON language name; unknown names become OTHER."""
        return cls.__members__.get(name, cls.OTHER)

    @classmethod
    def from_byte(cls, value: int) -> LanguageCode:
        """Map a binary language byte; unknown bytes become OTHER."""
        try:
            return cls(value)
        except ValueError:
            return cls.OTHER


class RequestCode(IntEnum):
    """Request codes (4.9.8 ``RequestCode``)."""

    SEND_MESSAGE = 10
    PULL_MESSAGE = 11
    QUERY_MESSAGE = 12
    QUERY_BROKER_OFFSET = 13
    QUERY_CONSUMER_OFFSET = 14
    UPDATE_CONSUMER_OFFSET = 15
    UPDATE_AND_CREATE_TOPIC = 17
    UPDATE_AND_CREATE_TOPIC_LIST = 18
    GET_ALL_TOPIC_CONFIG = 21
    GET_TOPIC_CONFIG_LIST = 22
    GET_TOPIC_NAME_LIST = 23
    UPDATE_BROKER_CONFIG = 25
    GET_BROKER_CONFIG = 26
    TRIGGER_DELETE_FILES = 27
    GET_BROKER_RUNTIME_INFO = 28
    SEARCH_OFFSET_BY_TIMESTAMP = 29
    GET_MAX_OFFSET = 30
    GET_MIN_OFFSET = 31
    GET_EARLIEST_MSG_STORETIME = 32
    VIEW_MESSAGE_BY_ID = 33
    HEART_BEAT = 34
    UNREGISTER_CLIENT = 35
    CONSUMER_SEND_MSG_BACK = 36
    END_TRANSACTION = 37
    GET_CONSUMER_LIST_BY_GROUP = 38
    CHECK_TRANSACTION_STATE = 39
    NOTIFY_CONSUMER_IDS_CHANGED = 40
    LOCK_BATCH_MQ = 41
    UNLOCK_BATCH_MQ = 42
    GET_ALL_CONSUMER_OFFSET = 43
    GET_ALL_DELAY_OFFSET = 45
    CHECK_CLIENT_CONFIG = 46
    UPDATE_AND_CREATE_ACL_CONFIG = 50
    DELETE_ACL_CONFIG = 51
    GET_BROKER_CLUSTER_ACL_INFO = 52
    UPDATE_GLOBAL_WHITE_ADDRS_CONFIG = 53
    GET_BROKER_CLUSTER_ACL_CONFIG = 54  # 4.7-4.9.4; removed from later 4.9.x RequestCode
    PUT_KV_CONFIG = 100
    GET_KV_CONFIG = 101
    DELETE_KV_CONFIG = 102
    REGISTER_BROKER = 103
    UNREGISTER_BROKER = 104
    GET_ROUTEINFO_BY_TOPIC = 105
    GET_BROKER_CLUSTER_INFO = 106
    UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200
    GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201
    GET_TOPIC_STATS_INFO = 202
    GET_CONSUMER_CONNECTION_LIST = 203
    GET_PRODUCER_CONNECTION_LIST = 204
    WIPE_WRITE_PERM_OF_BROKER = 205
    GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206
    DELETE_SUBSCRIPTIONGROUP = 207
    GET_CONSUME_STATS = 208
    SUSPEND_CONSUMER = 209
    RESUME_CONSUMER = 210
    RESET_CONSUMER_OFFSET_IN_CONSUMER = 211
    RESET_CONSUMER_OFFSET_IN_BROKER = 212
    ADJUST_CONSUMER_THREAD_POOL = 213
    WHO_CONSUME_THE_MESSAGE = 214
    DELETE_TOPIC_IN_BROKER = 215
    DELETE_TOPIC_IN_NAMESRV = 216
    GET_KV_CONFIG_BY_VALUE = 217
    DELETE_KV_CONFIG_BY_VALUE = 218
    GET_KVLIST_BY_NAMESPACE = 219
    RESET_CONSUMER_CLIENT_OFFSET = 220
    GET_CONSUMER_STATUS_FROM_CLIENT = 221
    INVOKE_BROKER_TO_RESET_OFFSET = 222
    INVOKE_BROKER_TO_GET_CONSUMER_STATUS = 223
    GET_TOPICS_BY_CLUSTER = 224
    QUERY_TOPIC_CONSUME_BY_WHO = 300
    REGISTER_FILTER_SERVER = 301
    REGISTER_MESSAGE_FILTER_CLASS = 302
    QUERY_CONSUME_TIME_SPAN = 303
    GET_SYSTEM_TOPIC_LIST_FROM_NS = 304
    GET_SYSTEM_TOPIC_LIST_FROM_BROKER = 305
    CLEAN_EXPIRED_CONSUMEQUEUE = 306
    GET_CONSUMER_RUNNING_INFO = 307
    QUERY_CORRECTION_OFFSET = 308
    CONSUME_MESSAGE_DIRECTLY = 309
    SEND_MESSAGE_V2 = 310
    GET_UNIT_TOPIC_LIST = 311
    GET_HAS_UNIT_SUB_TOPIC_LIST = 312
    GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST = 313
    CLONE_GROUP_OFFSET = 314
    VIEW_BROKER_STATS_DATA = 315
    CLEAN_UNUSED_TOPIC = 316
    GET_BROKER_CONSUME_STATS = 317
    UPDATE_NAMESRV_CONFIG = 318
    GET_NAMESRV_CONFIG = 319
    SEND_BATCH_MESSAGE = 320
    QUERY_CONSUME_QUEUE = 321
    QUERY_DATA_VERSION = 322
    RESUME_CHECK_HALF_MESSAGE = 323
    SEND_REPLY_MESSAGE = 324
    SEND_REPLY_MESSAGE_V2 = 325
    PUSH_REPLY_MESSAGE_TO_CLIENT = 326
    ADD_WRITE_PERM_OF_BROKER = 327
    GET_ALL_PRODUCER_INFO = 328
    DELETE_EXPIRED_COMMITLOG = 329
    RECALL_MESSAGE = 370  # 5.3.2: recall a timer message before its delivery
    # rocketq's extension (broker/transaction_batch.py), no RocketMQ code: ends a batch half;
    # RocketMQ's broker answers it REQUEST_CODE_NOT_SUPPORTED
    END_TRANSACTION_BATCH = 91037
    # RocketMQ 5's controller mode (5.x ``RequestCode``): a broker's heartbeat to every
    # controller, then the requests a broker or mqadmin sends to the controller leader
    BROKER_HEARTBEAT = 904
    CONTROLLER_ALTER_SYNC_STATE_SET = 1001
    CONTROLLER_ELECT_MASTER = 1002
    CONTROLLER_REGISTER_BROKER = 1003
    CONTROLLER_GET_REPLICA_INFO = 1004
    CONTROLLER_GET_METADATA_INFO = 1005
    CONTROLLER_GET_SYNC_STATE_DATA = 1006
    GET_BROKER_EPOCH_CACHE = 1007
    NOTIFY_BROKER_ROLE_CHANGED = 1008
    UPDATE_CONTROLLER_CONFIG = 1009
    GET_CONTROLLER_CONFIG = 1010
    CLEAN_BROKER_DATA = 1011
    CONTROLLER_GET_NEXT_BROKER_ID = 1012
    CONTROLLER_APPLY_BROKER_ID = 1013
    # RocketMQ 5's POP consumption (broker/pop/)
    POP_MESSAGE = 200050
    ACK_MESSAGE = 200051
    CHANGE_MESSAGE_INVISIBLETIME = 200053
    NOTIFICATION = 200054
    BATCH_ACK_MESSAGE = 200151


# MQVersion.Version ordinals that matter on the wire: a request's ``version`` field is the
# sender's ordinal (MQVersion.CURRENT_VERSION); peers branch on it (RocketMQ's MQVersion).
VERSION_V3_0_11 = 37
VERSION_V3_1_8 = 63
VERSION_V3_4_9 = 121
VERSION_V4_9_4 = 401
VERSION_V4_9_8 = 409
CURRENT_VERSION = VERSION_V4_9_8
VERSION_V4_0_0 = 213  # from here on every x.y.z (digits 0-9) has a SNAPSHOT and a release
VERSION_V5_0_0 = 413


def version_desc(ordinal: int) -> str:
    """MQVersion.getVersionDesc: ``V5_1_2`` for 437; the number itself for an ordinal
    below V4_0_0 that has no constant here."""
    for name, value in globals().items():
        if name.startswith("VERSION_V") and value == ordinal:
            return name.removeprefix("VERSION_")
    if ordinal < VERSION_V4_0_0:
        return str(ordinal)
    offset = ordinal - VERSION_V4_0_0  # even: a release; odd: the next one's SNAPSHOT
    major, rest = divmod(400 + (offset + 1) // 2, 100)
    return f"V{major}_{rest // 10}_{rest % 10}" + ("_SNAPSHOT" if offset % 2 else "")


def version_ordinal(version: str) -> int:
    """The MQVersion ordinal of a dotted version (``5.1.2`` -> 437); 0 when it is not a 4.x
    or later version of single-digit parts (the Node 5.x client sends its own 1.0.8)."""
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() and len(p) == 1 for p in parts):
        return 0
    index = int(parts[0]) * 100 + int(parts[1]) * 10 + int(parts[2])
    return VERSION_V5_0_0 + 2 * (index - 500) if index >= 400 else 0
