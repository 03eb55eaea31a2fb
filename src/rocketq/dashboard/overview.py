"""The overview page (the landing page; rocketmq-dashboard's "OPS"/dashboard view in one):
every broker with its role, disk and TPS, and in controller mode its epoch and whether it is in
the SyncStateSet; the cluster's put/get TPS history; the busiest topics and the groups with
the largest lag, from the latest sample of the server-kept history (``sampler.py``)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response

from rocketq.dashboard.sampler import first_number
from rocketq.errors import RocketQError

if TYPE_CHECKING:
    from rocketq.dashboard.board import Dashboard

TOP_COUNT = 10


async def _controller_state(board: Dashboard, addr: str, config: dict[str, str]) -> dict[str, Any]:
    """Epoch and in-sync state of a broker in controller mode ({} otherwise): its own epoch
    cache (GET_BROKER_EPOCH_CACHE) and the controller's SyncStateSet of its broker set."""
    if config.get("enableControllerMode", "false").lower() != "true":
        return {}
    state: dict[str, Any] = {"epoch": "", "in_sync": "", "sync_epoch": ""}
    try:
        cache = await board.admin.get_broker_epoch_cache(addr)
        state["epoch"] = cache.epoch_list[-1].epoch if cache.epoch_list else 0
    except RocketQError as exc:
        state["epoch"] = f"? ({exc})"
    controllers = [a for a in config.get("controllerAddr", "").split(";") if a.strip()]
    name = config.get("brokerName", "")
    for controller in controllers:
        try:
            info = await board.admin.get_in_sync_state_data(controller.strip(), [name])
        except RocketQError:
            continue
        replicas = info.replicas_info_table.get(name)
        if replicas is not None:
            in_sync = {r.broker_address for r in replicas.in_sync_replicas}
            state["in_sync"] = "yes" if addr in in_sync else "no"
            state["sync_epoch"] = replicas.sync_state_set_epoch
            state["master_epoch"] = replicas.master_epoch
        break
    return state


async def brokers(board: Dashboard) -> list[dict[str, Any]]:
    info = await board.admin.examine_broker_cluster_info()
    rows = []
    for cluster_name in sorted(info.cluster_addr_table):
        for name in sorted(info.cluster_addr_table[cluster_name]):
            data = info.broker_addr_table.get(name)
            for bid, addr in sorted((data.broker_addrs if data else {}).items()):
                row: dict[str, Any] = {"cluster": cluster_name, "name": name, "id": bid}
                row |= {"addr": addr, "role": "MASTER" if bid == 0 else "SLAVE", "error": ""}
                try:
                    kv = await board.admin.fetch_broker_runtime_stats(addr)
                    config = await board.admin.get_broker_config(addr)
                except RocketQError as exc:
                    kv, config, row["error"] = {}, {}, str(exc)
                ratio = kv.get("commitLogDiskRatio")
                row["disk"] = f"{float(ratio) * 100:.1f} %" if ratio else ""
                row["put_tps"] = first_number(kv.get("putTps"))
                row["get_tps"] = first_number(kv.get("getTransferedTps"))
                row["mode"] = config.get("brokerRole", "")
                row["controller"] = await _controller_state(board, addr, config)
                rows.append(row)
    return rows


def top(board: Dashboard, kind: str, what: str) -> list[tuple[str, float]]:
    """The ``TOP_COUNT`` largest latest values of ``<kind>:<name>:<what>`` series."""
    latest = board.history.latest(f"{kind}:", time.time())
    found = [
        (key[len(kind) + 1 : -len(what) - 1], value)
        for key, value in latest.items()
        if key.endswith(f":{what}")
    ]
    return sorted(found, key=lambda kv: (-kv[1], kv[0]))[:TOP_COUNT]


async def overview(board: Dashboard, request: Request) -> Response:
    rows = await brokers(board)
    return board.render(
        "overview.html",
        page="overview",
        brokers=rows,
        controller_mode=any(r["controller"] for r in rows),
        top_topics=top(board, "topic", "put"),
        top_lag=top(board, "group", "lag"),
        sampled=board.sampler.ticks if board.sampler is not None else 0,
        step_s=board.history.fine.step_s,
    )
