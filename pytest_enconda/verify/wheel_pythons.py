"""Which Pythons a pinned requirement has builds for: PyPI's own list of a project's files.

A repository pinned years back can pin a release built only for the Pythons of its day
(llm-random's ``tensorflow==2.8.0``: wheels for CPython 3.7 to 3.10). On the default base pip
answers ``No matching distribution found for tensorflow==2.8.0`` and lists the later releases it
can install; nothing in that text says an older interpreter would get it. PyPI's JSON API lists
every file of every release with its upload time and ``Requires-Python``: a release the
requirement accepts, uploaded before the attempt's cutoff (the as-of day), with a wheel tagged for
an interpreter (or an sdist that interpreter's ``Requires-Python`` admits) says which Pythons can
install it, so ``verify`` can retry on the newest older base among them.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, ValidationError

from .. import textio

__all__ = [
    "PyPIError",
    "ReleaseFile",
    "Unbuilt",
    "fetch_release_files",
    "installable_on",
    "unbuilt_requirement",
    "unmatched_requirements",
]

# tensorflow's document (every file of ~150 releases) is about 6 MB.
MAX_JSON_BYTES = 64 * 1024 * 1024
PYPI_JSON = "https://pypi.org/pypi/{name}/json"
# A dependency's requirement ends with what asked for it: "... for tfx-bsl<1.16.0,>=1.15.1 (from
# tensorflow-model-analysis)".
_UNMATCHED = re.compile(
    r"^ERROR: No matching distribution found for (\S+)(?: \(from [^()\n]*\))?\s*$", re.MULTILINE
)
# The log's tail holds pip's error; a huge log is not read whole.
_TAIL = 2_000_000
# The platforms a Linux x86_64 or aarch64 box installs.
_PLATFORM = re.compile(r"any|linux_(?:x86_64|aarch64)|manylinux\w*_(?:x86_64|aarch64)")


class PyPIError(RuntimeError):
    pass


class ReleaseFile(BaseModel):
    """One file of a release as PyPI's JSON API lists it (the fields read here)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    filename: str
    packagetype: str
    requires_python: str | None = None
    upload_time_iso_8601: str = ""
    yanked: bool = False


class _Document(BaseModel):
    model_config = ConfigDict(extra="ignore")

    releases: dict[str, list[ReleaseFile]]


def unmatched_requirements(text: str) -> list[str]:
    """The requirements pip found no distribution for, in the order ``text`` names them."""
    return list(dict.fromkeys(match.group(1) for match in _UNMATCHED.finditer(text)))


def _cpython(python: str) -> tuple[int, int]:
    version = Version(python)
    return version.major, version.minor


def _tag_fits(interpreter: str, abi: str, platform: str, python: tuple[int, int]) -> bool:
    """Whether a wheel tag installs on CPython ``python`` on Linux."""
    if not _PLATFORM.fullmatch(platform):
        return False
    major, minor = python
    if interpreter in (f"py{major}", f"py{major}{minor}"):
        return True
    found = re.fullmatch(r"cp(\d)(\d+)", interpreter)
    if found is None or int(found.group(1)) != major:
        return False
    built_for = int(found.group(2))
    # An abi3 wheel built for 3.x runs on every later 3.y; any other is for its release alone.
    return built_for <= minor if abi == "abi3" else built_for == minor


def _file_fits(file: ReleaseFile, python: str) -> bool:
    if file.requires_python:
        try:
            if not SpecifierSet(file.requires_python).contains(Version(python)):
                return False
        except (InvalidSpecifier, InvalidVersion):
            pass  # an unreadable range is pip's to judge; the tags still are ours
    if file.packagetype == "sdist":
        return True
    if file.packagetype != "bdist_wheel":
        return False
    try:
        _, _, _, tags = parse_wheel_filename(file.filename)
    except InvalidWheelFilename:
        return False
    wanted = _cpython(python)
    return any(_tag_fits(tag.interpreter, tag.abi, tag.platform, wanted) for tag in tags)


def _uploaded_before(file: ReleaseFile, cutoff: datetime | None) -> bool:
    if cutoff is None:
        return True
    try:
        uploaded = datetime.fromisoformat(file.upload_time_iso_8601.replace("Z", "+00:00"))
    except ValueError:
        return False
    if uploaded.tzinfo is None:
        uploaded = uploaded.replace(tzinfo=UTC)
    return uploaded < cutoff


def installable_on(
    requirement: Requirement,
    releases: Mapping[str, list[ReleaseFile]],
    python: str,
    before: str = "",
) -> bool:
    """Whether pip on CPython ``python`` (Linux) finds a release ``requirement`` accepts among
    ``releases``, counting only files uploaded before ``before`` (ISO 8601; "" for all)."""
    cutoff = _cutoff(before)
    for text, files in releases.items():
        try:
            version = Version(text)
        except InvalidVersion:
            continue
        if not requirement.specifier.contains(version, prereleases=True):
            continue
        if version.is_prerelease and not _names_prerelease(requirement.specifier):
            continue
        if any(
            not file.yanked and _uploaded_before(file, cutoff) and _file_fits(file, python)
            for file in files
        ):
            return True
    return False


def _names_prerelease(specifier: SpecifierSet) -> bool:
    return any(Version(spec.version).is_prerelease for spec in specifier if "*" not in spec.version)


def _cutoff(before: str) -> datetime | None:
    if not before:
        return None
    moment = datetime.fromisoformat(before.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def fetch_release_files(name: str, *, timeout: float = 60) -> dict[str, list[ReleaseFile]]:
    """``{version: files}`` of PyPI project ``name`` (``PyPIError`` when PyPI cannot say)."""
    url = PYPI_JSON.format(name=urllib.parse.quote(str(canonicalize_name(name))))
    try:
        data = textio.read_url(url, MAX_JSON_BYTES, timeout=timeout)
    except (OSError, ValueError) as exc:
        raise PyPIError(f"{url}: {exc}") from None
    try:
        return _Document.model_validate(textio.parse_json(data)).releases
    except (ValueError, ValidationError) as exc:
        raise PyPIError(f"{url}: not PyPI's project JSON: {str(exc)[:300]}") from None


@dataclass(frozen=True)
class Unbuilt:
    """A requirement pip found nothing for on this Python that an older Python can install."""

    requirement: str
    python: str
    before: str
    allows: Callable[[str], bool]

    def describe(self) -> str:
        day = f" uploaded before {self.before}" if self.before else ""
        return (
            f"pip found no distribution for {self.requirement!r}: PyPI lists none{day} "
            f"for Python {self.python}"
        )


def unbuilt_requirement(
    logs: list[Path],
    python: str,
    before: str = "",
    fetch: Callable[[str], Mapping[str, list[ReleaseFile]]] = fetch_release_files,
) -> Unbuilt | None:
    """The first requirement the logs say pip found nothing for whose accepted releases PyPI
    confirms have no build for ``python``; its ``allows`` says which other Pythons have one. None
    when PyPI cannot say, the requirement is unreadable, or PyPI does list a build (then the cause
    was not the interpreter)."""
    text = textio.tails_text(logs, _TAIL)
    for written in unmatched_requirements(text):
        try:
            requirement = Requirement(written)
        except InvalidRequirement:
            continue
        try:
            releases = fetch(requirement.name)
        except PyPIError:
            continue
        if installable_on(requirement, releases, python, before):
            continue  # not this interpreter's doing (an index or platform problem)

        def allows(older: str, requirement: Requirement = requirement, releases=releases) -> bool:
            return installable_on(requirement, releases, older, before)

        return Unbuilt(written, python, before, allows)
    return None
