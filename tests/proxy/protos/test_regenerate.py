"""The committed protobuf and gRPC modules are what the committed ``.proto`` files compile to."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketq.proxy.protos import definition_pb2, regenerate, service_pb2


def test_committed_generated_modules_are_current() -> None:
    assert regenerate.stale_modules() == []


def test_a_changed_field_number_makes_its_module_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "rocketq" / "proxy" / "protos"
    package.mkdir(parents=True)
    for path in regenerate.HERE.iterdir():
        if path.is_file():
            (package / path.name).write_bytes(path.read_bytes())
    admin = package / "admin.proto"
    admin.write_text(admin.read_text().replace("string remark = 1;", "string remark = 2;"))
    monkeypatch.setattr(regenerate, "HERE", package)
    monkeypatch.setattr(regenerate, "SOURCE_ROOT", tmp_path)
    assert regenerate.stale_modules() == ["admin_pb2.py"]


def test_the_descriptors_keep_the_wire_names_of_apache_rocketmq_v2() -> None:
    assert definition_pb2.DESCRIPTOR.package == "apache.rocketmq.v2"
    service = service_pb2.DESCRIPTOR.services_by_name["MessagingService"]
    assert service.full_name == "apache.rocketmq.v2.MessagingService"
    assert definition_pb2.Code.Value("MESSAGE_PROPERTY_CONFLICT_WITH_TYPE") == 40014
    fields = definition_pb2.SystemProperties.DESCRIPTOR.fields_by_name
    assert (fields["message_group"].number, fields["priority"].number) == (17, 22)
