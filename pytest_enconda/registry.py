"""One shape for every extension point: a name -> entry table, built-ins plus entry points.

Stages, aspects, task kinds, agents, judges and backends each keep one ``Registry``. Built-ins
register when their module is imported; a third party adds entries through the registry's
entry-point group (``[project.entry-points."pytest_enconda.stages"]``), or by calling
``register`` from a pytest plugin or ``conftest.py``.

Standard library only: the xdist scheduler and the plugin's hooks read registries in every run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def load_entry_point(entry_point: EntryPoint) -> Any:
    return entry_point.load()


class Registry(Generic[T]):
    """Entries by name, in registration order (the order items are collected in).

    ``group`` names the entry-point group read the first time the registry is read; each entry
    point becomes ``from_entry_point(ep)`` (by default the object it names). Built-ins win over
    an entry point of the same name, and the first of two entry points with one name wins: a
    plugin cannot silently replace what the benchmark grades.
    """

    def __init__(
        self,
        kind: str,
        group: str | None = None,
        *,
        from_entry_point: Callable[[EntryPoint], T] = load_entry_point,
    ) -> None:
        self.kind = kind
        self.group = group
        self._from_entry_point = from_entry_point
        self._entries: dict[str, T] = {}
        self._loaded = group is None

    def register(self, entry: T, *, name: str | None = None, replace: bool = False) -> T:
        """Add ``entry`` under ``name`` (default: ``entry.name``); returns it, so it decorates."""
        key = name if name is not None else getattr(entry, "name", None)
        if not isinstance(key, str) or not key:
            raise ValueError(f"a {self.kind} needs a name to be registered: {entry!r}")
        if key in self._entries and not replace:
            raise ValueError(
                f"{self.kind} {key!r} is already registered; pass replace=True to replace it"
            )
        self._entries[key] = entry
        return entry

    def unregister(self, name: str) -> None:
        self._entries.pop(name, None)

    def get(self, name: str) -> T:
        self._load_entry_points()
        try:
            return self._entries[name]
        except KeyError:
            available = ", ".join(sorted(self._entries)) or "(none)"
            raise KeyError(f"unknown {self.kind} {name!r}; available: {available}") from None

    def names(self) -> list[str]:
        self._load_entry_points()
        return list(self._entries)

    def read_spec(self, spec: str, option: str, also: str = "") -> tuple[T, str | None]:
        """The entry ``NAME[:ARG]`` names and its argument, read by the entry's ``argument`` rule
        (``none``: refused, ``required``: ``usage`` is the form asked for, else optional);
        ``ValueError`` names the option, the spec and the problem. ``also``: what the option
        takes besides the entries (said after the list)."""
        name, sep, arg = spec.strip().partition(":")
        if name not in self:
            raise ValueError(
                f"{option} {spec!r}: unknown {self.kind} {name!r}; available: "
                f"{', '.join(sorted(self.names()))}" + (f" ({also})" if also else "")
            )
        entry = self.get(name)
        rule = getattr(entry, "argument", "optional")
        if rule == "none" and sep:
            raise ValueError(f"{option} {spec!r}: the {name} {self.kind} takes no argument")
        if rule == "required" and not arg:
            usage = getattr(entry, "usage", "") or f"{name}:<argument>"
            raise ValueError(f"{option} {spec!r}: expected {usage}")
        return entry, arg or None

    def values(self) -> list[T]:
        self._load_entry_points()
        return list(self._entries.values())

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def _load_entry_points(self) -> None:
        if self._loaded:
            return
        # Set first: an entry point whose module reads this registry must not recurse.
        self._loaded = True
        assert self.group is not None
        for entry_point in entry_points(group=self.group):
            if entry_point.name not in self._entries:
                self._entries[entry_point.name] = self._from_entry_point(entry_point)
