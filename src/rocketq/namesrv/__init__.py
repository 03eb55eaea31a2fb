"""rocketq.namesrv: the name server.

Modules:
    config      NamesrvConfig
    route_info  RouteInfoManager (pure state, injectable clock)
    kv_config   KVConfigManager
    processor   DefaultRequestProcessor (the request handlers)
    server      NamesrvController, start_namesrv(port=0)
"""
