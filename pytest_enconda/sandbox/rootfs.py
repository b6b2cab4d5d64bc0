"""A Debian root filesystem made by debootstrap on this host and imported as an image.

The steps the builder's ``ensure_rootfs`` runs in turn: find the tool, get root, bootstrap into
a scratch folder, import the folder as an image. The builder keeps the order, the labels and the
cleanup, so what is built and when is said in one place.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ImageBuildError
from .common import Progress

if TYPE_CHECKING:
    import docker


def debootstrap_tool() -> str:
    """The debootstrap executable (root's sbin is often not on a user's PATH)."""
    tool = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if Path("/usr/sbin/debootstrap").exists() else None
    )
    if tool is None:
        raise ImageBuildError(
            "debootstrap is not installed (apt-get install -y debootstrap), or set pull_base "
            "to a pullable image where a registry is reachable"
        )
    return tool


def sudo_prefix() -> list[str]:
    """What runs a command as root: nothing for root, else non-interactive sudo."""
    if os.geteuid() == 0:
        return []
    if shutil.which("sudo") is None:
        raise ImageBuildError(
            "debootstrap needs root: run as root, install sudo, or set pull_base to a "
            "pullable image (e.g. debian:bookworm)"
        )
    return ["sudo", "-n"]


def run_debootstrap(command: list[str], scratch: Path, tag: str, progress: Progress) -> None:
    """Run ``command``, passing its lines to ``progress``; a failure raises with the log's tail
    (debootstrap's own log holds the reason its output leaves out)."""
    tail: deque[str] = deque(maxlen=40)
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                tail.append(line)
                progress(line)
    if proc.returncode != 0:
        log = scratch / "debootstrap" / "debootstrap.log"
        with contextlib.suppress(OSError):
            tail.extend(log.read_text(errors="replace").splitlines()[-20:])
        raise ImageBuildError(
            f"building rootfs {tag} failed at step debootstrap (exit {proc.returncode})\n"
            "--- log tail ---\n" + "\n".join(tail)
        )


def import_tree(
    client: docker.DockerClient, sudo: list[str], scratch: Path, tag: str, changes: list[str]
) -> None:
    """Stream the bootstrapped tree (read as root, owners kept numeric) into image ``tag``."""
    from docker.errors import APIError

    repository, _, image_tag = tag.rpartition(":")
    with subprocess.Popen(
        [*sudo, "tar", "-C", str(scratch), "--numeric-owner", "-cf", "-", "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as tar:
        assert tar.stdout is not None
        try:
            client.api.import_image(
                src=tar.stdout,
                repository=repository,
                tag=image_tag,
                changes=changes,
                stream_src=True,
            )
        except APIError as exc:
            tar.kill()
            raise ImageBuildError(f"importing rootfs {tag} failed: {exc}") from None
        errors = tar.stderr.read().decode(errors="replace") if tar.stderr else ""
    if tar.returncode != 0:
        raise ImageBuildError(f"building rootfs {tag} failed at step tar: {errors[-2000:]}")
