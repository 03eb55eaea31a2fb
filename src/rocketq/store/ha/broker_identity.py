"""A controller-mode broker's persistent id: ``<storePathRootDir>/brokerIdentity`` and its
``brokerIdentity-temp`` (RocketMQ 5's ``store/ha/autoswitch/BrokerMetadata`` and
``TempBrokerMetadata``; key ``storePathBrokerIdentity``).

Both are one line of text with no line end (``MetadataFile.encodeToStr``, written by
``MixAll.string2File``)::

    brokerIdentity        <clusterName>#<brokerName>#<brokerId>
                          DefaultCluster#broker-a#1
    brokerIdentity-temp   <clusterName>#<brokerName>#<brokerId>#<registerCheckCode>
                          DefaultCluster#broker-a#1#127.0.0.1:30911;1700000000000

Registration (RocketMQ 5.1.1+, ``ReplicasManager``): get the next id from the
controller, write the temp file, apply the id at the controller, then ``promote_temp`` writes
``brokerIdentity`` and deletes the temp file. A crash at any step is repeated from the files
left: a temp file means "apply this id again with this check code" (the controller accepts the
same code twice). Files are written atomically and fsynced (``metadata_file``); Java deletes
and rewrites in place.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from rocketq.errors import CorruptionError
from rocketq.store.ha.metadata_file import read_file, remove_durably, write_atomically

BROKER_IDENTITY_FILE_NAME = "brokerIdentity"
#: ReplicasManager: the temp file is ``getStorePathBrokerIdentity() + "-temp"``.
TEMP_SUFFIX = "-temp"
SEPARATOR = "#"


def broker_identity_path(store_path_root_dir: str) -> str:
    """MessageStoreConfig.getStorePathBrokerIdentity's default."""
    return os.path.join(store_path_root_dir, BROKER_IDENTITY_FILE_NAME)


def temp_path(identity_path: str) -> str:
    return identity_path + TEMP_SUFFIX


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    """BrokerMetadata.java: who this broker is, once the controller gave it an id."""

    cluster_name: str
    broker_name: str
    broker_id: int

    def encode(self) -> bytes:
        return _join(self.cluster_name, self.broker_name, str(self.broker_id))

    @classmethod
    def decode(cls, data: bytes, path: str = BROKER_IDENTITY_FILE_NAME) -> BrokerMetadata:
        cluster, name, broker_id = _split(data, 3, path)
        return cls(cluster, name, _broker_id(broker_id, path))


@dataclass(frozen=True, slots=True)
class TempBrokerMetadata:
    """TempBrokerMetadata.java: an id being applied, with the check code ``addr;millis``."""

    cluster_name: str
    broker_name: str
    broker_id: int
    register_check_code: str

    def encode(self) -> bytes:
        return _join(
            self.cluster_name, self.broker_name, str(self.broker_id), self.register_check_code
        )

    @classmethod
    def decode(cls, data: bytes, path: str = BROKER_IDENTITY_FILE_NAME) -> TempBrokerMetadata:
        cluster, name, broker_id, code = _split(data, 4, path)
        return cls(cluster, name, _broker_id(broker_id, path), code)


def _join(*fields: str) -> bytes:
    for text in fields:
        if not text or SEPARATOR in text:
            raise ValueError(f"a broker identity field must be non-empty without '#': {text!r}")
    return SEPARATOR.join(fields).encode()


def _split(data: bytes, count: int, path: str) -> list[str]:
    try:
        fields = data.decode().split(SEPARATOR)
    except UnicodeDecodeError:
        raise CorruptionError(path, 0, "the broker identity is not UTF-8") from None
    if len(fields) != count or not all(fields):
        raise CorruptionError(path, 0, f"expected {count} '#'-separated fields: {data!r}")
    return fields


def _broker_id(text: str, path: str) -> int:
    if not text.isdigit():
        raise CorruptionError(path, 0, f"the broker id is not a number: {text!r}")
    return int(text)


def read_broker_metadata(identity_path: str) -> BrokerMetadata | None:
    data = read_file(identity_path)
    return None if data is None else BrokerMetadata.decode(data, identity_path)


def write_broker_metadata(identity_path: str, metadata: BrokerMetadata) -> None:
    write_atomically(identity_path, metadata.encode())


def read_temp_broker_metadata(identity_path: str) -> TempBrokerMetadata | None:
    path = temp_path(identity_path)
    data = read_file(path)
    return None if data is None else TempBrokerMetadata.decode(data, path)


def write_temp_broker_metadata(identity_path: str, metadata: TempBrokerMetadata) -> None:
    write_atomically(temp_path(identity_path), metadata.encode())


def promote_temp(identity_path: str, temp: TempBrokerMetadata) -> BrokerMetadata:
    """After a successful apply: write ``brokerIdentity``, then delete the temp file."""
    metadata = BrokerMetadata(temp.cluster_name, temp.broker_name, temp.broker_id)
    write_broker_metadata(identity_path, metadata)
    remove_durably(temp_path(identity_path))
    return metadata
