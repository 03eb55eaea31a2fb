"""Reload of plain_acl.yml: a change is loaded once two polls see the same bytes, so a file
caught mid-write is never loaded, and traffic of an unchanged account is never refused while
the file is rewritten under it."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rocketq.broker.acl.plain_permission_manager import PlainPermissionManager
from rocketq.remoting.protocol.codes import RequestCode
from rocketq.response_code import ResponseCode
from rocketq.testing import until
from rocketq.testing.acl import ACCOUNTS, NORMAL, WAIT_S, AclCluster, signed, write_acl
from rocketq.testing.wire import send_request

SENDERS = 4
ROUNDS = 5
REWRITES_PER_ROUND = 5


def keys(manager: PlainPermissionManager) -> set[str]:
    return set(manager.config.accounts)


async def test_a_change_is_loaded_only_after_two_polls_see_the_same_bytes(tmp_path: Path) -> None:
    path = tmp_path / "plain_acl.yml"
    write_acl(path, ACCOUNTS)
    manager = PlainPermissionManager(path)
    manager.load()
    everyone = keys(manager)
    path.write_text("")  # the moment after an in-place save truncated the file
    assert not await manager.reload_if_changed()
    write_acl(path, ACCOUNTS[:1])  # cut after the first account
    assert not await manager.reload_if_changed()
    assert keys(manager) == everyone
    write_acl(path, [*ACCOUNTS, {"accessKey": "LateAK001", "secretKey": "LateSK001"}])
    assert not await manager.reload_if_changed()  # first sight: wait for it to settle
    assert await manager.reload_if_changed()
    assert keys(manager) == everyone | {"LateAK001"}
    assert manager.reload_count == 1


async def test_an_unchanged_account_is_never_refused_while_the_file_is_rewritten(
    acl_cluster: AclCluster,
) -> None:
    manager = acl_cluster.broker.access_validator.manager  # type: ignore[union-attr]
    done = asyncio.Event()
    codes: list[int] = []

    async def sender(n: int) -> None:
        i = 0
        while not done.is_set():
            cmd = send_request("TopicA", b"%d-%d" % (n, i), code=RequestCode.SEND_MESSAGE_V2)
            codes.append((await acl_cluster.invoke(signed(cmd, NORMAL))).code)
            i += 1

    tasks = [asyncio.create_task(sender(n)) for n in range(SENDERS)]
    try:
        for round_no in range(ROUNDS):
            for j in range(REWRITES_PER_ROUND):  # in place: truncate, then write
                extra = {"accessKey": f"Extra{round_no}{j}AK", "secretKey": "ExtraSK01"}
                write_acl(acl_cluster.acl_file, [*ACCOUNTS, extra])
            last = f"Extra{round_no}{REWRITES_PER_ROUND - 1}AK"
            assert await until(lambda last=last: last in manager.config.accounts, WAIT_S)
    finally:
        done.set()
        await asyncio.gather(*tasks)
    assert manager.reload_count >= ROUNDS
    assert len(codes) > SENDERS
    assert set(codes) == {ResponseCode.SUCCESS}
