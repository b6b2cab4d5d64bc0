"""Deep merge of configuration mappings."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def merge(*configs: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``configs`` left to right: later values win.

    Nested mappings are merged key by key; any other value (lists included) replaces the
    earlier one, because appending lists silently would make overrides impossible to undo.
    The inputs are never modified.
    """
    result: dict[str, Any] = {}
    for config in configs:
        _merge_into(result, config)
    return result


def _merge_into(target: dict[str, Any], source: Mapping[str, Any]) -> None:
    for key, value in source.items():
        current = target.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            _merge_into(current, value)
        elif isinstance(value, Mapping):
            target[key] = {}
            _merge_into(target[key], value)
        else:
            target[key] = copy.deepcopy(value)
