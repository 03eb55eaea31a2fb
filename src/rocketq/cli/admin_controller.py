"""``rocketq admin`` controller commands: getControllerMetaData, getSyncStateSet,
getBrokerEpoch, electMaster, getControllerConfig, updateControllerConfig, cleanBrokerMetadata
(mqadmin's names and short options, RocketMQ 5's tools/command/controller, ha and broker).

``-a`` is any controller of the group (``host:port``, or ``a;b;c`` for the config commands,
which ask each); the commands that read or change the replicated state follow it to the leader.
They print what mqadmin prints, or JSON with ``--json``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import click

from rocketq.admin import (
    AsyncAdminClient,
    BrokerReplicasInfo,
    EpochEntry,
    EpochEntryCache,
    ReplicaIdentity,
)
from rocketq.cli.admin_context import AdminContext, admin_command

CONTROLLER_ADDR = click.option(
    "-a", "--controllerAddress", "controller_addr", required=True, help="A controller's address."
)
INTERVAL = click.option(
    "-i", "--interval", type=int, default=None, help="Print again every N seconds until Ctrl-C."
)


def _addrs(text: str) -> list[str]:
    return [a.strip() for a in text.split(";") if a.strip()]


def _repeat(interval_s: int | None, show: Callable[[], None]) -> None:
    """mqadmin's ``-i``: once, or forever every ``interval_s`` seconds."""
    show()
    while interval_s is not None:
        time.sleep(max(interval_s, 1))
        show()


@click.command("getControllerMetaData")
@CONTROLLER_ADDR
@admin_command
def get_controller_meta_data(ctx: AdminContext, controller_addr: str) -> None:
    """Get controller cluster's metadata.

    \b
    Example:
      rocketq admin getControllerMetaData -a 127.0.0.1:9878
    """
    addr = controller_addr.strip()
    meta = ctx.run(lambda admin: admin.get_controller_meta_data(addr), target=f"controller {addr}")
    peers = [p for p in (meta.peers or "").split(";") if p]
    if ctx.as_json:
        ctx.json({**meta.to_ext_fields(), "peers": peers})
        return
    click.echo(f"\n#ControllerGroup\t{meta.group}", nl=False)
    click.echo(f"\n#ControllerLeaderId\t{meta.controller_leader_id}", nl=False)
    click.echo(f"\n#ControllerLeaderAddress\t{meta.controller_leader_address}", nl=False)
    for peer in peers:
        click.echo(f"\n#Peer:\t{peer}", nl=False)
    click.echo("")


def _replica(r: ReplicaIdentity) -> str:
    alive = "null" if r.alive is None else str(r.alive).lower()
    return (
        f"ReplicaIdentity{{brokerName='{r.broker_name}', brokerId={r.broker_id}, "
        f"brokerAddress='{r.broker_address}', alive={alive}}}"
    )


@click.command("getSyncStateSet")
@CONTROLLER_ADDR
@click.option("-c", "--clusterName", "cluster", default=None, help="Every broker of a cluster.")
@click.option("-b", "--brokerName", "broker_name", default=None, help="One broker set.")
@INTERVAL
@admin_command
def get_sync_state_set(
    ctx: AdminContext,
    controller_addr: str,
    cluster: str | None,
    broker_name: str | None,
    interval: int | None,
) -> None:
    """Fetch syncStateSet for target brokers (the master, epochs, in-sync replicas).

    \b
    Example:
      rocketq admin getSyncStateSet -a 127.0.0.1:9878 -b broker-a
    """
    if broker_name is None and cluster is None:
        raise click.UsageError("give -b brokerName or -c clusterName")
    addr = _addrs(controller_addr)[0]

    async def call(admin: AsyncAdminClient) -> BrokerReplicasInfo:
        names = (
            [broker_name]
            if broker_name
            else await admin.fetch_broker_names_of_cluster(cluster or "")
        )
        return await admin.get_in_sync_state_data(addr, names)

    def show() -> None:
        info = ctx.run(call, target=f"controller {addr} or the name server")
        if ctx.as_json:
            ctx.json(info)
            return
        for name, replicas in info.replicas_info_table.items():
            click.echo(
                f"\n#brokerName\t{name}\n#MasterBrokerId\t{replicas.master_broker_id}"
                f"\n#MasterAddr\t{replicas.master_address}\n#MasterEpoch\t{replicas.master_epoch}"
                f"\n#SyncStateSetEpoch\t{replicas.sync_state_set_epoch}"
                f"\n#SyncStateSetNums\t{len(replicas.in_sync_replicas)}"
            )
            for r in replicas.in_sync_replicas:
                click.echo(f"\nInSyncReplica:\t{_replica(r)}")
            for r in replicas.not_in_sync_replicas:
                click.echo(f"\nNotInSyncReplica:\t{_replica(r)}")

    _repeat(interval, show)


def _epoch(entry: EpochEntry) -> str:
    return (
        f"EpochEntry{{epoch={entry.epoch}, startOffset={entry.start_offset}, "
        f"endOffset={entry.end_offset}}}"
    )


@click.command("getBrokerEpoch")
@click.option("-c", "--clusterName", "cluster", default=None, help="Every broker of a cluster.")
@click.option("-b", "--brokerName", "broker_name", default=None, help="One broker set.")
@INTERVAL
@admin_command
def get_broker_epoch(
    ctx: AdminContext, cluster: str | None, broker_name: str | None, interval: int | None
) -> None:
    """Fetch broker epoch entries (asks each replica; only controller-mode brokers answer).

    \b
    Example:
      rocketq admin getBrokerEpoch -n 127.0.0.1:9876 -b broker-a
    """
    if broker_name is None and cluster is None:
        raise click.UsageError("give -b brokerName or -c clusterName")

    async def call(admin: AsyncAdminClient) -> list[tuple[str, EpochEntryCache]]:
        addrs = await admin.fetch_master_and_slave_addrs(cluster=cluster, broker_name=broker_name)
        return [(addr, await admin.get_broker_epoch_cache(addr)) for addr in addrs]

    def show() -> None:
        caches = ctx.run(call)
        if ctx.as_json:
            ctx.json(dict(caches))
            return
        for addr, c in caches:
            click.echo(
                f"\n#clusterName\t{c.cluster_name}\n#brokerName\t{c.broker_name}"
                f"\n#brokerAddr\t{addr}\n#brokerId\t{c.broker_id}",
                nl=False,
            )
            entries = list(c.epoch_list)
            for i, entry in enumerate(entries):
                if i == len(entries) - 1:  # the open epoch ends at the broker's max offset
                    entry.end_offset = c.max_offset
                click.echo(f"\n#Epoch: {_epoch(entry)}", nl=False)
            click.echo("")

    _repeat(interval, show)


@click.command("electMaster")
@CONTROLLER_ADDR
@click.option("-c", "--clusterName", "cluster", required=True, help="The broker's cluster.")
@click.option("-bn", "--brokerName", "broker_name", required=True, help="The broker set.")
@click.option("-b", "--brokerId", "broker_id", type=int, required=True, help="The new master.")
@admin_command
def elect_master(
    ctx: AdminContext, controller_addr: str, cluster: str, broker_name: str, broker_id: int
) -> None:
    """Re-elect the specified broker as master.

    \b
    Example:
      rocketq admin electMaster -a 127.0.0.1:9878 -c DefaultCluster -bn broker-a -b 2
    """
    addr = controller_addr.strip()
    header, members = ctx.run(
        lambda admin: admin.elect_master(addr, cluster, broker_name, broker_id),
        target=f"controller {addr}",
    )
    if ctx.as_json:
        addrs = members.broker_addrs if members is not None else {}
        ctx.json({**header.to_ext_fields(), "brokerAddrs": {str(k): v for k, v in addrs.items()}})
        return
    click.echo(
        f"\n#ClusterName\t{cluster}\n#BrokerName\t{broker_name}"
        f"\n#BrokerMasterAddr\t{header.master_address}\n#MasterEpoch\t{header.master_epoch}"
        f"\n#SyncStateSetEpoch\t{header.sync_state_set_epoch}"
    )
    for member_id, member_addr in sorted((members.broker_addrs if members else {}).items()):
        click.echo(f"\t#Broker\t{member_id}\t{member_addr}")


@click.command("getControllerConfig")
@click.option("-a", "--controllerAddress", "controller_addr", required=True, help="a;b;c")
@admin_command
def get_controller_config(ctx: AdminContext, controller_addr: str) -> None:
    """Get controller config (of each controller listed).

    \b
    Example:
      rocketq admin getControllerConfig -a 127.0.0.1:9878
    """
    addrs = _addrs(controller_addr)
    configs = ctx.run(lambda admin: admin.get_controller_config(addrs), target=controller_addr)
    if ctx.as_json:
        ctx.json(configs)
        return
    for addr, props in configs.items():
        click.echo(f"============{addr}============")
        for key, value in props.items():
            click.echo(f"{key:<50}=  {value}")


@click.command("updateControllerConfig")
@click.option("-a", "--controllerAddress", "controller_addr", required=True, help="a;b;c")
@click.option("-k", "--key", required=True, help="Config key.")
@click.option("-v", "--value", required=True, help="Config value.")
@admin_command
def update_controller_config(ctx: AdminContext, controller_addr: str, key: str, value: str) -> None:
    """Update controller config (on each controller listed).

    \b
    Example:
      rocketq admin updateControllerConfig -a 127.0.0.1:9878 -k notifyBrokerRoleChanged -v false
    """
    addrs = _addrs(controller_addr)
    props = {key.strip(): value.strip()}
    ctx.run(lambda admin: admin.update_controller_config(props, addrs), target=controller_addr)
    ctx.done(
        f"update controller config success![{', '.join(addrs)}]\n{key.strip()} : {value.strip()}",
        {"controllers": addrs, "key": key.strip(), "value": value.strip()},
    )


@click.command("cleanBrokerMetadata")
@CONTROLLER_ADDR
@click.option("-bn", "--brokerName", "broker_name", required=True, help="The broker set.")
@click.option("-b", "--brokerControllerIdsToClean", "ids", default=None, help="e.g. 1;2;3")
@click.option("-c", "--clusterName", "cluster", default=None, help="The broker's cluster.")
@click.option("-l", "--cleanLivingBroker", "living", is_flag=True, help="Clean living brokers too.")
@admin_command
def clean_broker_metadata(
    ctx: AdminContext,
    controller_addr: str,
    broker_name: str,
    ids: str | None,
    cluster: str | None,
    living: bool,
) -> None:
    """Clean metadata of broker on controller.

    \b
    Example:
      rocketq admin cleanBrokerMetadata -a 127.0.0.1:9878 -c DefaultCluster -bn broker-a -b 3
    """
    if ids is not None and not all(p.strip().isdigit() for p in ids.strip().split(";")):
        raise click.BadParameter("brokerControllerIdsToClean is id;id;... (e.g. 1;2;3)")
    if not living and not cluster:
        raise click.UsageError(
            "cleanLivingBroker option is false, clusterName option can not be empty."
        )
    addr = controller_addr.strip()
    ctx.run(
        lambda admin: admin.clean_controller_broker_data(
            addr, cluster, broker_name.strip(), ids.strip() if ids else None, living
        ),
        target=f"controller {addr}",
    )
    ctx.done(f"clear broker {broker_name} metadata from controller success! ")


COMMANDS = [
    get_controller_meta_data,
    get_sync_state_set,
    get_broker_epoch,
    elect_master,
    get_controller_config,
    update_controller_config,
    clean_broker_metadata,
]
