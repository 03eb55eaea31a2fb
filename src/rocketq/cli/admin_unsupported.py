"""The mqadmin 5.3 commands rocketq does not serve: each takes mqadmin's options (so a script
gets the reason, not "no such option") and exits 1 with one line "not supported by rocketq:
<why>". The options are those of each SubCommand's ``buildCommandlineOptions`` in
apache/rocketmq's tools module (``letter:longName``, ``!`` for a flag); a long name with a space
in it (printMsgByQueue's ``print msg``) cannot be one click option and keeps its letter only."""

from __future__ import annotations

from typing import Any

import click

from rocketq.cli.admin_context import DEFAULT_NAMESRV

_NO_PROCESSOR = "the broker does not serve {code}, which this command sends"
_ACL2 = (
    "ACL 2.0 (users and policies, RocketMQ 5.3's AuthenticationMetadataManager) is not "
    "implemented; rocketq has ACL 1.0's plain_acl.yml accounts (updateAclConfig, deleteAclConfig)"
)
_ROCKSDB = "rocketq's broker keeps its metadata in JSON files, with no RocksDB config store"
_COLD = "cold data flow control (RocketMQ 5.1's ColdDataCgCtrService) is not implemented"

#: name -> (options, reason)
UNSUPPORTED: dict[str, tuple[str, str]] = {
    "setConsumeMode": (
        "b:brokerAddr c:clusterName t:topicName g:groupName m:mode q:popShareQueueNum",
        _NO_PROCESSOR.format(code="SET_MESSAGE_REQUEST_MODE (401)"),
    ),
    "addBroker": (
        "c:brokerContainerAddr b:brokerConfigPath",
        "there is no BrokerContainer in rocketq: start a broker with `rocketq broker`",
    ),
    "removeBroker": (
        "c:brokerContainerAddr b:brokerIdentity",
        "there is no BrokerContainer in rocketq: stop the broker's process",
    ),
    "resetMasterFlushOffset": (
        "b:brokerAddr o:offset",
        _NO_PROCESSOR.format(code="RESET_MASTER_FLUSH_OFFSET (908)"),
    ),
    "cleanExpiredCQ": (
        "b:brokerAddr c:cluster",
        _NO_PROCESSOR.format(code="CLEAN_EXPIRED_CONSUMEQUEUE (306)")
        + "; the broker's clean service drops expired consume queue files on its own",
    ),
    "deleteExpiredCommitLog": (
        "n:namesrvAddr b:brokerAddr c:cluster",
        _NO_PROCESSOR.format(code="DELETE_EXPIRED_COMMITLOG (329)")
        + "; the broker's clean service deletes expired commitlog files at deleteWhen",
    ),
    "cleanUnusedTopic": (
        "b:brokerAddr c:cluster",
        _NO_PROCESSOR.format(code="CLEAN_UNUSED_TOPIC (316)"),
    ),
    "startMonitoring": (
        "",
        "RocketMQ's MonitorService is not shipped; scrape the broker's /metrics or use "
        "`rocketq dashboard`",
    ),
    "updateStaticTopic": (
        "c:clusters b:brokers t:topic qn:totalQueueNum mf:mapFile fr:forceReplace",
        "static topics (logic queues, TopicQueueMappingInfo) are not implemented",
    ),
    "remappingStaticTopic": (
        "c:clusters b:brokers t:topic mf:mapFile fr:forceReplace",
        "static topics (logic queues, TopicQueueMappingInfo) are not implemented",
    ),
    "exportMetadataInRocksDB": ("p:path t:configType j:jsonEnable", _ROCKSDB),
    "exportPopRecord": (
        "c:clusterName b:brokerAddr d:dryRun",
        _NO_PROCESSOR.format(code="EXPORT_POP_RECORD (200052)")
        + " (RocketMQ 5.3's pop consumption in RocksDB)",
    ),
    "haStatus": (
        "c:clusterName b:brokerAddr i:interval",
        _NO_PROCESSOR.format(code="GET_BROKER_HA_STATUS (907)")
        + "; getSyncStateSet shows the in-sync replicas",
    ),
    "dumpCompactionLog": (
        "f:file",
        "compaction topics (cleanup.policy=COMPACTION, CompactionLog) are not implemented",
    ),
    "getColdDataFlowCtrInfo": ("b:brokerAddr c:clusterName", _COLD),
    "updateColdDataFlowCtrGroupConfig": (
        "b:brokerAddr c:clusterName g:consumerGroup v:threshold",
        _COLD,
    ),
    "removeColdDataFlowCtrGroupConfig": ("b:brokerAddr c:clusterName g:consumerGroup", _COLD),
    "setCommitLogReadAheadMode": (
        "b:brokerAddr c:clusterName m:commitLogReadAheadMode",
        "rocketq's store has no madvise read-ahead switch for the commitlog",
    ),
    "createUser": ("c:clusterName b:brokerAddr u:username p:password t:userType", _ACL2),
    "updateUser": (
        "c:clusterName b:brokerAddr u:username p:password t:userType s:userStatus",
        _ACL2,
    ),
    "deleteUser": ("c:clusterName b:brokerAddr u:username", _ACL2),
    "getUser": ("b:brokerAddr c:clusterName u:username", _ACL2),
    "listUser": ("b:brokerAddr c:clusterName f:filter", _ACL2),
    "copyUser": ("f:fromBroker t:toBroker u:usernames", _ACL2),
    "createAcl": (
        "c:clusterName b:brokerAddr s:subject r:resources a:actions i:sourceIp d:decision",
        _ACL2,
    ),
    "updateAcl": (
        "c:clusterName b:brokerAddr s:subject r:resources a:actions d:decision i:sourceIp",
        _ACL2,
    ),
    "deleteAcl": ("c:clusterName b:brokerAddr s:subject r:resources", _ACL2),
    "getAcl": ("b:brokerAddr c:clusterName s:subject", _ACL2),
    "listAcl": ("b:brokerAddr c:clusterName s:subject r:resource", _ACL2),
    "copyAcl": ("f:fromBroker t:toBroker s:subjects", _ACL2),
    "rocksDBConfigToJson": (
        "t:configType p:configPath e:exportFile j:jsonEnable n:nameserverAddr c:cluster "
        "b:brokerAddr",
        _ROCKSDB,
    ),
    "checkRocksdbCqWriteProgress": (
        "c:cluster n:nameserverAddr t:topic cf:checkFrom",
        "rocketq's consume queues are files, with no RocksDB consume queue store to check",
    ),
}


def refusal(name: str, options: str, reason: str) -> click.Command:
    """A command that takes mqadmin's options of ``name`` and refuses with ``reason``."""

    def callback(**_: Any) -> None:
        raise click.ClickException(f"{name} is not supported by rocketq: {reason}")

    params: list[click.Parameter] = []
    letters = set()
    for spec in options.split():
        short, _, long = spec.rstrip("!").partition(":")
        letters.add(short)
        decls = [f"-{short}"] + ([f"--{long}"] if long else [])
        if short == "n" and long != "namesrvAddr":  # rocksDBConfigToJson's --nameserverAddr
            decls.insert(1, "--namesrvAddr")
        params.append(click.Option([*decls, f"opt_{short}"], is_flag=spec.endswith("!")))
    if "n" not in letters:
        params.append(
            click.Option(
                ["-n", "--namesrvAddr", "opt_n"], default=DEFAULT_NAMESRV, show_default=True
            )
        )
    return click.Command(
        name,
        callback=callback,
        params=params,
        help=(
            f"Not supported by rocketq: {reason}.\n\n\b\nExample:\n"
            f"  rocketq admin {name} -n 127.0.0.1:9876   (answers why, exit 1)"
        ),
        short_help=f"Not supported: {reason}.",
    )


COMMANDS = [refusal(name, opts, why) for name, (opts, why) in UNSUPPORTED.items()]
