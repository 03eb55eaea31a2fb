"""rocketq.controller: RocketMQ 5's controller (RocketMQ's ``controller`` module), to come.

It will elect the master of each broker set and keep the SyncStateSet of its in-sync
replicas, replicated by Raft: the Raft core (``raft``, sans-IO), the controller's state
machine on top of it, and the server that answers brokers over remoting. It imports
``remoting`` and ``common`` only, never ``broker``, ``store`` or ``client``; the import
contracts in pyproject.toml check that already.
"""
