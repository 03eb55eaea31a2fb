"""Our client says PYTHON in every request (RocketMQ's ClientConfig.language); the ACL
signature does not cover the language, so signing is unchanged."""

from __future__ import annotations

from rocketq.client.config import ClientConfig, client_rpc_hook
from rocketq.remoting.acl import AclClientRPCHook
from rocketq.remoting.protocol.codes import LanguageCode, RequestCode
from rocketq.remoting.protocol.command import RemotingCommand


def request() -> RemotingCommand:
    return RemotingCommand(RequestCode.HEART_BEAT, opaque=1, ext_fields={"topic": "T"})


def test_every_request_names_the_python_language() -> None:
    cmd = request()
    assert cmd.language == LanguageCode.JAVA  # RemotingCommand's default, as in Java
    ClientConfig().rpc_hook()(cmd)
    assert cmd.language == LanguageCode.PYTHON
    assert "Signature" not in cmd.ext_fields  # no credentials, no signature


def test_the_signature_is_the_same_whatever_the_language() -> None:
    ours = request()
    client_rpc_hook(LanguageCode.PYTHON, "ak", "sk")(ours)
    java = request()
    AclClientRPCHook("ak", "sk")(java)
    assert ours.language == LanguageCode.PYTHON
    assert java.language == LanguageCode.JAVA
    assert ours.ext_fields == java.ext_fields
    assert ours.ext_fields["Signature"]
