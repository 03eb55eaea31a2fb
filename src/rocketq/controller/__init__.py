"""rocketq.controller: RocketMQ 5's controller (RocketMQ's ``controller`` module).

It elects the master of each broker set and keeps the SyncStateSet of its in-sync replicas,
replicated by Raft: the Raft core (``raft``, sans-IO), the seam the controller's state machine
uses (``metadata_log``), the asyncio driver that implements it (``raft_node`` over
``raft_storage`` and ``raft_transport``), its settings (``config``) and the server that answers
over remoting (``server``); and the state machine on top of it: ``replicas_info`` (the
replicated broker sets and ``ControllerStateMachine``), ``event`` (what is logged),
``request_handler`` and ``registration`` (the requests as pure functions), ``elect_policy`` and
``heartbeat`` (liveness, soft state); and what serves it over the wire: ``manager``
(reads, writes, liveness scans, elections), ``processor`` (codes 904 and 1001-1013),
``notify`` (role-change pushes) and ``metrics``. It imports
``remoting`` and ``common`` only, never ``broker``, ``store`` or ``client``; the import
contracts in pyproject.toml check that.
"""
