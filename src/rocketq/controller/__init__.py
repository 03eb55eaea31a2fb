"""rocketq.controller: RocketMQ 5's controller (automatic failover), its replicated metadata log
and the Raft core (``raft/``, sans-IO) that replicates it."""
