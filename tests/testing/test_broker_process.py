"""BrokerProcess starts without a pick-then-release race: port 0 on the first start, the
learned ports on a restart, and a bounded retry while a port it must re-bind is held."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from rocketq.testing import broker_process
from rocketq.testing.broker import SMALL_INDEX
from rocketq.testing.broker_process import BrokerProcess, PortTakenError
from rocketq.testing.store import small_store_properties

pytestmark = pytest.mark.timeout(120)


def conf(root: Path) -> dict[str, str]:
    return {
        "brokerClusterName": "PortCluster",
        "brokerName": "broker-ports",
        "brokerIP1": "127.0.0.1",
        "storePathRootDir": str(root),
        **small_store_properties(),
        **SMALL_INDEX,
    }


def hold(port: int) -> socket.socket:
    """A listening socket on ``port``, as another server that took it would hold it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen()
    return sock


def test_first_start_binds_port_zero_and_learns_both_ports(tmp_path: Path) -> None:
    broker = BrokerProcess(tmp_path / "proc", conf(tmp_path / "store"))
    try:
        broker.start()
        assert broker.port > 0
        assert broker.ha_addr != broker.addr
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5):
            pass
    finally:
        broker.kill()


def test_restart_waits_for_its_held_port_then_rebinds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broker = BrokerProcess(tmp_path / "proc", conf(tmp_path / "store"))
    try:
        broker.start()
        port, ha_addr = broker.port, broker.ha_addr
        broker.kill()
        squatter = hold(port)  # someone takes the port between the kill and the restart
        launch = broker._launch

        def launch_then_release(argv: list[str], what: str, timeout_s: float) -> None:
            try:
                launch(argv, what, timeout_s)
            except PortTakenError:  # refused once: the squatter lets the port go
                squatter.close()
                raise

        monkeypatch.setattr(broker, "_launch", launch_then_release)
        try:
            broker.start()
        finally:
            squatter.close()
        refused = [line for line in broker.output if f"port {port} is in use" in line]
        assert refused, "the held port never refused a start: the test proved nothing"
        assert (broker.port, broker.ha_addr) == (port, ha_addr)
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        broker.kill()


def test_restart_on_a_port_held_for_good_fails_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(broker_process, "START_ATTEMPTS", 2)
    broker = BrokerProcess(tmp_path / "proc", conf(tmp_path / "store"))
    try:
        broker.start()
        port = broker.port
        broker.kill()
        with hold(port), pytest.raises(PortTakenError) as failed:
            broker.start()
        assert f"port {port} is in use" in str(failed.value)
        assert "\n" not in str(failed.value)
        assert not broker.running
    finally:
        broker.kill()


def test_a_stock_conf_broker_is_started_again_on_fresh_ports_when_a_picked_one_is_taken(
    tmp_path: Path,
) -> None:
    taken = hold(0)  # the first pick: a port another server took before the broker bound it
    picks = [int(taken.getsockname()[1])]
    made: list[BrokerProcess] = []

    def make() -> BrokerProcess:
        port = picks.pop() if picks else broker_process.free_port_pair()
        made.append(
            BrokerProcess(
                tmp_path / f"proc{len(made)}", {**conf(tmp_path / "store"), "listenPort": str(port)}
            )
        )
        return made[-1]

    try:
        with taken:
            broker = broker_process.start_on_picked_ports(make)
        assert len(made) == 2
        assert any("is in use" in line for line in made[0].output)
        assert broker is made[1]
        assert broker.ha_addr == f"127.0.0.1:{broker.port + 1}"  # a stock conf: listenPort + 1
    finally:
        for broker in made:
            broker.kill()
