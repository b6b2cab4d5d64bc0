"""Reading configuration files by their suffix."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

SUFFIXES = {".json": "json", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}


class ConfigError(Exception):
    """A file cannot be read as a configuration mapping."""


class MissingExtraError(ConfigError):
    """A format needs an optional dependency that is not installed."""


def _load_yaml(text: str) -> Any:
    # PyYAML is an optional extra: importing it lazily keeps JSON/TOML usable without it.
    try:
        import yaml
    except ModuleNotFoundError:
        raise MissingExtraError(
            "YAML support needs PyYAML: pip install 'confmerge[yaml]'"
        ) from None
    return yaml.safe_load(text)


def loads(text: str, fmt: str) -> dict[str, Any]:
    """Parse ``text`` in format ``fmt`` ("json", "toml" or "yaml") into a mapping."""
    if fmt == "json":
        data = json.loads(text)
    elif fmt == "toml":
        data = tomllib.loads(text)
    elif fmt == "yaml":
        data = _load_yaml(text)
    else:
        raise ConfigError(f"unknown format {fmt!r}; expected one of json, toml, yaml")
    # An empty YAML document is None; treating it as {} lets empty overrides merge cleanly.
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping at the top level, got {type(data).__name__}")
    return data


def load(path: str | Path) -> dict[str, Any]:
    """Read a configuration file; the format comes from its suffix."""
    path = Path(path)
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(f"{path}: unsupported suffix {path.suffix!r}")
    try:
        return loads(path.read_text(encoding="utf-8"), fmt)
    except MissingExtraError:
        raise
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
