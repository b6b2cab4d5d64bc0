"""The tar archives a box's files travel in. Into a box: one file, owned by root. Out of a box:
the engine's archive read as it streams, a chunk held at a time, and written onto the host only
where it stays inside the destination: no device, no name outside the copy, no write through a
link, sizes bounded.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from .. import textio
from ..errors import HarnessError


def _tar_single(name: str, data: bytes, mode: int = 0o644) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        info.mode = mode
        info.mtime = int(time.time())
        tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    return buffer


def _root_owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


_READ_CHUNK = 1 << 20

_KINDS = {
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO",
}


class _ChunkReader(io.RawIOBase):
    """The engine's archive chunks as a file tarfile reads as a stream: one chunk held at a
    time, so memory is a chunk whatever the archive holds."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._chunk = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._chunk:
            try:
                self._chunk = memoryview(next(self._chunks))
            except StopIteration:
                return 0
        count = min(len(buffer), len(self._chunk))
        buffer[:count] = self._chunk[:count]
        self._chunk = self._chunk[count:]
        return count


def _too_large(name: str, size: int, limit: int) -> str:
    return f"{name} is {size} bytes, more than the {limit} allowed"


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The archive's members as they stream past; the stream's own list of every header read
    is emptied as it goes (a million small files would otherwise all be remembered)."""
    while (member := tar.next()) is not None:
        # TarFile keeps that list in ``members``, an attribute typeshed's stub leaves out.
        tar.members.clear()  # pyright: ignore[reportAttributeAccessIssue]
        yield member


def _refuse_kind(member: tarfile.TarInfo, label: str) -> None:
    kind = _KINDS.get(member.type)
    if kind is None and not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
        kind = f"an entry of type {member.type!r}"
    if kind is not None:
        raise HarnessError(
            f"copy out of {label}: {member.name} is {kind}; only regular files and folders"
            " are copied"
        )


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, target: Path) -> None:
    """A regular member's bytes to ``target``, a chunk at a time; never through a link."""
    source = tar.extractfile(member)
    if source is None:
        raise tarfile.ReadError(f"{member.name} has no data")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with source, os.fdopen(os.open(target, flags, 0o600), "wb") as out:
        shutil.copyfileobj(source, out, _READ_CHUNK)
    # The archive's permissions, less set-id bits and group/other write (tarfile's "data").
    os.chmod(target, (member.mode & 0o755) | 0o600)
    os.utime(target, (member.mtime, member.mtime))


def _extract_file(tar: tarfile.TarFile, dest: Path, *, limit: int, label: str) -> None:
    member = tar.next()
    if member is None:
        raise HarnessError(f"copy out of {label}: empty archive")
    # A link's extractfile() looks its target up in the archive and would hand back the
    # target's bytes: a link is refused here, as anything but a regular file is.
    if not member.isreg():
        raise HarnessError(f"copy out of {label}: not a regular file")
    if member.size > limit:
        raise HarnessError(f"copy out of {label}: {_too_large(member.name, member.size, limit)}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        _write(tar, member, dest)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise


def _link_inside(rel: str, target: str, links: Mapping[str, str]) -> bool:
    """Whether link ``rel -> target`` resolves within the copied tree. Walked name by name:
    never above the tree, and never through another link of it, whose own target a lexical
    walk would not see (``x -> .`` then ``l -> x/../..``)."""
    if not target or target.startswith("/"):
        return False
    here = rel.split("/")[:-1]
    parts = [part for part in target.split("/") if part not in ("", ".")]
    for index, part in enumerate(parts):
        if part == "..":
            if not here:
                return False
            here.pop()
            continue
        here.append(part)
        if index < len(parts) - 1 and "/".join(here) in links:
            return False
    return True


def _extract_tree(tar: tarfile.TarFile, dest: Path, *, limit: int, label: str) -> None:
    """A folder's archive into ``dest``: members checked before they are read, symbolic links
    made last and only where they stay within the copy."""
    dest.mkdir(parents=True, exist_ok=True)
    top: str | None = None
    total = 0
    named: set[str] = set()  # each member's name, within the copy
    above: set[str] = set()  # each folder some member lies in
    files: set[str] = set()
    links: dict[str, str] = {}

    def refuse(why: str) -> NoReturn:
        raise HarnessError(f"copy out of {label}: {why}")

    for member in _members(tar):
        name = member.name.rstrip("/")
        if top is None:
            top = name.split("/", 1)[0]
        if name != top and not name.startswith(f"{top}/"):
            refuse(f"{member.name} lies outside {top}")
        rel = name[len(top) :].lstrip("/")
        if not rel:
            continue
        parts = rel.split("/")
        if name.startswith("/") or ".." in parts or "" in parts or rel in named:
            refuse(f"{member.name} is not a name within it")
        folders = {"/".join(parts[:depth]) for depth in range(1, len(parts))}
        if any(folder in links or folder in files for folder in folders):
            refuse(f"{member.name} lies under a link or a file")
        if not member.isdir() and rel in above:
            refuse(f"{member.name} is a folder's name")
        named.add(rel)
        above |= folders
        _refuse_kind(member, label)
        if member.issym():
            if not _link_inside(rel, member.linkname, links):
                refuse(f"{member.name} links outside what is copied ({member.linkname})")
            links[rel] = member.linkname
            continue
        linked = ""
        size = member.size if member.isreg() else 0
        if member.islnk():  # a hard link: a second name for a file copied before it
            linked = member.linkname.rstrip("/")[len(top) :].lstrip("/")
            if linked not in files:
                refuse(f"{member.name} is a hard link to {member.linkname}, not to a file copied")
            size = (dest / linked).stat().st_size
        if size > limit:
            refuse(_too_large(member.name, size, limit))
        total += size
        if total > limit:
            refuse(f"more than the {limit} bytes allowed in all (at {member.name})")
        target = dest.joinpath(*parts)
        # A link already in dest (a reused folder) must not carry a write out of it.
        if textio.link_within(dest, target) is not None:
            refuse(f"{member.name} would be written through a link in {dest}")
        if member.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if member.islnk():
            shutil.copyfile(dest / linked, target, follow_symlinks=False)
        else:
            _write(tar, member, target)
        files.add(rel)
    if top is None:
        refuse("empty archive")
    # Last, so that no file is ever written through one of them.
    for rel, target in links.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            refuse(f"{rel} would replace what is already in {dest}")
        os.symlink(target, path)
