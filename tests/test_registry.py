"""The one registry shape: duplicates refused, unknown names list the known ones, entry points."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint

import pytest

from pytest_enconda import registry as registry_mod
from pytest_enconda.registry import Registry


@dataclass(frozen=True)
class Thing:
    name: str
    size: int = 0


# A module attribute, so a real ``EntryPoint`` can load it by "module:attr".
PLUGIN_THING = Thing("plugged", size=9)


def _fake_entry_points(monkeypatch: pytest.MonkeyPatch, *points: EntryPoint) -> list[str]:
    asked: list[str] = []

    def entry_points(*, group: str) -> list[EntryPoint]:
        asked.append(group)
        return [point for point in points if point.group == group]

    monkeypatch.setattr(registry_mod, "entry_points", entry_points)
    return asked


def test_register_refuses_a_duplicate_unless_replacing() -> None:
    things: Registry[Thing] = Registry("thing")
    things.register(Thing("a", 1))
    with pytest.raises(ValueError, match="thing 'a' is already registered"):
        things.register(Thing("a", 2))
    assert things.get("a").size == 1
    things.register(Thing("a", 3), replace=True)
    assert things.get("a").size == 3


def test_unknown_name_lists_what_is_available() -> None:
    things: Registry[Thing] = Registry("thing")
    things.register(Thing("beta"))
    things.register(Thing("alpha"))
    with pytest.raises(KeyError) as raised:
        things.get("gamma")
    assert raised.value.args[0] == "unknown thing 'gamma'; available: alpha, beta"
    # Registration order is kept: it is the order items are collected in.
    assert things.names() == ["beta", "alpha"]


def test_entry_points_load_once_on_first_read_and_builtins_win(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    group = "pytest_enconda.things"
    plugged = EntryPoint("plugged", f"{__name__}:PLUGIN_THING", group)
    shadowing = EntryPoint("builtin", f"{__name__}:PLUGIN_THING", group)
    other_group = EntryPoint("elsewhere", f"{__name__}:PLUGIN_THING", "pytest_enconda.other")
    asked = _fake_entry_points(monkeypatch, plugged, shadowing, other_group)
    things: Registry[Thing] = Registry("thing", group)
    things.register(Thing("builtin", 1))
    assert asked == []  # registering reads nothing
    assert things.names() == ["builtin", "plugged"]
    assert things.get("plugged") is PLUGIN_THING
    assert things.get("builtin").size == 1
    assert asked == [group]


def test_entry_points_can_stay_unloaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Agents list third-party names without importing them: the entry is the entry point."""
    point = EntryPoint("lazy", "no_such_module_anywhere:Thing", "pytest_enconda.lazy")
    _fake_entry_points(monkeypatch, point)
    lazy: Registry[EntryPoint] = Registry(
        "lazy thing", "pytest_enconda.lazy", from_entry_point=lambda entry_point: entry_point
    )
    assert lazy.names() == ["lazy"]
    assert lazy.get("lazy") is point
    with pytest.raises(ModuleNotFoundError):
        lazy.get("lazy").load()


def test_an_entry_needs_a_name() -> None:
    with pytest.raises(ValueError, match="needs a name"):
        Registry[object]("thing").register(object())
