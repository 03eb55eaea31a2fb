"""The queues one pop reads, in order: the one it names, or all of a topic's read queues from
a random first one (PopMessageProcessor.processRequest's ``randomQ`` loop)."""

from __future__ import annotations

import random

from rocketq.broker.filter import ExpressionMessageFilter
from rocketq.broker.topic_config import TopicConfigManager

_random = random.Random()
rand = _random.random  # int(rand() * n): a fair pick of n small ones, 1/10th randrange's cost
PopStep = tuple[str, int, ExpressionMessageFilter]  # (topic, queue id, filter) of one queue read
# the queue ids of n queues from each first one (randomQ's order), by n: built once for up
# to this many queues (n * n ids)
ROTATIONS_MAX_QUEUES = 64
_ROTATIONS: dict[int, list[tuple[int, ...]]] = {}


def add_steps(
    steps: list[PopStep],
    topics: TopicConfigManager,
    topic: str,
    queue_id: int,
    message_filter: ExpressionMessageFilter,
) -> None:
    """Append the queues of ``topic`` a pop reads: ``queue_id``, or all from a random one."""
    tc = topics.select_topic_config(topic)
    if tc is None or tc.read_queue_nums <= 0:
        return
    n = tc.read_queue_nums
    if queue_id >= 0:
        steps.append((topic, queue_id, message_filter))
        return
    first = int(rand() * n)
    if n > ROTATIONS_MAX_QUEUES:
        steps += [(topic, (first + i) % n, message_filter) for i in range(n)]
        return
    rotations = _ROTATIONS.get(n)
    if rotations is None:
        rotations = _ROTATIONS[n] = [tuple((f + i) % n for i in range(n)) for f in range(n)]
    steps += [(topic, q, message_filter) for q in rotations[first]]
