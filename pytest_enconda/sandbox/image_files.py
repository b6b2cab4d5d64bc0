"""What goes into our images: the pinned environment, the host's CA certificates, a build
context, and the project archive a task image is committed from.

No Docker here: the builder (``images``) hashes and builds with these, and the containers read
the same constants.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO

from ..errors import ImageBuildError
from .git_deps import GitDependency
from .git_deps import add_to_tar as add_git_deps
from .repo import iter_tree

PROJECT_DIR = "/data/project"
CA_DIR = "/usr/local/share/ca-certificates/enconda"
CA_FILE = "/etc/ssl/certs/ca-certificates.crt"
TOOLS_VENV = "/opt/enconda-tools"
TOOL_COMMANDS = ("poetry", "uv", "uvx", "pipenv")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Pinned in every image and every container: what otherwise differs between machines.
DETERMINISM_ENV: dict[str, str] = {
    "TZ": "UTC",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_ROOT_USER_ACTION": "ignore",
}
# Every TLS client we ship reads one of these; uv ignores the system store without SSL_CERT_FILE.
CA_ENV: dict[str, str] = {
    name: CA_FILE
    for name in (
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
        "PIP_CERT",
        "CURL_CA_BUNDLE",
        "GIT_SSL_CAINFO",
    )
}

_PEM = re.compile(rb"-----BEGIN CERTIFICATE-----\s.+?-----END CERTIFICATE-----", re.DOTALL)


def split_ca_bundle(path: Path) -> dict[str, bytes]:
    """One ``.crt`` per certificate, named by content, as ``update-ca-certificates`` wants them.

    Installing them under /usr/local/share keeps the host's (proxy) CA in the bundle even when a
    later ``apt-get install`` regenerates /etc/ssl/certs/ca-certificates.crt.
    """
    data = path.read_bytes()
    certs = _PEM.findall(data)
    if not certs:
        raise ImageBuildError(f"CA bundle {path}: no PEM certificate found (field ca_bundle)")
    return {f"host-{hashlib.sha256(pem).hexdigest()[:16]}.crt": pem + b"\n" for pem in certs}


def _context_tar(files: Mapping[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size = len(files[name])
            info.mode = 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(files[name]))
    buffer.seek(0)
    return buffer


def _label_line(key: str, value: str) -> str:
    return f"LABEL {key}={json.dumps(value)}"


def _shell_words(words: Iterable[str]) -> str:
    for word in words:
        # A leading '-' would make a case's package an apt-get option (-oDpkg::...=CMD).
        if word.startswith("-") or not re.fullmatch(r"[A-Za-z0-9.+_:=<>~-]+", word):
            raise ImageBuildError(f"unsafe package or requirement name: {word!r}")
    return " ".join(words)


def _override_path(path: str) -> str:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise ImageBuildError(f"override path must be relative inside the project: {path!r}")
    return pure.as_posix()


def _add_parents(tar: tarfile.TarFile, rel: str, seen: set[str]) -> None:
    parts = PurePosixPath(rel).parts[:-1]
    for index in range(1, len(parts) + 1):
        directory = "/".join(parts[:index])
        if directory not in seen:
            seen.add(directory)
            info = tarfile.TarInfo(f"data/project/{directory}")
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)


def _write_project_tar(
    handle: IO[bytes],
    repo_dir: Path,
    overrides: Mapping[str, bytes],
    git_deps: Sequence[GitDependency] = (),
) -> None:
    """The repository (ignored names skipped) plus overrides, owned by root, under data/project;
    with ``git_deps``, their copies and the gitconfig that points at them."""

    def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    with tarfile.open(fileobj=handle, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for directory in ("data", "data/project"):
            info = tarfile.TarInfo(directory)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        seen: set[str] = set()
        for rel, path in iter_tree(repo_dir):
            if rel in overrides:
                continue
            info = tar.gettarinfo(str(path), arcname=f"data/project/{rel}")
            if not (info.isfile() or info.isdir() or info.issym()):
                continue
            owned_by_root(info)
            if info.isdir():
                seen.add(rel)
            if info.isfile():
                with path.open("rb") as content:
                    tar.addfile(info, content)
            else:
                tar.addfile(info)
        for rel, data in sorted(overrides.items()):
            _add_parents(tar, rel, seen)
            info = owned_by_root(tarfile.TarInfo(f"data/project/{rel}"))
            info.size = len(data)
            info.mode = 0o644
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))
        add_git_deps(tar, git_deps)
