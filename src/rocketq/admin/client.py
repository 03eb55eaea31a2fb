"""AsyncAdminClient: DefaultMQAdminExt in Python, on asyncio.

One object holding every admin call, grouped by where it goes: name servers
(``NamesrvAdmin``), brokers (``BrokerAdmin``), consumers through brokers
(``ConsumerAdmin``) and messages (``MessageAdmin``)::

    async with AsyncAdminClient("127.0.0.1:9876") as admin:
        stats = await admin.examine_consume_stats("group")
        print(stats.compute_total_diff())

Results are typed dataclasses (the remoting body classes, ``QueryResult``, ``MessageExt``);
failures raise ``rocketq.errors`` exceptions (a broker's refusal: the BrokerResponseError of
its code, with its remark). ``AdminClient`` in ``rocketq.admin.blocking`` is the same API for
threads and scripts.
"""

from __future__ import annotations

from rocketq.admin.broker import BrokerAdmin
from rocketq.admin.consumer import ConsumerAdmin
from rocketq.admin.namesrv import NamesrvAdmin


class AsyncAdminClient(ConsumerAdmin, NamesrvAdmin, BrokerAdmin):
    async def __aenter__(self) -> AsyncAdminClient:
        return self
