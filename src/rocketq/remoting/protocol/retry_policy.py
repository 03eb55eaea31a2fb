"""A subscription group's retry policy (RocketMQ 5's ``GroupRetryPolicy``,
``CustomizedRetryPolicy``, ``ExponentialRetryPolicy``; remoting/protocol/subscription).

JSON as fastjson writes the beans, keys sorted, an absent policy left out::

    {"customizedRetryPolicy":{"next":[1000,5000]},"type":"CUSTOMIZED"}
    {"exponentialRetryPolicy":{"initial":5000,"max":7200000,"multiplier":2},"type":"EXPONENTIAL"}

``next_delay_duration_ms(reconsume_times)`` is the delay before a message's next delivery:
CUSTOMIZED takes ``next[reconsume_times + 2]`` (the index of the old delay levels, capped at the
last), EXPONENTIAL ``min(max, initial * multiplier ** min(reconsume_times, 32))``; a group whose
chosen policy is missing falls back to the default CUSTOMIZED table (1s 5s 10s 30s 1m ... 2h).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from rocketq.remoting.protocol.json_body import JsonBody

_S = 1000
_M = 60 * _S
_H = 60 * _M
DEFAULT_CUSTOMIZED_NEXT_MS: tuple[int, ...] = (
    *(1 * _S, 5 * _S, 10 * _S, 30 * _S),
    *(n * _M for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 20, 30)),
    *(1 * _H, 2 * _H),
)
assert len(DEFAULT_CUSTOMIZED_NEXT_MS) == 18


class GroupRetryPolicyType(enum.Enum):
    EXPONENTIAL = "EXPONENTIAL"
    CUSTOMIZED = "CUSTOMIZED"


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomizedRetryPolicy(JsonBody):
    next: list[int] = field(default_factory=lambda: list(DEFAULT_CUSTOMIZED_NEXT_MS))

    def next_delay_duration_ms(self, reconsume_times: int) -> int:
        index = min(max(reconsume_times, 0) + 2, len(self.next) - 1)
        return self.next[index]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExponentialRetryPolicy(JsonBody):
    initial: int = 5 * _S
    max: int = 2 * _H
    multiplier: int = 2

    def next_delay_duration_ms(self, reconsume_times: int) -> int:
        times = min(max(reconsume_times, 0), 32)
        return int(min(self.max, self.initial * float(self.multiplier) ** times))


RetryPolicy = CustomizedRetryPolicy | ExponentialRetryPolicy
DEFAULT_RETRY_POLICY = CustomizedRetryPolicy()


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRetryPolicy(JsonBody):
    type: GroupRetryPolicyType = GroupRetryPolicyType.CUSTOMIZED
    exponential_retry_policy: ExponentialRetryPolicy | None = None
    customized_retry_policy: CustomizedRetryPolicy | None = None

    @property
    def retry_policy(self) -> RetryPolicy:
        """``getRetryPolicy``: the policy of ``type``, the default when it is missing."""
        if self.type is GroupRetryPolicyType.EXPONENTIAL and self.exponential_retry_policy:
            return self.exponential_retry_policy
        if self.type is GroupRetryPolicyType.CUSTOMIZED and self.customized_retry_policy:
            return self.customized_retry_policy
        return DEFAULT_RETRY_POLICY
