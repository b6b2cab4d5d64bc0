"""Load JSON, TOML and YAML configuration files and deep-merge them."""

from .loading import ConfigError, MissingExtraError, load, loads
from .merging import merge

__all__ = ["ConfigError", "MissingExtraError", "load", "loads", "merge"]
__version__ = "1.2.0"
