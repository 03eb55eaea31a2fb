"""Print the protobuf descriptors of the given generated modules as JSON (standalone script).

    python rmq5_descriptors.py MODULE [MODULE ...]

Run once in the 5.x client's own venv (``rocketmq.grpc_protocol.*_pb2``) and once in ours
(``rocketq.proxy.protos.*_pb2``); ``test_rmq5_descriptors.py`` compares the two dumps. Each
message (nested ones by full name), field (number, name, type, label, message or enum type,
oneof, proto3 ``optional``), enum value and service method is keyed by its full name, so the
file names of the two sets may differ. Imports nothing of rocketq: it runs where rocketq is
not installed.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any


def _field(field: Any) -> dict[str, Any]:
    oneof = field.containing_oneof
    return {
        "name": field.name,
        "number": field.number,
        "type": field.type,
        "label": "repeated" if _is_repeated(field) else "single",
        "type_name": (field.message_type or field.enum_type or None)
        and (field.message_type or field.enum_type).full_name,
        "oneof": oneof.name if oneof is not None and not _synthetic(oneof) else None,
        "optional": bool(oneof is not None and _synthetic(oneof)),
    }


def _is_repeated(field: Any) -> bool:
    repeated = getattr(field, "is_repeated", None)  # protobuf >= 6.31; label is deprecated
    return bool(repeated) if repeated is not None else field.label == field.LABEL_REPEATED


def _synthetic(oneof: Any) -> bool:
    """A proto3 ``optional`` field sits in a synthetic oneof named ``_<field>``."""
    return len(oneof.fields) == 1 and oneof.name == f"_{oneof.fields[0].name}"


def _message(message: Any, out: dict[str, Any]) -> None:
    out["messages"][message.full_name] = {str(f.number): _field(f) for f in message.fields}
    for enum in message.enum_types:
        _enum(enum, out)
    for nested in message.nested_types:
        _message(nested, out)


def _enum(enum: Any, out: dict[str, Any]) -> None:
    out["enums"][enum.full_name] = {value.name: value.number for value in enum.values}


def dump(module_names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"packages": [], "messages": {}, "enums": {}, "services": {}}
    for name in module_names:
        file = importlib.import_module(name).DESCRIPTOR
        out["packages"].append(file.package)
        for message in file.message_types_by_name.values():
            _message(message, out)
        for enum in file.enum_types_by_name.values():
            _enum(enum, out)
        for service in file.services_by_name.values():
            out["services"][service.full_name] = {
                method.name: {
                    "input": method.input_type.full_name,
                    "output": method.output_type.full_name,
                    "client_streaming": bool(getattr(method, "client_streaming", False)),
                    "server_streaming": bool(getattr(method, "server_streaming", False)),
                }
                for method in service.methods
            }
    out["packages"] = sorted(set(out["packages"]))
    return out


if __name__ == "__main__":
    json.dump(dump(sys.argv[1:]), sys.stdout, indent=1, sort_keys=True)
