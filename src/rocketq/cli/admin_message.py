"""``rocketq admin`` message lookups: queryMsgById, queryMsgByKey, queryMsgByUniqueKey,
queryMsgByOffset (mqadmin's names and short options). With ``-g`` and ``-d`` a found message is
handed to one consumer client to consume again (CONSUME_MESSAGE_DIRECTLY); with ``-s true``
queryMsgById sends a copy of it to its topic again."""

from __future__ import annotations

import asyncio
import codecs
from typing import Any

import click

from rocketq.admin import AsyncAdminClient
from rocketq.cli.admin_context import AdminContext, admin_command, format_ms, parse_timestamp
from rocketq.common.message import MessageExt, MessageQueue
from rocketq.common.topic import is_dlq_topic, is_retry_topic, is_system_topic
from rocketq.errors import NoMessageError, RocketQError

UTF8 = "UTF-8"


def message_pairs(
    msg: MessageExt, *, charset: str = UTF8, print_body: bool = True
) -> list[tuple[str, Any]]:
    """The fields mqadmin's queryMsgById prints, with the body as text in ``charset``."""
    pairs: list[tuple[str, Any]] = [
        ("OffsetID", msg.offset_msg_id),
        ("Topic", msg.topic),
        ("Tags", f"[{msg.tags or ''}]"),
        ("Keys", f"[{' '.join(msg.keys) if msg.keys else ''}]"),
        ("Queue ID", msg.queue_id),
        ("Queue Offset", msg.queue_offset),
        ("CommitLog Offset", msg.commitlog_offset),
        ("Reconsume Times", msg.reconsume_times),
        ("Born Timestamp", format_ms(msg.born_timestamp)),
        ("Store Timestamp", format_ms(msg.store_timestamp)),
        ("Born Host", f"{msg.born_host[0]}:{msg.born_host[1]}"),
        ("Store Host", f"{msg.store_host[0]}:{msg.store_host[1]}"),
        ("System Flag", msg.sys_flag),
        ("Properties", dict(sorted(msg.properties.items()))),
    ]
    if print_body:
        pairs.append(("Message Body", msg.body.decode(charset, "replace")))
    return pairs


def message_json(
    msg: MessageExt, *, charset: str = UTF8, print_body: bool = True
) -> dict[str, Any]:
    pairs = message_pairs(msg, charset=charset, print_body=print_body)
    return {k.replace(" ", ""): v for k, v in pairs} | {"msgId": msg.client_msg_id}


def print_messages(
    ctx: AdminContext, msgs: list[MessageExt], *, charset: str = UTF8, print_body: bool = True
) -> None:
    if ctx.as_json:
        ctx.json([message_json(m, charset=charset, print_body=print_body) for m in msgs])
        return
    for msg in msgs:
        pairs = message_pairs(msg, charset=charset, print_body=print_body)
        ctx.pairs([(f"{k}:", v) for k, v in pairs], separator=" ")
        click.echo("")


def check_charset(
    click_ctx: click.Context, param: click.Parameter, value: str | None
) -> str | None:
    """A body charset Python knows (mqadmin's -f bodyFormat / printMsg's -c charsetName)."""
    if value is None:
        return None
    try:
        codecs.lookup(value)
    except LookupError:
        raise click.BadParameter(f"{value!r} is not a charset") from None
    return value


BODY_FORMAT = click.option(
    "-f",
    "--bodyFormat",
    "charset",
    default=UTF8,
    show_default=True,
    callback=check_charset,
    help="The charset to print bodies in.",
)
CONSUMER_GROUP = click.option(
    "-g", "--consumerGroup", "group", default=None, help="With -d: consume it again there."
)
#: mqadmin 5.3's -c of the query commands (the cluster to ask); the topic's route decides here
CLUSTER = click.option(
    "-c",
    "--cluster",
    default=None,
    expose_value=False,
    help="Accepted as mqadmin 5.3 does; the topic's route gives the brokers to ask.",
)
CLIENT_ID = click.option("-d", "--clientId", "client_id", default=None, help="With -g.")


def consume_directly(
    ctx: AdminContext, group: str, client_id: str, topic: str | None, msg_id: str
) -> None:
    """CONSUME_MESSAGE_DIRECTLY: the client runs its listener on the message; print the result."""
    if topic is None:
        msg = ctx.run(lambda admin: admin.view_message(msg_id))
        topic = msg.topic
    result = ctx.run(
        lambda admin: admin.consume_message_directly(group, client_id, str(topic), msg_id)
    )
    if ctx.as_json:
        ctx.json(result.to_json())
    else:
        click.echo(f"ConsumeMessageDirectlyResult: {result.to_json()}")


def direct_target(group: str | None, client_id: str | None) -> tuple[str, str] | None:
    """(group, client id) when -g and -d ask to consume the message again, else None."""
    if group is None and client_id is None:
        return None
    if group is None or client_id is None:
        raise click.UsageError("-g/--consumerGroup and -d/--clientId go together")
    return group, client_id


@click.command("queryMsgById")
@click.option(
    "-i",
    "--msgId",
    "msg_id",
    required=True,
    help="The offset msgId, or a uniq key (the msgId a producer prints).",
)
@click.option("-t", "--topic", default=None, help="The topic of a uniq key (searched first).")
@click.option(
    "--search-timeout",
    "search_s",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="Without -t, seconds to search every topic's uniq-key index (beyond mqadmin).",
)
@CONSUMER_GROUP
@CLIENT_ID
@click.option(
    "-s", "--sendMessage", "resend", type=bool, default=False, help="true: send it again."
)
@click.option("-u", "--unitName", "unit", default=None, help="Refused: rocketq has no units.")
@BODY_FORMAT
@CLUSTER
@admin_command
def query_msg_by_id(
    ctx: AdminContext,
    msg_id: str,
    topic: str | None,
    search_s: float,
    group: str | None,
    client_id: str | None,
    resend: bool,
    unit: str | None,
    charset: str,
) -> None:
    """Show one message by its id, with its properties and body.

    An offset msgId (store host and commitlog offset) is read from its broker. With -t the id
    may be a uniq key of that topic, as in mqadmin. Beyond mqadmin: without -t, an id that is
    no offset msgId is looked up in the uniq-key index of every topic, for at most
    --search-timeout seconds (a notice says when the search was cut short).

    \b
    Example:
      rocketq admin queryMsgById -n 127.0.0.1:9876 -i 7F00000100002A9F0000000000000000
    """
    if unit:
        raise click.UsageError("unit names (-u) are not supported by rocketq")
    target = direct_target(group, client_id)
    if target is not None:
        consume_directly(ctx, *target, topic, msg_id)
        return
    if topic is None:
        msg = ctx.run(lambda admin: find_by_any_id(admin, msg_id, search_s))
    else:
        msg = ctx.run(lambda admin: admin.view_message(msg_id, topic))
    if resend:
        resend_message(ctx, msg)
        return
    print_messages(ctx, [msg], charset=charset)


async def find_by_any_id(admin: AsyncAdminClient, msg_id: str, search_s: float) -> MessageExt:
    """The message of an offset msgId, else of a uniq key in any topic's index (bounded)."""
    try:
        return await admin.view_message(msg_id)
    except (RocketQError, ValueError, OSError):
        pass  # not an offset msgId of a live broker: try it as a uniq key
    if not _looks_like_uniq_key(msg_id):
        raise NoMessageError(f"{msg_id} is neither an offset msgId of a broker nor a uniq key")
    topics = sorted(await admin.fetch_all_topic_list(), key=_search_order)
    search = UniqKeySearch(admin, msg_id)
    try:
        async with asyncio.timeout(search_s):
            found = await search.run(topics)
    except TimeoutError:
        found = None
        click.echo(
            f"notice: searched the uniq-key index of {search.searched} of {len(topics)} topics "
            f"in {search_s:g} s (--search-timeout), then stopped",
            err=True,
        )
    if found is None:
        raise NoMessageError(
            f"{msg_id} is no offset msgId, and the uniq-key index of {search.searched} topic(s) "
            "does not hold it: give its topic with -t, or a longer --search-timeout"
        )
    return found


class UniqKeySearch:
    """Topics' uniq-key indexes asked a few at a time; the first hit wins."""

    PARALLEL = 4

    def __init__(self, admin: AsyncAdminClient, msg_id: str) -> None:
        self.admin, self.msg_id = admin, msg_id
        self.searched = 0

    async def run(self, topics: list[str]) -> MessageExt | None:
        for start in range(0, len(topics), self.PARALLEL):
            batch = topics[start : start + self.PARALLEL]
            found = await asyncio.gather(*(self._one(topic) for topic in batch))
            self.searched += len(batch)
            hit = next((m for m in found if m is not None), None)
            if hit is not None:
                return hit
        return None

    async def _one(self, topic: str) -> MessageExt | None:
        try:
            return await self.admin.query_message_by_uniq_key(topic, self.msg_id)
        except RocketQError:  # a topic without a route or index answers nothing
            return None


def _looks_like_uniq_key(text: str) -> bool:
    """MessageClientIDSetter's ids: 16 bytes in hex (28 with an IPv6 address)."""
    try:
        return len(bytes.fromhex(text)) in (16, 28)
    except ValueError:
        return False


def _search_order(topic: str) -> tuple[int, str]:
    """Users' topics first, then retry and dead-letter topics, then system topics."""
    if is_system_topic(topic):
        return 2, topic
    return (1 if is_retry_topic(topic) or is_dlq_topic(topic) else 0), topic


def resend_message(ctx: AdminContext, msg: MessageExt) -> None:
    """A copy of ``msg`` (body, tags, keys, user properties) sent to its topic again."""
    from rocketq.client import Message

    async def call(admin: AsyncAdminClient) -> Any:
        del admin
        copy = Message(msg.topic, msg.body, tags=msg.tags, keys=msg.keys or None)
        async with ctx.producer("PID_ROCKETQ_ADMIN") as producer:
            return await producer.send(copy)

    result = ctx.run(call)
    ctx.done(
        f"prepare resend msg. originalMsgId={msg.client_msg_id} {result.status.name} "
        f"msgId={result.msg_id}",
        {"originalMsgId": msg.client_msg_id, "status": result.status.name, "msgId": result.msg_id},
    )


@click.command("queryMsgByKey")
@click.option("-t", "--topic", required=True)
@click.option("-k", "--msgKey", "key", required=True)
@click.option("-b", "--beginTimestamp", "begin", default="0", help="Epoch ms or a date.")
@click.option("-e", "--endTimestamp", "end", default=None, help="Epoch ms or a date.")
@click.option("-m", "--maxNum", "max_num", type=int, default=64, show_default=True)
@CLUSTER
@admin_command
def query_msg_by_key(
    ctx: AdminContext, topic: str, key: str, begin: str, end: str | None, max_num: int
) -> None:
    """Find the messages of a topic whose KEYS hold a key.

    \b
    Example:
      rocketq admin queryMsgByKey -n 127.0.0.1:9876 -t TopicTest -k order-42
    """
    begin_ms = parse_timestamp(begin)
    end_ms = parse_timestamp(end) if end else 2**63 - 1
    result = ctx.run(lambda admin: admin.query_message(topic, key, max_num, begin_ms, end_ms))
    ctx.table(
        ["#Message ID", "#QID", "#Offset"],
        [(m.client_msg_id, m.queue_id, m.queue_offset) for m in result.message_list],
    )


@click.command("queryMsgByUniqueKey")
@click.option("-t", "--topic", required=True)
@click.option("-i", "--msgId", "msg_id", required=True, help="The client msgId (UNIQ_KEY).")
@CONSUMER_GROUP
@CLIENT_ID
@click.option(
    "-a", "--showAll", "show_all", is_flag=True, help="As mqadmin's; the query keeps one copy."
)
@CLUSTER
@admin_command
def query_msg_by_unique_key(
    ctx: AdminContext,
    topic: str,
    msg_id: str,
    group: str | None,
    client_id: str | None,
    show_all: bool,
) -> None:
    """Show a message by the id its producer printed (the uniq key).

    \b
    Example:
      rocketq admin queryMsgByUniqueKey -n 127.0.0.1:9876 -t TopicTest -i 7F000001...
    """
    target = direct_target(group, client_id)
    if target is not None:
        consume_directly(ctx, *target, topic, msg_id)
        return

    async def call(admin: AsyncAdminClient) -> list[MessageExt]:
        # the uniq-key query keeps the earliest copy (MQAdminImpl), with or without --showAll
        one = await admin.query_message_by_uniq_key(topic, msg_id)
        if one is None:
            raise click.ClickException(f"no message of {topic} has the uniq key {msg_id}")
        return [one]

    print_messages(ctx, ctx.run(call))


@click.command("queryMsgByOffset")
@click.option("-t", "--topic", required=True)
@click.option("-b", "--brokerName", "broker", required=True)
@click.option("-i", "--queueId", "queue_id", type=int, required=True)
@click.option("-o", "--offset", type=int, required=True)
@BODY_FORMAT
@admin_command
def query_msg_by_offset(
    ctx: AdminContext, topic: str, broker: str, queue_id: int, offset: int, charset: str
) -> None:
    """Show the message at an offset of one queue.

    \b
    Example:
      rocketq admin queryMsgByOffset -n 127.0.0.1:9876 -t TopicTest -b broker-a -i 0 -o 0
    """
    mq = MessageQueue(topic, broker, queue_id)
    msg = ctx.run(lambda admin: admin.query_msg_by_offset(mq, offset))
    print_messages(ctx, [msg], charset=charset)


COMMANDS = [query_msg_by_id, query_msg_by_key, query_msg_by_unique_key, query_msg_by_offset]
