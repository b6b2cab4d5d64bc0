"""Build objects from config mappings that name their class: ``{"_target_": "pkg.mod.Class", ...}``.

The same convention as Hydra's ``instantiate``, without Hydra.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


def locate(path: str) -> Any:
    """The object at a dotted path: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            target: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name is None or not module_name.startswith(error.name) or cut == 1:
                raise
            continue
        for attribute in parts[cut:]:
            target = getattr(target, attribute)
        return target
    raise ImportError(f"cannot locate {path!r}")


def instantiate(spec: Mapping[str, Any]) -> Any:
    if "_target_" not in spec:
        raise KeyError("a config to instantiate needs '_target_'")
    arguments = {key: value for key, value in spec.items() if key != "_target_"}
    return locate(str(spec["_target_"]))(**arguments)
