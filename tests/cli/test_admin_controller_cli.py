"""``rocketq admin``'s controller commands (RocketMQ 5 mqadmin's names, short options and
output) against an in-process controller and brokers played over the wire; getBrokerEpoch
against a real broker."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rocketq.cli.admin import admin
from rocketq.testing.admin_cli import ok, run
from rocketq.testing.cluster import Cluster
from rocketq.testing.controller_wire import CLUSTER, ControllerGroup, FakeBroker

pytestmark = pytest.mark.timeout(60)

# The short options of each command in apache/rocketmq 5 tools/command/{controller,ha,broker}
MQADMIN_5 = {
    "getControllerMetaData": "a",
    "getSyncStateSet": "a c b i",
    "getBrokerEpoch": "c b i",
    "electMaster": "a c bn b",
    "getControllerConfig": "a",
    "updateControllerConfig": "a k v",
    "cleanBrokerMetadata": "a b bn c l",
}


def test_every_controller_command_takes_mqadmins_short_options() -> None:
    for name, letters in MQADMIN_5.items():
        command = admin.commands[name]
        shorts = {opt for p in command.params for opt in p.opts if re.fullmatch(r"-\w+", opt)}
        wanted = {f"-{letter}" for letter in letters.split()}
        assert wanted <= shorts, (name, sorted(wanted - shorts))


async def test_controller_commands_print_what_mqadmin_prints(tmp_path: Path) -> None:
    group = ControllerGroup(tmp_path, size=1)
    brokers = [FakeBroker("broker-a") for _ in range(2)]
    try:
        await group.start_all()
        leader = await group.leader()
        addr = leader.addr
        for broker in brokers:
            await broker.start()
            await broker.register(addr)
            await broker.heartbeat([addr], timeout_ms=60_000)
        b1, b2 = brokers

        meta = ok(await run(None, "getControllerMetaData", "-a", addr))
        assert "\n#ControllerGroup\tgroup1" in meta
        assert f"\n#ControllerLeaderAddress\t{addr}" in meta
        assert f"\n#Peer:\tn0:{addr}" in meta

        args = ("-a", addr, "-c", CLUSTER, "-bn", "broker-a", "-b", "1")
        elected = ok(await run(None, "electMaster", *args))
        assert f"\n#BrokerMasterAddr\t{b1.addr}\n#MasterEpoch\t1\n" in elected
        assert f"\t#Broker\t2\t{b2.addr}" in elected

        sss = ok(await run(None, "getSyncStateSet", "-a", addr, "-b", "broker-a"))
        assert "\n#MasterBrokerId\t1\n" in sss
        assert "\n#SyncStateSetNums\t1\n" in sss
        replica = f"ReplicaIdentity{{brokerName='broker-a', brokerId=2, brokerAddress='{b2.addr}'"
        assert f"NotInSyncReplica:\t{replica}, alive=true}}" in sss

        update = ("-a", addr, "-k", "scanInactiveMasterInterval", "-v", "200")
        assert "update controller config success!" in ok(
            await run(None, "updateControllerConfig", *update)
        )
        config = ok(await run(None, "getControllerConfig", "-a", addr))
        assert f"============{addr}============" in config
        assert re.search(r"\nscanInactiveMasterInterval\s+=  200\n", config)
        refused = await run(
            None, "updateControllerConfig", "-a", addr, "-k", "rocketmqHome", "-v", "/"
        )
        assert refused.exit_code == 1
        assert "Can not update config in black list." in refused.output

        no_cluster = await run(
            None, "cleanBrokerMetadata", "-a", addr, "-bn", "broker-a", "-b", "2"
        )
        assert no_cluster.exit_code == 2
        assert "clusterName option can not be empty" in no_cluster.output
        await b2.client.shutdown()  # b2 goes away: its connection closes, it is no longer alive
        clean = ("-a", addr, "-c", CLUSTER, "-bn", "broker-a", "-b", "2")
        cleaned = ok(await run(None, "cleanBrokerMetadata", *clean))
        assert "clear broker broker-a metadata from controller success!" in cleaned
        sss = ok(await run(None, "getSyncStateSet", "-a", addr, "-b", "broker-a", "--json"))
        assert b2.addr not in sss
    finally:
        for broker in brokers:
            await broker.close()
        await group.stop_all()


async def test_get_broker_epoch_asks_each_replica_and_says_a_broker_refused(
    cluster: Cluster,
) -> None:
    """The cluster's broker is a classic one, unknown to the controller and not in
    controller mode: getSyncStateSet -c finds its name through the name server and the
    controller has nothing on it; getBrokerEpoch asks it and reports its refusal."""
    group = ControllerGroup(cluster.tmp / "controller", size=1)
    try:
        await group.start_all()
        leader = await group.leader()
        args = ("-a", leader.addr, "-c", "DefaultCluster", "--json")
        sss = ok(await run(cluster, "getSyncStateSet", *args))
        assert json.loads(sss) == {"replicasInfoTable": {}}
    finally:
        await group.stop_all()
    result = await run(cluster, "getBrokerEpoch", "-c", "DefaultCluster")
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1
    # RocketMQ's broker outside controller mode: SYSTEM_ERROR "this request only for
    # controllerMode"; a broker that does not serve 1007 at all: REQUEST_CODE_NOT_SUPPORTED
    assert lines[0].startswith("Error: ")
    assert "only for controllerMode" in lines[0] or "1007 not supported" in lines[0]
