"""rocketq.admin: the admin library API (DefaultMQAdminExt in Python) that the CLI, the
dashboard, Spark and tests share.

``AsyncAdminClient`` is the asyncio core; ``AdminClient`` runs it on the client's private loop
thread for blocking callers. The result and argument types are re-exported here.
"""

from rocketq.admin.blocking import AdminClient
from rocketq.admin.client import AsyncAdminClient
from rocketq.admin.messages import QueryResult
from rocketq.common.topic_config import TopicConfig
from rocketq.remoting.protocol.admin_bodies import (
    Connection,
    ConsumerConnection,
    ConsumeStats,
    GroupList,
    OffsetWrapper,
    ProducerConnection,
    TopicOffset,
    TopicStatsTable,
)
from rocketq.remoting.protocol.consumer_bodies import (
    CMResult,
    ConsumeMessageDirectlyResult,
    ConsumerRunningInfo,
    ConsumeStatus,
    ProcessQueueInfo,
)
from rocketq.remoting.protocol.controller_bodies import (
    BrokerMemberGroup,
    BrokerReplicasInfo,
    EpochEntry,
    EpochEntryCache,
    ReplicaIdentity,
    ReplicasInfo,
)
from rocketq.remoting.protocol.controller_headers import (
    ElectMasterResponseHeader,
    GetMetaDataResponseHeader,
)
from rocketq.remoting.protocol.group_bodies import (
    ConsumeQueueData,
    ConsumerOffsetSerializeWrapper,
    DelayOffsetSerializeWrapper,
    QueryConsumeQueueResponseBody,
    SubscriptionGroupConfig,
    SubscriptionGroupWrapper,
)
from rocketq.remoting.protocol.register_broker_body import TopicConfigSerializeWrapper
from rocketq.remoting.protocol.topic_route import ClusterInfo, TopicRouteData

__all__ = [
    "AdminClient",
    "AsyncAdminClient",
    "BrokerMemberGroup",
    "BrokerReplicasInfo",
    "CMResult",
    "ClusterInfo",
    "Connection",
    "ConsumeMessageDirectlyResult",
    "ConsumeQueueData",
    "ConsumeStats",
    "ConsumeStatus",
    "ConsumerConnection",
    "ConsumerOffsetSerializeWrapper",
    "ConsumerRunningInfo",
    "DelayOffsetSerializeWrapper",
    "ElectMasterResponseHeader",
    "EpochEntry",
    "EpochEntryCache",
    "GetMetaDataResponseHeader",
    "GroupList",
    "OffsetWrapper",
    "ProcessQueueInfo",
    "ProducerConnection",
    "QueryConsumeQueueResponseBody",
    "QueryResult",
    "ReplicaIdentity",
    "ReplicasInfo",
    "SubscriptionGroupConfig",
    "SubscriptionGroupWrapper",
    "TopicConfig",
    "TopicConfigSerializeWrapper",
    "TopicOffset",
    "TopicRouteData",
    "TopicStatsTable",
]
