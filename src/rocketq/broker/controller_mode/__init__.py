"""Controller mode (RocketMQ 5's ``broker/controller``): the broker's side of automatic
failover. ``replicas_manager`` (start-up, heartbeats, polls, SyncStateSet reports), ``role``
(becoming master or slave), ``registration`` (the persistent broker id), ``controller_client``
(the requests to the controllers, over remoting only) and ``processor`` (the fence, the role
push, the epoch cache)."""
