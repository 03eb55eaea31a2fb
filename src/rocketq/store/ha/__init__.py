"""Master/slave replication of the commitlog (RocketMQ 4.x ``store/ha``).

``frames`` is the sans-IO wire format; ``ha_service`` (master: accept, one
``HAConnection`` per slave, the group-transfer wait of SYNC_MASTER) and ``ha_client``
(slave) are ``ServiceThread``s over plain blocking sockets, as RocketMQ's are. The store
never imports asyncio.

Controller mode (RocketMQ 5's ``ha/autoswitch``) adds, pure or with small durable files:
``epoch_file`` (``epochFileCheckpoint`` and the consistent point of two epoch lists),
``broker_identity`` (``brokerIdentity`` and its ``-temp``), ``sync_state_set`` (the master's
in-sync set with the union rule) and ``metadata_file`` (their atomic writes); and the
autoswitch protocol itself: ``autoswitch_frames`` (sans IO), ``autoswitch_service`` (roles,
SyncStateSet, confirm offset, ack rule), ``autoswitch_connection`` (master side),
``autoswitch_client`` (slave side), ``epoch_file_cache`` and ``log_truncation``.
"""
