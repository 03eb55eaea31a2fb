from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketq.broker.config_manager import ConfigManager
from rocketq.remoting.protocol import fastjson


class _Box(ConfigManager):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.value: dict[str, Any] = {}

    def encode(self) -> dict[str, Any]:
        return self.value

    def decode(self, obj: dict[str, Any]) -> None:
        self.value = obj


def test_writer_uses_tabs_sorted_bean_keys_and_bare_integer_keys() -> None:
    text = fastjson.dumps_pretty(
        {"offsetTable": {"T@g": {0: 250, 1: 249}}, "b": None, "a": [1, "x"]}
    )
    assert text == '{\n\t"a":[1,"x"],\n\t"offsetTable":{\n\t\t"T@g":{0:250,1:249\n\t\t}\n\t}\n}'


def test_reader_accepts_bare_and_quoted_integer_keys() -> None:
    assert fastjson.loads('{"t":{0:250,1:249\n}}') == {"t": {"0": 250, "1": 249}}
    assert fastjson.loads('{"t":{"0":250}}') == {"t": {"0": 250}}


def test_writer_output_reads_back() -> None:
    value = {"dataVersion": {"counter": 3, "timestamp": 17}, "t": {"x": {5: 7}}, "e": {}}
    assert fastjson.loads(fastjson.dumps_pretty(value)) == {
        "dataVersion": {"counter": 3, "timestamp": 17},
        "e": {},
        "t": {"x": {"5": 7}},
    }


def test_persist_keeps_the_previous_content_in_bak(tmp_path: Path) -> None:
    box = _Box(tmp_path / "config" / "x.json")
    box.value = {"v": 1}
    box.persist()
    box.value = {"v": 2}
    box.persist()
    assert fastjson.loads((tmp_path / "config" / "x.json").read_text()) == {"v": 2}
    assert fastjson.loads((tmp_path / "config" / "x.json.bak").read_text()) == {"v": 1}
    assert not (tmp_path / "config" / "x.json.tmp").exists()


def test_load_falls_back_to_bak_when_the_file_is_torn_or_empty(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    (tmp_path / "x.json.bak").write_text('{"v":1}')
    for broken in ('{"v":', ""):
        path.write_text(broken)
        box = _Box(path)
        assert box.load()
        assert box.value == {"v": 1}


def test_load_reports_false_when_nothing_is_there(tmp_path: Path) -> None:
    assert not _Box(tmp_path / "none.json").load()
