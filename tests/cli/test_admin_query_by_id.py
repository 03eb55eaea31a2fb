"""``queryMsgById`` keeps mqadmin's ``-t`` and, without it, finds a uniq key (the msgId a
producer prints) in the uniq-key index of every topic, within --search-timeout."""

from __future__ import annotations

import asyncio

from click.testing import CliRunner

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin import admin
from rocketq.testing.admin_cli import ok, run
from rocketq.testing.cluster import Cluster


async def sent_uniq_key(cluster: Cluster, topic: str) -> str:
    await cluster.create_topic(topic, 2)
    out = ok(await run(cluster, "sendMessage", "-t", topic, "-p", "find me", "-k", "fk"))
    msg_id = out.splitlines()[-1].split()[-1]
    async with AsyncAdminClient(cluster.addr) as client, asyncio.timeout(30):
        while await client.query_message_by_uniq_key(topic, msg_id) is None:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # the index is built after the put (reput)
    return msg_id


async def test_query_by_id_without_a_topic_searches_every_uniq_key_index(
    cluster: Cluster,
) -> None:
    for other in ("AaaFirst", "ZzzLast"):
        await cluster.create_topic(other, 1)
    msg_id = await sent_uniq_key(cluster, "FindMeTopic")
    shown = " ".join(ok(await run(cluster, "queryMsgById", "-i", msg_id)).split())
    assert "Topic: FindMeTopic" in shown
    assert "Message Body: find me" in shown
    with_topic = " ".join(
        ok(await run(cluster, "queryMsgById", "-i", msg_id, "-t", "FindMeTopic")).split()
    )
    assert "Topic: FindMeTopic" in with_topic


async def test_a_search_cut_short_says_so(cluster: Cluster) -> None:
    msg_id = await sent_uniq_key(cluster, "CutShortTopic")
    result = await run(cluster, "queryMsgById", "-i", msg_id, "--search-timeout", "0")
    assert result.exit_code == 1
    assert "notice: searched the uniq-key index of 0 of " in result.stderr
    assert "(--search-timeout), then stopped" in result.stderr
    assert "give its topic with -t, or a longer --search-timeout" in result.stderr


def test_the_help_says_the_search_goes_beyond_mqadmin() -> None:
    text = CliRunner().invoke(admin, ["queryMsgById", "--help"]).output
    assert "-t, --topic" in text
    assert "beyond mqadmin" in " ".join(text.split())
