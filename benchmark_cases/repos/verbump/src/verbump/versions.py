"""Reading, bumping and writing ``[project].version``."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.version import InvalidVersion, Version

PARTS = ("major", "minor", "patch", "pre")


class VersionError(Exception):
    """The version cannot be read, parsed or bumped."""


def _parse(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise VersionError(f"not a PEP 440 version: {text!r}") from None


def bump(version: str, part: str) -> str:
    """The next version after ``version`` when ``part`` changes.

    Bumping ``patch`` of a pre-release releases it (``1.2.3rc1`` -> ``1.2.3``), as
    the pre-release was already a candidate for that patch.
    """
    current = _parse(version)
    major, minor, patch = (*current.release, 0, 0)[:3]
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    if part == "patch":
        if current.pre is not None or current.dev is not None:
            return f"{major}.{minor}.{patch}"
        return f"{major}.{minor}.{patch + 1}"
    if part == "pre":
        if current.pre is None:
            raise VersionError(f"{version} is not a pre-release; bump major, minor or patch")
        label, number = current.pre
        return f"{major}.{minor}.{patch}{label}{number + 1}"
    raise VersionError(f"unknown part {part!r}; expected one of {', '.join(PARTS)}")


def read_version(path: str | Path) -> str:
    path = Path(path)
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    project = data.get("project", {})
    if "version" in project.get("dynamic", []):
        raise VersionError(f"{path}: the version is dynamic; verbump edits static versions only")
    try:
        return str(project["version"])
    except KeyError:
        raise VersionError(f"{path}: no [project].version") from None


# Only the version key of the [project] table is touched: other tables may have their own
# "version" keys (tool settings), and a full TOML rewrite would drop the user's comments.
_PROJECT_TABLE = re.compile(r"^\[project\]\s*$(?P<body>.*?)(?=^\[|\Z)", re.MULTILINE | re.DOTALL)
_VERSION_LINE = re.compile(r'^(?P<head>version\s*=\s*)(?P<q>["\'])(?P<value>[^"\']*)(?P=q)', re.M)


def write_version(path: str | Path, new_version: str) -> None:
    path = Path(path)
    _parse(new_version)
    text = path.read_text(encoding="utf-8")
    table = _PROJECT_TABLE.search(text)
    if table is None:
        raise VersionError(f"{path}: no [project] table")
    body = table.group("body")
    replaced, count = _VERSION_LINE.subn(
        lambda m: f"{m['head']}{m['q']}{new_version}{m['q']}", body, count=1
    )
    if count == 0:
        raise VersionError(f"{path}: no version line in [project]")
    path.write_text(text[: table.start("body")] + replaced + text[table.end("body") :], "utf-8")
