"""Each package root names its public API in ``__all__``, and every name there resolves."""

from __future__ import annotations

import importlib

import pytest

PACKAGES = [
    "rocketq.common",
    "rocketq.store",
    "rocketq.remoting",
    "rocketq.namesrv",
    "rocketq.broker",
    "rocketq.client",
    "rocketq.admin",
    "rocketq.spark",
    "rocketq.dashboard",
    "rocketq.cli",
    "rocketq.testing",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_a_package_root_exports_resolves(package: str) -> None:
    module = importlib.import_module(package)
    exported = module.__all__
    assert exported == sorted(exported, key=lambda n: (not n.isupper(), n))
    for name in exported:
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_the_main_classes_import_from_their_package_roots() -> None:
    from rocketq.broker import BrokerConfig, BrokerController
    from rocketq.client import Message, Producer, PushConsumer
    from rocketq.common import MessageExt, TopicConfig
    from rocketq.namesrv import NamesrvController
    from rocketq.remoting import RemotingClient, RemotingCommand
    from rocketq.store import MessageStore, PutMessageStatus, StoreConfig
    from rocketq.store import MessageStore as Defined

    assert MessageStore is Defined
    assert {c.__name__ for c in (BrokerConfig, BrokerController, Message, Producer)} == {
        "BrokerConfig",
        "BrokerController",
        "Message",
        "Producer",
    }
    assert PushConsumer.__module__ == "rocketq.client.blocking"
    assert MessageExt.__module__ == "rocketq.common.message"
    assert TopicConfig.__module__ == "rocketq.common.topic_config"
    assert NamesrvController.__module__ == "rocketq.namesrv.server"
    assert RemotingClient.__module__ == "rocketq.remoting.client"
    assert RemotingCommand.__module__ == "rocketq.remoting.protocol.command"
    assert StoreConfig.__module__ == "rocketq.store.config"
    assert PutMessageStatus.PUT_OK.is_ok
