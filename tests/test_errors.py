from rocketq import errors


def test_for_code_maps_response_codes_to_their_classes() -> None:
    err = errors.for_code(17, "no route")
    assert isinstance(err, errors.TopicNotExistError)
    assert err.response_code == 17
    assert not err.retriable
    assert errors.for_code(2).retriable


def test_for_code_keeps_an_unknown_code() -> None:
    err = errors.for_code(9999, "odd")
    assert type(err) is errors.BrokerResponseError
    assert err.response_code == 9999


def test_corruption_error_names_path_and_offset() -> None:
    err = errors.CorruptionError("/s/commitlog/0", 210, "bad magic")
    assert isinstance(err, OSError)
    assert "210" in str(err)
    assert "bad magic" in str(err)
