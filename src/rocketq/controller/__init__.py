"""rocketq.controller: RocketMQ 5's controller (RocketMQ's ``controller`` module).

It elects the master of each broker set and keeps the SyncStateSet of its in-sync replicas,
replicated by Raft: the Raft core (``raft``, sans-IO, here now), the seam the controller's
state machine uses (``metadata_log``), and, to come, the state machine on top of it and the
server that answers brokers over remoting. It imports ``remoting`` and ``common`` only, never
``broker``, ``store`` or ``client``; the import contracts in pyproject.toml check that already.
"""
