"""A differential fuzzer for the compiled request frames and record paths (issue 22, lever 1).

Run as ``python -m rocketq.testing.frame_fuzz --seconds N [--corpus DIR ...] [--seed S]``;
``make fuzz`` runs it on a build with AddressSanitizer and UndefinedBehaviorSanitizer, where
any out-of-bounds read or undefined behaviour aborts the process. Each round takes a seed
(captured client frames from the corpus directories, or commands made here in both serialize
types), mutates it (bit flips, truncations, length and header-length fields set to edge
values, JSON text edits: nesting, numbers in every form, escapes and surrogates, duplicate
keys, bad UTF-8) and feeds the result, whole and split at a random point, to
``FrameDecoder`` on the C path and on the Python path: both must give the same commands and
the same error, and the send headers read from the commands' extFields (the C header reader,
``header_from_fields``) and each command encoded again (``encode_json_head``) must match
the Python ones; ``split_sends`` must split it as ``split_frames`` does, each send it reads
(random V2 sends are mixed in) the command ``split_frames`` gives with ``send_put_of``'s put
(``check_split_sends``). The send replies' heads (``send_reply_heads``) get random pieces and
values, edge and wrong ones, and must equal ``reply_heads_reference``'s (``send_reply_runs``, a
flush's runs in one call, ``reply_runs_reference``'s). The record scan and decode
(``rocketq._native._record``) get mutated commitlog records and must not crash; the C append
of sends (``append_sends``) gets random sends and must write what the Python path writes,
and the C reader of a send's put (``send_put_of``) random extFields (``append_fuzz``). The C
pull read (``collect_messages``) walks damaged consume queue units of a small store and
made-up files and must give what ``get_message`` gives (``collect_fuzz``). The C POP paths
(``rocketq._native._pop``) read mutated batch-ack bodies and build pop answers and must
give what the Python references give (``pop_fuzz``). The C batch read (``batch_puts``) gets
mutated MessageBatch bodies and must give what the Python path makes of them
(``batch_fuzz``). The answers of a flush's sends in one call (``send_answer_flush``) get random
statuses, topics, requests, connections and values and must give what the Python reference
gives (``flush_fuzz``). The C dispatch (``dispatch_runs``, ``cq_units``, ``index_puts``) writes
random runs of DispatchRequests into consume queue and index files as the Python path does
(``dispatch_fuzz``); the direct dispatch (``dispatch_direct``) does the same from random
commitlog records and takes mutated records and made-up queue and index fields without writing
outside a buffer (``direct_dispatch``). The take of a read's sends (``take_sends``, with the
read's split ``split_take``) and a flush's figures (``count_figures``) must do what their
Python references do (``take_fuzz``), and so must the put figures of a flush in one call
(``count_puts``, ``stats_fuzz``). The commitlog warm-up's ``populate`` gets random and wrong
ranges and buffers and must change no byte (``populate_fuzz``). A finding prints the seed
and input and exits 1.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

from rocketq.common import message_const as mc
from rocketq.common import message_decoder, native_record
from rocketq.common.message import MessageExt
from rocketq.common.message_id import bytes_to_host
from rocketq.errors import RemotingCommandError
from rocketq.remoting import native_frames
from rocketq.remoting.codec import FRAME_PREFIX_STRUCT, FrameDecoder, encode
from rocketq.remoting.protocol.codes import LanguageCode, RequestCode, SerializeType
from rocketq.remoting.protocol.command import RemotingCommand
from rocketq.remoting.protocol.headers import SendMessageRequestHeader, SendMessageRequestHeaderV2
from rocketq.store.commitlog import DispatchRequest
from rocketq.store.commitlog_send import SendPut
from rocketq.store.message_store import MessageStore
from rocketq.testing.append_fuzz import (
    BORN,
    RULES,
    STORE,
    check_append_sends,
    check_send_put,
    random_fields,
)
from rocketq.testing.batch_fuzz import check_batch_puts
from rocketq.testing.collect_fuzz import (
    check_collect_files,
    check_collect_store,
    check_pull_reply_head,
    fuzz_store,
)
from rocketq.testing.direct_dispatch import check_direct
from rocketq.testing.dispatch_fuzz import check_dispatch
from rocketq.testing.flush_fuzz import check_answer_flush
from rocketq.testing.pop_fuzz import (
    check_batch_ack_body,
    check_batch_ack_handles,
    check_pop_answer_fields,
)
from rocketq.testing.populate_fuzz import check_populate
from rocketq.testing.record_paths import outcome
from rocketq.testing.reply_fuzz import check_send_replies, random_text
from rocketq.testing.stats_fuzz import check_count_puts
from rocketq.testing.take_fuzz import check_count_figures, check_split_take, check_take_sends

MAX_FRAME_SIZES = (64, 4096, 16 * 1024 * 1024)
EDGE_INT32 = (0, 1, 3, 4, 5, 8, 21, 0x7FFFFFFF, -1, -0x80000000, 0xFFFF, 0x1000000)
JSON_VALUES = (
    '"x"', "0", "-0", "00", "1.5", "1e3", "-1E+2", "2147483648", "-2147483649", "99999999999",
    "true", "false", "null", "[]", "{}", '{"a":[1]}', "NaN", "Infinity", '"\\ud800"',
    '"\\ud83d\\ude00"', '"\\u0001\\u0002"', '"a\\"b"', '"\\x"', '"\x01"', '"\xff"', '" 12 "',
    '"+7"', '"1_0"', '"JAVA"', '"CPP"', '"NOPE"', "-", "1.", ".5", "1e", '"\\u00e9"',
)  # fmt: skip
TEXT_PIECES = (
    "{", "}", "[", "]", ",", ":", '"', "\\", "\\u", "\\u00", " ", "\n", "\x00", "\xe9", "null",
    '"extFields":', '"code":', '"remark":', '"language":', "\ud800",
)  # fmt: skip


def random_command(rng: random.Random) -> RemotingCommand:
    fields = {random_text(rng, 6): random_text(rng, 12) for _ in range(rng.randrange(6))}
    return RemotingCommand(
        code=rng.choice((10, 11, 34, 310, 320, -1, 32767)),
        language=rng.choice(list(LanguageCode)),
        version=rng.randrange(-5, 500),
        opaque=rng.randrange(-(1 << 31), 1 << 31),
        flag=rng.randrange(4),
        remark=rng.choice((None, "", random_text(rng, 10))),
        ext_fields=fields,
        body=rng.randbytes(rng.randrange(40)),
        serialize_type=rng.choice((SerializeType.JSON, SerializeType.ROCKETMQ)),
    )


def _frame(word_type: int, header: bytes, body: bytes) -> bytes:
    word = (word_type << 24) | len(header)
    return FRAME_PREFIX_STRUCT.pack(4 + len(header) + len(body), word) + header + body


def mutate_json(rng: random.Random, frame: bytes) -> bytes:
    """A JSON header frame with its header text edited, framed again with true lengths."""
    header_length = int.from_bytes(frame[4:8], "big") & 0xFFFFFF
    text = frame[8 : 8 + header_length].decode("utf-8", "surrogatepass")
    body = frame[8 + header_length :]
    for _ in range(rng.randrange(1, 4)):
        choice = rng.randrange(4)
        colons = [i for i, ch in enumerate(text) if ch == ":"]
        if choice == 0 and colons:  # a value replaced
            at = rng.choice(colons) + 1
            end = at
            while end < len(text) and text[end] not in ",}":
                end += 1
            text = text[:at] + rng.choice(JSON_VALUES) + text[end:]
        elif choice == 1:  # a piece inserted
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice(TEXT_PIECES) + text[at:]
        elif choice == 2 and len(text) > 2:  # a run deleted
            at = rng.randrange(len(text))
            text = text[:at] + text[at + rng.randrange(1, 4) :]
        else:  # a key repeated at the end
            key = rng.choice(('"code"', '"extFields"', '"remark"', '"opaque"', '"language"'))
            text = text.rstrip("}") + f",{key}:{rng.choice(JSON_VALUES)}}}"
    return _frame(SerializeType.JSON, text.encode("utf-8", "surrogatepass"), body)


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randrange(1, 5)):
        choice = rng.randrange(6)
        if choice == 0 and buf:  # a bit flipped
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif choice == 1 and buf:  # truncated
            del buf[rng.randrange(len(buf)) :]
        elif choice == 2 and len(buf) >= 4:  # the length field at an edge
            buf[0:4] = (rng.choice(EDGE_INT32) & 0xFFFFFFFF).to_bytes(4, "big")
        elif choice == 3 and len(buf) >= 8:  # the header word at an edge
            value = rng.choice(EDGE_INT32) & 0xFFFFFF | rng.randrange(4) << 24
            buf[4:8] = value.to_bytes(4, "big")
        elif choice == 4 and buf:  # an int32 somewhere at an edge (binary lengths)
            i = rng.randrange(len(buf))
            buf[i : i + 4] = (rng.choice(EDGE_INT32) & 0xFFFFFFFF).to_bytes(4, "big")
        else:  # bytes inserted
            i = rng.randrange(len(buf) + 1)
            buf[i:i] = rng.randbytes(rng.randrange(1, 6))
    return bytes(buf)


def _feed(native: bool, parts: list[bytes], max_size: int) -> tuple[list[RemotingCommand], str]:
    native_frames.use(native)
    decoder = FrameDecoder(max_size)
    commands: list[RemotingCommand] = []
    for part in parts:
        got, error = decoder.feed_until_error(part)
        commands += got
        if error is not None:
            return commands, str(error)
    return commands, ""


def check_frames(rng: random.Random, data: bytes) -> str | None:
    """None when C and Python agree on ``data`` (whole and split in two), and on the send
    header read from each command's extFields, else the difference."""
    max_size = rng.choice(MAX_FRAME_SIZES)
    cut = rng.randrange(len(data) + 1)
    for parts in ([data], [data[:cut], data[cut:]]):
        native = _feed(True, parts, max_size)
        python = _feed(False, parts, max_size)
        if native != python:
            return f"C {native!r}\nPython {python!r}"
    for cmd in native[0]:
        fields = cmd.ext_fields
        headers = []
        for use in (True, False):
            native_frames.use(use)
            headers.append(outcome(lambda: encode(cmd)))  # noqa: B023
            headers.append(outcome(lambda: SendMessageRequestHeaderV2.decode_as_v1(fields)))  # noqa: B023
            headers.append(outcome(lambda: SendMessageRequestHeader.from_ext_fields(fields)))  # noqa: B023
        if headers[:3] != headers[3:]:
            return f"{cmd!r} encoded and read: C {headers[:3]!r}\nPython {headers[3:]!r}"
    return None


SEND_SPEC = (int(RequestCode.SEND_MESSAGE_V2), RULES, SendPut, BORN, STORE)


def send_frame(rng: random.Random) -> bytes:
    """A SEND_MESSAGE_V2 request of random V2 extFields (``append_fuzz.random_fields``, its
    values made text, as a client sends them), for ``split_sends`` to read."""
    fields = {k: str(v) for k, v in random_fields(rng).items() if isinstance(v, str | int)}
    cmd = RemotingCommand(
        code=RequestCode.SEND_MESSAGE_V2,
        opaque=rng.randrange(1 << 31),
        flag=rng.choice((0, 0, 0, 1, 2)),
        ext_fields=fields,
        body=rng.randbytes(rng.choice((0, 10, 4096, 4097))),
        serialize_type=rng.choice((SerializeType.JSON, SerializeType.JSON, SerializeType.ROCKETMQ)),
    )
    try:
        return encode(cmd)
    except RemotingCommandError:  # a surrogate the binary header cannot hold: JSON escapes it
        cmd.serialize_type = SerializeType.JSON
        return encode(cmd)


def check_split_sends(rng: random.Random, data: bytes) -> str | None:
    """``split_sends`` on ``data`` is ``split_frames`` but for the sends it reads: each
    triple's command, its extFields read from its header (``full_request``), is
    ``split_frames``'s, its put ``send_put_of``'s of that command; every other
    item is ``split_frames``'s, and a request of the send code left there one C declines."""
    compiled = native_frames.COMPILED
    assert compiled is not None
    max_size = rng.choice(MAX_FRAME_SIZES)
    plain = compiled.split_frames(data, max_size)
    sends = compiled.split_sends(data, max_size, SEND_SPEC)
    if plain[1:] != sends[1:] or len(plain[0]) != len(sends[0]):
        return f"split_sends {sends!r}\nsplit_frames {plain!r}"
    for got, expected in zip(sends[0], plain[0], strict=True):
        if isinstance(got, tuple):  # a send read: its request's extFields maybe left to read
            if len(cast(tuple[object, ...], got)) != 3:
                return f"split_sends item {got!r}: not (request, put, header)"
            cmd: RemotingCommand | bytes = native_frames.full_request(got)
        else:
            cmd = got
        if cmd != expected:
            return f"split_sends item {got!r}\nsplit_frames {expected!r}"
        if not isinstance(cmd, RemotingCommand):
            continue
        takes = (
            cmd.code == RequestCode.SEND_MESSAGE_V2
            and not cmd.flag & 3
            and cmd.serialize_type is SerializeType.JSON
        )
        put = (
            compiled.send_put_of(cmd.ext_fields, cmd.body, RULES, SendPut, BORN, STORE)
            if takes
            else None
        )
        if (got[1] if isinstance(got, tuple) else None) != put:
            return f"split_sends item {got!r}\nsend_put_of {put!r}"
    return None


def _tags_code(topic: str, props: dict[str, str], tags_code: int) -> int:
    return tags_code


def record_seeds(rng: random.Random, count: int) -> list[bytes]:
    out = []
    for i in range(count):
        msg = MessageExt(topic=f"T{i}", body=rng.randbytes(rng.randrange(64)), queue_id=i % 4)
        msg.properties.update(
            {
                mc.PROPERTY_KEYS: f"k{i}",
                mc.PROPERTY_TAGS: "t",
                mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: f"u{i}",
            }
        )
        msg.born_host = msg.store_host = ("127.0.0.1", 10911)
        out.append(bytes(message_decoder.encode_message(msg)))
    return out


def check_records(rng: random.Random, data: bytes) -> None:
    """The C record scan and decode over ``data``: may refuse it, must not crash."""
    compiled = native_record.COMPILED
    if compiled is None:
        return
    size = len(data)
    compiled.scan_records(
        data, 0, size, size, 0, size + 1, True, True, DispatchRequest, True, _tags_code
    )
    compiled.scan_records(data, 0, size, size, 0, size + 1, False, False, None, False, None)
    check_pull_decode(compiled, data)
    native_record.use(True)
    try:
        message_decoder.decode_messages(data, check_crc=rng.random() < 0.5)
    except Exception:  # noqa: BLE001 -- a refusal is the expected outcome of a mutated record
        return


def check_pull_decode(compiled: native_record.RecordPaths, data: bytes) -> None:
    """``decode_records`` with a pull's offset texts (the push consumer's walk) against the
    plain walk with the same three steps done after it in Python: the same outcome."""
    args = (data, 0, False, True, True, MessageExt, bytes_to_host)
    plain = outcome(lambda: compiled.decode_records(*args))
    pulled = outcome(lambda: compiled.decode_records(*args, "12", "-7"))
    if plain[0] != "ok" or pulled[0] != "ok":
        assert plain[0] == pulled[0], (plain, pulled)
        return
    msgs, pos, stopped = cast(tuple[list[MessageExt], int, bool], plain[1])
    for msg in msgs:
        msg.msg_id = msg.properties.get(mc.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or msg.msg_id
        msg.properties[mc.PROPERTY_MIN_OFFSET] = "12"
        msg.properties[mc.PROPERTY_MAX_OFFSET] = "-7"
    got, got_pos, got_stopped = cast(tuple[list[MessageExt], int, bool], pulled[1])
    assert (got, got_pos, got_stopped) == (msgs, pos, stopped), "decode_records with offsets"
    for a, b in zip(got, msgs, strict=True):
        assert list(a.properties.items()) == list(b.properties.items())


def load_corpus(dirs: list[Path]) -> list[bytes]:
    return [path.read_bytes() for d in dirs for path in sorted(d.rglob("*.bin"))]


def run(seconds: float, seed: int, corpus: list[bytes], log: Callable[[str], None]) -> int:
    """Fuzz for ``seconds``; the number of findings (0 or 1: the first one stops the run)."""
    if native_frames.COMPILED is None:
        log("rocketq._native._remoting is not built: nothing to fuzz")
        return 1
    with fuzz_store() as store:
        return _run(seconds, seed, corpus, log, store)


def _run(
    seconds: float, seed: int, corpus: list[bytes], log: Callable[[str], None], store: MessageStore
) -> int:
    rng = random.Random(seed)
    records = record_seeds(rng, 8)
    was_native = native_frames.FRAMES is not None
    deadline = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < deadline:
        round_seed = rng.randrange(1 << 62)
        r = random.Random(round_seed)
        if corpus and r.random() < 0.5:
            frames = [r.choice(corpus) for _ in range(r.randrange(1, 4))]
        else:
            frames = [encode(random_command(r)) for _ in range(r.randrange(1, 4))]
        if r.random() < 0.5:  # sends for split_sends to read
            frames += [send_frame(r) for _ in range(r.randrange(1, 4))]
            r.shuffle(frames)
        i = r.randrange(len(frames))
        if frames[i][4] == SerializeType.JSON and r.random() < 0.6:
            frames[i] = mutate_json(r, frames[i])
        elif r.random() < 0.8:
            frames[i] = mutate_bytes(r, frames[i])
        data = b"".join(frames)
        difference = (
            check_frames(r, data)
            or check_split_sends(r, data)
            or check_take_sends(r, data, SEND_SPEC)
            or check_split_take(r, data, SEND_SPEC)
            or check_count_figures(r)
            or check_count_puts(r)
            or check_send_replies(r)
            or check_answer_flush(r)
            or check_append_sends(r)
            or check_send_put(r)
            or check_batch_puts(r)
            or check_collect_store(r, store)
            or check_collect_files(r)
            or check_pull_reply_head(r)
            or check_batch_ack_body(r)
            or check_pop_answer_fields(r)
            or check_batch_ack_handles(r)
            or check_dispatch(r)
            or check_direct(r)
            or check_populate(r)
        )
        if difference is not None:
            native_frames.use(was_native)
            log(f"finding: round seed {round_seed}, input {data!r}\n{difference}")
            return 1
        run_of_records = b"".join(r.choice(records) for _ in range(r.randrange(1, 4)))
        check_records(r, mutate_bytes(r, run_of_records) if r.random() < 0.9 else run_of_records)
        rounds += 1
    native_frames.use(was_native)
    log(f"frame_fuzz: {rounds} rounds in {seconds:.0f} s (seed {seed}), 0 findings")
    return 0


SANITIZER_LIBRARIES = ("libasan.so", "libubsan.so")
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",  # CPython's own allocations: no leaks
    "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
    "ROCKETQ_NATIVE": "1",
}


def run_sanitized(argv: list[str], source_tree: Path, timeout_s: float) -> int:
    """Build a copy of the package with ``ROCKETQ_SANITIZE=1`` (setup.py: AddressSanitizer and
    UndefinedBehaviorSanitizer) and run this fuzzer on it in a child process with the
    sanitizer runtimes preloaded; its exit status (a sanitizer report aborts it)."""
    libraries = []
    for name in SANITIZER_LIBRARIES:
        found = subprocess.run(
            ["gcc", f"-print-file-name={name}"], capture_output=True, text=True, check=True
        ).stdout.strip()
        if not os.path.isabs(found):
            print(f"{name} not found (gcc with sanitizer runtimes needed)", file=sys.stderr)
            return 2
        libraries.append(found)
    with tempfile.TemporaryDirectory(prefix="rocketq-fuzz-") as tmp:
        lib = Path(tmp) / "lib"
        shutil.copytree(
            source_tree / "src" / "rocketq",
            lib / "rocketq",
            ignore=shutil.ignore_patterns("*.so", "__pycache__"),
        )
        build = [sys.executable, "setup.py", "-q", "build_ext", "--force", "--parallel", "2"]
        build += ["--build-lib", str(lib), "--build-temp", str(Path(tmp) / "build")]
        subprocess.run(
            build,
            cwd=source_tree,
            env={**os.environ, "ROCKETQ_SANITIZE": "1"},
            check=True,
            timeout=timeout_s,
            stdout=subprocess.DEVNULL,
        )
        env = {**os.environ, **SANITIZER_ENV, "PYTHONPATH": str(lib)}
        env["LD_PRELOAD"] = " ".join(libraries)
        child = [sys.executable, "-m", "rocketq.testing.frame_fuzz", *argv]
        return subprocess.run(child, env=env, timeout=timeout_s).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument(
        "--sanitize",
        type=Path,
        metavar="SOURCE_TREE",
        help="build the source tree's extensions with ASan and UBSan and fuzz those",
    )
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    if args.sanitize is not None:
        child = ["--seconds", str(args.seconds), "--seed", str(seed)]
        for corpus in args.corpus:
            child += ["--corpus", str(corpus.resolve())]
        return run_sanitized(child, args.sanitize.resolve(), args.seconds + 600)
    return run(args.seconds, seed, load_corpus(args.corpus), lambda line: print(line, flush=True))


if __name__ == "__main__":
    sys.exit(main())
