"""MQVersion ordinals and names both ways (RocketMQ's MQVersion.Version enum)."""

from __future__ import annotations

import pytest

from rocketq.remoting.protocol.codes import version_desc, version_ordinal


@pytest.mark.parametrize(
    ("ordinal", "name"),
    [
        (63, "V3_1_8"), (213, "V4_0_0"), (333, "V4_6_0"), (393, "V4_9_0"), (401, "V4_9_4"),
        (409, "V4_9_8"), (412, "V5_0_0_SNAPSHOT"), (413, "V5_0_0"), (437, "V5_1_2"),
        (479, "V5_3_3"), (50, "50"),
    ],
)  # fmt: skip
def test_version_desc_names_an_ordinal_as_mqversion_does(ordinal: int, name: str) -> None:
    assert version_desc(ordinal) == name


def test_a_5x_client_version_maps_to_its_ordinal_and_a_node_version_to_none() -> None:
    assert version_ordinal("5.1.2") == 437
    assert version_ordinal("4.9.8") == 409
    assert version_ordinal("1.0.8") == 0  # the Node client's own version
    assert version_ordinal("5.1.2-rc") == 0
