"""PendingRequests: a proposal is answered only by its own entry (same index and term), a read
only once its ReadIndex is applied, and losing leadership fails everything pending."""

from __future__ import annotations

import asyncio

import pytest

from rocketq.controller.metadata_log import NotLeaderError
from rocketq.controller.raft import ReadState
from rocketq.controller.raft_requests import PendingRequests


def pending() -> PendingRequests:
    return PendingRequests(lambda reason: NotLeaderError(reason, 2))


async def test_a_proposal_gets_its_entrys_result() -> None:
    requests = pending()
    future: asyncio.Future[tuple[int, object]] = asyncio.get_running_loop().create_future()
    requests.add_proposal(7, 3, future)
    requests.resolve(7, 3, "applied", None)
    assert future.result() == (7, "applied")


async def test_an_entry_of_another_term_at_the_index_fails_the_proposal() -> None:
    requests = pending()
    future: asyncio.Future[tuple[int, object]] = asyncio.get_running_loop().create_future()
    requests.add_proposal(7, 3, future)
    requests.resolve(7, 4, "someone else's", None)
    with pytest.raises(NotLeaderError, match="replaced by a new leader") as failed:
        future.result()
    assert failed.value.leader_id == 2


async def test_a_read_waits_until_its_read_index_is_applied() -> None:
    requests = pending()
    future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
    requests.add_read(b"r1", future)
    requests.read_states((ReadState(10, b"r1"),), applied=9)
    assert not future.done()
    requests.serve_reads(10)
    assert future.result() == 10


async def test_losing_leadership_fails_proposals_and_reads_in_every_stage() -> None:
    loop = asyncio.get_running_loop()
    requests = pending()
    proposal: asyncio.Future[tuple[int, object]] = loop.create_future()
    unconfirmed: asyncio.Future[int] = loop.create_future()
    unapplied: asyncio.Future[int] = loop.create_future()
    requests.add_proposal(5, 1, proposal)
    requests.add_read(b"a", unconfirmed)
    requests.add_read(b"b", unapplied)
    requests.read_states((ReadState(9, b"b"),), applied=4)
    requests.fail_all("leadership lost")
    for future in (proposal, unconfirmed, unapplied):
        with pytest.raises(NotLeaderError, match="leadership lost"):
            future.result()


async def test_a_proposal_whose_caller_gave_up_is_forgotten() -> None:
    requests = pending()
    future: asyncio.Future[tuple[int, object]] = asyncio.get_running_loop().create_future()
    requests.add_proposal(7, 3, future)
    assert len(requests) == 1
    future.cancel()
    await asyncio.sleep(0)  # done callbacks run on the next loop iteration
    assert len(requests) == 0
