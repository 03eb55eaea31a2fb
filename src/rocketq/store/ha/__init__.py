"""Master/slave replication of the commitlog (RocketMQ 4.x ``store/ha``).

``frames`` is the sans-IO wire format; ``ha_service`` (master: accept, one
``HAConnection`` per slave, the group-transfer wait of SYNC_MASTER) and ``ha_client``
(slave) are ``ServiceThread``s over plain blocking sockets, as RocketMQ's are. The store
never imports asyncio.
"""
