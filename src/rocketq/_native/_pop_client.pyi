"""Stub of the C module ``rocketq._native._pop_client`` (``pop_client.c``)."""

def batch_ack_body(
    broker_name: str, group: str, topic: str, handles: list[str], /
) -> bytes | None: ...
