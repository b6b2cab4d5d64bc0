import pytest
from labpy.config import load_config


def test_load_mapping():
    assert load_config("a: 1\nb: [x, y]\n") == {"a": 1, "b": ["x", "y"]}


def test_rejects_list():
    with pytest.raises(ValueError):
        load_config("- 1\n- 2\n")
