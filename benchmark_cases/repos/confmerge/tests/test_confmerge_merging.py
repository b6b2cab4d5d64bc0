from confmerge import merge


def test_nested_mappings_merge_and_later_values_win() -> None:
    base = {"server": {"host": "localhost", "port": 80}, "debug": False}
    override = {"server": {"port": 8080}, "debug": True}
    assert merge(base, override) == {
        "server": {"host": "localhost", "port": 8080},
        "debug": True,
    }


def test_lists_are_replaced_not_appended() -> None:
    assert merge({"paths": ["a", "b"]}, {"paths": ["c"]}) == {"paths": ["c"]}


def test_inputs_are_not_modified() -> None:
    base = {"server": {"port": 80}}
    merged = merge(base, {"server": {"port": 81}})
    merged["server"]["host"] = "x"
    assert base == {"server": {"port": 80}}
