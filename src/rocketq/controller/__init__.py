"""rocketq.controller: RocketMQ 5's controller (RocketMQ's ``controller`` module).

It elects the master of each broker set and keeps the SyncStateSet of its in-sync replicas,
replicated by Raft: the Raft core (``raft``, sans-IO), the seam the controller's state machine
uses (``metadata_log``), the asyncio driver that implements it (``raft_node`` over
``raft_storage`` and ``raft_transport``), its settings (``config``) and the server that answers
over remoting (``server``); the state machine on top of it is to come. It imports
``remoting`` and ``common`` only, never ``broker``, ``store`` or ``client``; the import
contracts in pyproject.toml check that.
"""
