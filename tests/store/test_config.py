from __future__ import annotations

import dataclasses
import logging

import pytest

from rocketq.errors import ConfigError
from rocketq.store import FlushDiskType, StoreConfig
from rocketq.store.config import parse_properties


def test_store_config_has_rocketmq_defaults() -> None:
    c = StoreConfig()
    assert c.mapped_file_size_commit_log == 1024**3
    assert c.mapped_file_size_consume_queue == 6_000_000
    assert c.max_message_size == 4 * 1024 * 1024
    assert c.flush_disk_type is FlushDiskType.ASYNC_FLUSH
    assert c.delete_when == "04"
    assert c.delay_level_table_ms()[18] == 2 * 3_600_000
    assert len(c.delay_level_table_ms()) == 18


def test_store_config_rejects_bad_values_and_rounds_cq_size() -> None:
    with pytest.raises(ConfigError):
        StoreConfig(mapped_file_size_commit_log=0)
    with pytest.raises(ConfigError):
        StoreConfig(message_delay_level="1s 5x")
    assert StoreConfig(mapped_file_size_consume_queue=101).mapped_file_size_consume_queue == 120
    assert StoreConfig(disk_max_used_space_ratio=99).disk_max_used_space_ratio == 95
    c = dataclasses.replace(StoreConfig(), mapped_file_size_commit_log=65536)
    assert c.mapped_file_size_commit_log == 65536


def test_parse_properties_reads_java_properties_syntax() -> None:
    text = "# c\n! c\na=1\nb : 2\nc 3\nd=x\\\n   y\ne=\\u0041\\tz\n  f=  sp  \n"
    assert parse_properties(text) == {
        "a": "1",
        "b": "2",
        "c": "3",
        "d": "xy",
        "e": "A\tz",
        "f": "sp  ",
    }


def test_from_broker_conf_maps_camel_case_keys_and_warns_unknown(
    tmp_path: object, caplog: pytest.LogCaptureFixture
) -> None:
    conf = (
        "brokerClusterName=DefaultCluster\nbrokerName=broker-a\n"
        "flushDiskType=SYNC_FLUSH\nmapedFileSizeCommitLog=65536\ndeleteWhen=04\n"
        "fileReservedTime=48\ncheckCRCOnRecover=false\n"
    )
    with caplog.at_level(logging.WARNING):
        c = StoreConfig.from_broker_conf(conf)
    assert c.flush_disk_type is FlushDiskType.SYNC_FLUSH
    assert c.mapped_file_size_commit_log == 65536
    assert c.file_reserved_time_h == 48
    assert c.check_crc_on_recover is False
    assert "brokerName" in caplog.text
    with pytest.raises(ConfigError):
        StoreConfig.from_broker_conf("fileReservedTime=abc\n")


def test_the_timer_keys_load_from_a_stock_broker_conf_and_the_precision_snaps() -> None:
    config, unknown = StoreConfig.from_properties(
        {
            "timerWheelEnable": "false",
            "timerPrecisionMs": "250",
            "timerMaxDelaySec": "600",
            "timerRollWindowSlot": "3600",
            "mappedFileSizeTimerLog": "1048576",
            "timerFlushIntervalMs": "200",
            "timerCongestNumEachSlot": "5000",
        }
    )
    assert unknown == {}
    assert config.timer_wheel_enable is False
    assert config.timer_precision_ms == 200  # MessageStoreConfig.setTimerPrecisionMs
    assert (config.timer_max_delay_sec, config.timer_roll_window_slot) == (600, 3600)
    assert config.mapped_file_size_timer_log == 1048576
    assert (config.timer_flush_interval_ms, config.timer_congest_num_each_slot) == (200, 5000)
    assert StoreConfig(timer_precision_ms=50).timer_precision_ms == 100
    assert StoreConfig(timer_precision_ms=5000).timer_precision_ms == 1000
    assert StoreConfig().timer_wheel_enable is True  # on by default, as in RocketMQ 5
