"""Show and bump the version in a project's pyproject.toml without losing its formatting."""

from .versions import PARTS, VersionError, bump, read_version, write_version

__all__ = ["PARTS", "VersionError", "bump", "read_version", "write_version"]
__version__ = "2.0.1"
