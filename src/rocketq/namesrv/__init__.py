"""rocketq.namesrv: the name server.

Modules:
    config      NamesrvConfig
    route_info  RouteInfoManager (pure state, injectable clock)
    kv_config   KVConfigManager
    processor   DefaultRequestProcessor (the request handlers)
    server      NamesrvController, start_namesrv(port=0)
"""

from rocketq.namesrv.config import NamesrvConfig
from rocketq.namesrv.route_info import RouteInfoManager
from rocketq.namesrv.server import NamesrvController, start_namesrv

__all__ = ["NamesrvConfig", "NamesrvController", "RouteInfoManager", "start_namesrv"]
