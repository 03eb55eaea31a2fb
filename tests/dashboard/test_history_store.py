"""The dashboard's server-kept history (HistoryStore): 10 s slots for an hour and 1 min slots
(the mean of their fine points) for 7 days, a byte bound on the series, a file that survives a
reopen and is replaced atomically; the users.properties parser and the read-only rule of
--login-required."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request

from rocketq.dashboard.history_store import (
    COARSE_SLOTS,
    FINE_SLOTS,
    HistoryStore,
    write_atomically,
)
from rocketq.dashboard.login import read_only_refusal
from rocketq.dashboard.users import ADMIN, NORMAL, User, parse_users

T0 = 1_800_000_000.0  # a slot boundary of both tiers


def test_the_last_hour_comes_at_10_s_and_a_week_at_the_minute_mean() -> None:
    store = HistoryStore(None)
    for i in range(12):  # two minutes of 10 s samples: 0..5 then 6..11
        store.add({"topic:T:put": float(i)}, T0 + 10 * i)
    now = T0 + 115
    hour = store.query(["topic:T:put"], now, 3600)
    assert hour["step_s"] == 10
    assert hour["series"]["topic:T:put"] == [float(i) for i in range(12)]
    assert hour["times"][0] == int(T0 * 1000)
    week = store.query(["topic:T:put"], now, 7 * 24 * 3600)
    assert week["step_s"] == 60
    assert week["series"]["topic:T:put"] == [2.5, 8.5]  # the mean of each minute
    assert store.query(["topic:T:put"], now, 600)["times"][-1] == int((T0 + 110) * 1000)


def test_a_slot_left_from_an_older_lap_is_never_shown_as_new() -> None:
    store = HistoryStore(None)
    store.add({"k": 1.0}, T0)
    later = T0 + 10 * FINE_SLOTS  # the same fine slot, one lap (an hour) later
    store.add({"other": 2.0}, later)
    found = store.query(["k", "other"], later, 3600)
    assert found["series"]["k"] == [None]  # emptied when the slot was claimed again
    assert found["series"]["other"] == [2.0]
    assert store.latest("k", later) == {}


def test_history_survives_a_reopen_and_the_file_is_bounded(tmp_path: Path) -> None:
    store = HistoryStore(tmp_path / "history")
    for i in range(30):
        store.add({"broker:a:put": float(i), "group:G:lag": 100.0 - i}, T0 + 10 * i)
    store.save()
    files = sorted(p.name for p in (tmp_path / "history").iterdir())
    assert files == ["coarse.bin", "fine.bin"]  # no .tmp left behind
    size = sum(p.stat().st_size for p in (tmp_path / "history").iterdir())
    per_series = 4 * (FINE_SLOTS + COARSE_SLOTS)
    assert size < 2 * per_series + 8 * (FINE_SLOTS + COARSE_SLOTS) + 1024

    again = HistoryStore(tmp_path / "history")
    found = again.query(["broker:a:put", "group:G:lag"], T0 + 295, 3600)
    assert found["series"]["broker:a:put"] == [float(i) for i in range(30)]
    assert found["series"]["group:G:lag"][-1] == 71.0
    assert again.keys() == ["broker:a:put", "group:G:lag"]


def test_the_byte_bound_evicts_the_series_sampled_longest_ago() -> None:
    bound = 2 * HistoryStore.series_bytes()
    store = HistoryStore(None, max_bytes=bound)
    assert store.max_series == 2
    store.add({"a": 1.0, "b": 1.0}, T0)
    store.add({"b": 2.0, "c": 3.0}, T0 + 10)  # "a" was not sampled this tick: "c" takes it
    assert store.keys() == ["b", "c"]
    store.add({"b": 2.0, "c": 3.0, "d": 4.0}, T0 + 20)  # all sampled now: "d" is dropped
    assert store.keys() == ["b", "c"]
    assert store.dropped == 1


def test_a_damaged_or_foreign_file_starts_an_empty_history(tmp_path: Path) -> None:
    (tmp_path / "fine.bin").write_bytes(b"RQHIST1\n\x05\x00\x00\x00{bad")
    (tmp_path / "coarse.bin").write_bytes(b"not a history")
    store = HistoryStore(tmp_path)
    assert store.keys() == []
    other = HistoryStore(tmp_path / "o", fine_step_s=1.0, coarse_step_s=6.0)
    other.add({"k": 1.0}, T0)
    other.save()
    assert HistoryStore(tmp_path / "o", fine_step_s=1.0, coarse_step_s=6.0).keys() == ["k"]
    assert HistoryStore(tmp_path / "o").keys() == []  # another resolution: not misplaced


def test_write_atomically_replaces_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    write_atomically(target, b"old")
    write_atomically(target, b"new and longer")
    assert target.read_bytes() == b"new and longer"
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


def test_users_properties_reads_rocketmq_dashboards_format() -> None:
    users = parse_users(
        "# Format: username=password[,N] N: 0 normal, 1 admin\n"
        "super=12345,1\nuser1=pw\nviewer = pw2 , 0\nboss=s3cret,admin\n! comment\nbroken\n"
    )
    assert {u.name: (u.password, u.role) for u in users.values()} == {
        "super": ("12345", ADMIN),
        "user1": ("pw", NORMAL),
        "viewer": ("pw2", NORMAL),
        "boss": ("s3cret", ADMIN),
    }


def test_a_normal_user_may_only_log_in_again_or_out() -> None:
    def post(path: str) -> Request:
        return Request({"type": "http", "method": "POST", "path": path, "headers": []})

    viewer, boss = User("viewer", "pw", NORMAL), User("boss", "pw", ADMIN)
    assert "read-only" in read_only_refusal(post("/topics"), viewer)
    assert read_only_refusal(post("/login"), viewer) == ""
    assert read_only_refusal(post("/logout"), viewer) == ""
    assert read_only_refusal(post("/topics"), boss) == ""
    assert read_only_refusal(post("/topics"), None) == ""  # no login required
