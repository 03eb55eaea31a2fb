"""The broker layouts ``rocketq server --cluster`` runs in one process.

``single`` is one master. ``2m-2s-async`` and ``2m-2s-sync`` are RocketMQ's sample
deployments (``conf/2m-2s-async``, ``conf/2m-2s-sync``): broker groups ``broker-a`` and
``broker-b``, each a master (brokerId 0, ASYNC_MASTER or SYNC_MASTER) and a slave
(brokerId 1, SLAVE, slaveReadEnable), in one cluster. On one machine they differ only by
port and store directory: the masters listen on PORT and PORT+200, their slaves on PORT+100
and PORT+300, each HA port is the listen port + 1, each store is ``<store>/<name>[-s]``.
Port 0 gives every broker a free port; slaves find their master through the name server.
"""

from __future__ import annotations

import dataclasses
import os

from rocketq.broker.config import BrokerConfig, BrokerRole

LAYOUTS = ("single", "2m-2s-async", "2m-2s-sync")


def broker_configs(layout: str, base: BrokerConfig, root: str) -> list[BrokerConfig]:
    """Masters first (a slave registering after its master learns the master's addresses)."""
    if layout == "single":
        return [dataclasses.replace(base, store_path_root_dir=root)]
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; one of {', '.join(LAYOUTS)}")
    role = BrokerRole.SYNC_MASTER if layout == "2m-2s-sync" else BrokerRole.ASYNC_MASTER
    port = base.listen_port
    masters, slaves = [], []
    for i, name in enumerate(("broker-a", "broker-b")):
        group_port = port + 200 * i if port else 0
        group = dataclasses.replace(base, broker_name=name)
        masters.append(
            dataclasses.replace(
                group,
                broker_id=0,
                broker_role=role,
                listen_port=group_port,
                store_path_root_dir=os.path.join(root, name),
            )
        )
        slaves.append(
            dataclasses.replace(
                group,
                broker_id=1,
                broker_role=BrokerRole.SLAVE,
                slave_read_enable=True,
                listen_port=group_port + 100 if port else 0,
                store_path_root_dir=os.path.join(root, f"{name}-s"),
            )
        )
    return masters + slaves
