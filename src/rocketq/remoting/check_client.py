"""CheckClientRequestBody: the body of CHECK_CLIENT_CONFIG (46).

A consumer sends it at start for each subscription that is not a TAG expression, so the broker
can refuse a filter it cannot run (``enablePropertyFilter``) or an expression that does not
compile (SUBSCRIPTION_PARSE_FAILED) before the first pull::

    {"clientId": "...", "group": "...", "subscriptionData": {SubscriptionData}}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Self

from rocketq.common.json_body import JsonBody, as_object, as_str
from rocketq.common.subscription import SubscriptionData


@dataclass(slots=True, kw_only=True)
class CheckClientRequestBody(JsonBody):
    client_id: str
    group: str
    subscription_data: SubscriptionData

    def to_json(self) -> dict[str, Any]:
        return {
            "clientId": self.client_id,
            "group": self.group,
            "subscriptionData": self.subscription_data.to_json(),
        }

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Self:
        return cls(
            client_id=as_str(obj, "clientId"),
            group=as_str(obj, "group"),
            subscription_data=SubscriptionData.from_json(
                as_object(obj.get("subscriptionData") or {}, "subscriptionData")
            ),
        )
