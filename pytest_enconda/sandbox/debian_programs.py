"""Which Debian package installs a program or a shared library: the archive's own Contents index,
read once per release.

A test that calls a program the image lacks (protoletariat's tests run ``protoc``; Nix gave it to
their CI) fails with ``No such file or directory: 'protoc'``. The name of the program is not the
name of its package (``protobuf-compiler``); ``apt-file`` answers from the release's
``Contents-*.gz``, and so does this module, on the host, without installing anything in a box.
The index of programs (``usr/bin``, ``bin``, ``usr/sbin``, ``sbin``) is cached as JSON in the
sandbox's cache folder: one download per release and architecture.
"""

from __future__ import annotations

import gzip
import io
import json
import platform
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from .. import textio
from ..artifacts import atomic_write_text

__all__ = ["ContentsError", "program_index", "program_packages"]

# bookworm's Contents-all.gz is 34 MB, Contents-amd64.gz 12 MB; far larger is not an index.
MAX_CONTENTS_BYTES = 128 * 1024 * 1024
MAX_INDEX_BYTES = 32 * 1024 * 1024
_PROGRAM_DIRS = ("usr/bin/", "bin/", "usr/sbin/", "sbin/")
# Shared libraries too (datamol's RDKit drawing: "libXrender.so.1: cannot open shared object
# file"), in the multiarch folders of every architecture the index may be read for.
_LIBRARY_DIRS = tuple(
    f"{root}/{triplet}/"
    for root in ("usr/lib", "lib")
    for triplet in ("x86_64-linux-gnu", "aarch64-linux-gnu")
)
_LIBRARY = re.compile(r"lib[A-Za-z0-9_+-]+(?:[.-][A-Za-z0-9_+]+)*\.so(?:\.[0-9]+)*")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
_ARCHITECTURES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


class ContentsError(RuntimeError):
    pass


def parse_contents(lines: Iterable[str]) -> dict[str, str]:
    """``{program: package}`` from a Contents file's lines (``usr/bin/protoc   devel/protobuf-
    compiler``); a program in several packages keeps the first one listed."""
    index: dict[str, str] = {}
    for line in lines:
        path, _, locations = line.rstrip().rpartition(" ")
        path = path.strip()
        if not locations:
            continue
        name = path.rsplit("/", 1)[-1]
        if not (
            path.startswith(_PROGRAM_DIRS)
            or (path.startswith(_LIBRARY_DIRS) and _LIBRARY.fullmatch(name))
        ):
            continue
        package = locations.split(",", 1)[0].rsplit("/", 1)[-1]
        if _NAME.fullmatch(name) and _NAME.fullmatch(package):
            index.setdefault(name, package)
    return index


def _program_lines(url: str) -> Iterator[str]:
    """The lines of the Contents file at ``url`` that name a program (hundreds of MB unpacked:
    streamed, the rest skipped unread as text)."""
    prefixes = tuple(d.encode() for d in _PROGRAM_DIRS + _LIBRARY_DIRS)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(_download(url))) as unpacked:
            for raw in unpacked:
                if raw.startswith(prefixes):
                    yield raw.decode("utf-8", "replace")
    except (OSError, EOFError) as exc:
        raise ContentsError(f"{url}: not gzip: {exc}") from None


def _download(url: str) -> bytes:
    try:
        return textio.read_url(url, MAX_CONTENTS_BYTES, timeout=300)
    except (OSError, ValueError) as exc:
        raise ContentsError(f"{url}: {exc}") from None


def program_index(release: str, mirror: str, cache_dir: Path) -> dict[str, str]:
    """The release's ``{program: package}``, from the cache or the mirror (``ContentsError`` when
    neither has it)."""
    arch = _ARCHITECTURES.get(platform.machine().lower(), "amd64")
    cached = Path(cache_dir) / f"debian-programs-{release}-{arch}-v2.json"
    if cached.is_file():
        try:
            data = json.loads(textio.read_text(cached, MAX_INDEX_BYTES))
            if isinstance(data, dict) and all(isinstance(v, str) for v in data.values()):
                return data
        except (OSError, ValueError):
            pass  # a damaged cache is fetched again
    index: dict[str, str] = {}
    # The architecture's own packages first: a program both list is usually the binary one.
    for part in (arch, "all"):
        url = f"{mirror.rstrip('/')}/dists/{release}/main/Contents-{part}.gz"
        for name, package in parse_contents(_program_lines(url)).items():
            index.setdefault(name, package)
    cached.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(cached, json.dumps(index, sort_keys=True))
    return index


def program_packages(
    programs: list[str], release: str, mirror: str, cache_dir: Path
) -> dict[str, str]:
    """``{program: package}`` for each of ``programs`` the release packages."""
    index = program_index(release, mirror, cache_dir)
    return {name: index[name] for name in programs if name in index}
