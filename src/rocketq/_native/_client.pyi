"""Stub of the C module ``rocketq._native._client`` (``client_codec.c``)."""

from collections.abc import Mapping

def send_v2_fields(
    group: str,
    topic: str,
    default_topic: str,
    default_topic_queue_nums: int,
    queue_id: int,
    sys_flag: int,
    born_timestamp: int,
    flag: int,
    properties: Mapping[str, str | None] | str | None,
    reconsume_times: int | None,
    unit_mode: bool,
    max_reconsume_times: int | None,
    batch: bool,
    /,
) -> dict[str, str] | None: ...
def send_result_values(
    ext_fields: dict[str, str], /
) -> tuple[str, int, int, str | None, str | None, str, bool] | None: ...
