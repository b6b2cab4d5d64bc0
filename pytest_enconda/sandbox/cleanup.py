"""Leftover containers and cached images: list, reap, remove, prune.

Every container carries the creating process's PID, its start time and a host id as labels, so
a run killed with SIGKILL leaves containers that the next run recognises as orphans.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ..errors import HarnessError
from .common import (
    KIND_CONTAINER,
    KIND_ENV,
    KIND_SNAPSHOT,
    KIND_TASK,
    TOOL,
    docker_client,
    host_id,
    process_alive,
)
from .settings import SandboxSettings

if TYPE_CHECKING:
    import docker

# Bases and rootfs imports take minutes to rebuild: never pruned.
PRUNABLE_KINDS: tuple[str, ...] = (KIND_SNAPSHOT, KIND_TASK, KIND_ENV)


class Leftover(BaseModel):
    id: str
    name: str
    status: str
    run: str
    case: str
    role: str
    pid: int | None
    host: str
    same_host: bool
    owner_alive: bool | None = Field(description="None when created on another host")
    keep: bool
    created: str

    @property
    def orphaned(self) -> bool:
        return self.same_host and self.owner_alive is False and not self.keep


class PruneReport(BaseModel):
    removed: list[str] = Field(default_factory=list)
    freed_bytes: int = 0
    kept_bytes: int = 0
    failed: list[str] = Field(default_factory=list)


def _setup(
    settings: SandboxSettings | None, client: docker.DockerClient | None
) -> tuple[SandboxSettings, docker.DockerClient]:
    return settings or SandboxSettings.from_env(), client or docker_client()


def list_leftovers(
    run_id: str | None = None,
    *,
    settings: SandboxSettings | None = None,
    client: docker.DockerClient | None = None,
) -> list[Leftover]:
    """Our containers (of one run, or all), with whether their creating process still lives."""
    settings, client = _setup(settings, client)
    prefix = settings.labels_prefix
    filters = [f"{prefix}.tool={TOOL}", f"{prefix}.kind={KIND_CONTAINER}"]
    if run_id:
        filters.append(f"{prefix}.run={run_id}")
    here = host_id()
    found = []
    for row in client.api.containers(all=True, filters={"label": filters}):
        labels = row.get("Labels") or {}
        pid_text = labels.get(f"{prefix}.pid", "")
        pid = int(pid_text) if pid_text.isdigit() else None
        host = labels.get(f"{prefix}.host", "")
        same_host = bool(host) and host == here
        alive = None
        if same_host and pid is not None:
            alive = process_alive(pid, labels.get(f"{prefix}.pid_start") or None)
        names = row.get("Names") or [row["Id"][:12]]
        found.append(
            Leftover(
                id=row["Id"],
                name=names[0].lstrip("/"),
                status=row.get("Status", ""),
                run=labels.get(f"{prefix}.run", ""),
                case=labels.get(f"{prefix}.case", ""),
                role=labels.get(f"{prefix}.role", ""),
                pid=pid,
                host=host,
                same_host=same_host,
                owner_alive=alive,
                keep=bool(labels.get(f"{prefix}.keep")),
                created=datetime.fromtimestamp(int(row.get("Created", 0)), UTC).isoformat(),
            )
        )
    return found


def _remove(client: docker.DockerClient, ids: Iterable[str]) -> list[str]:
    from docker.errors import APIError, NotFound

    removed = []
    for container_id in ids:
        try:
            client.api.remove_container(container_id, force=True, v=True)
        except NotFound:
            continue
        except APIError as exc:
            if "already in progress" not in str(exc):
                raise HarnessError(f"cannot remove container {container_id[:12]}: {exc}") from None
        removed.append(container_id)
    return removed


def reap_orphans(
    settings: SandboxSettings | None = None, *, client: docker.DockerClient | None = None
) -> list[str]:
    """Remove this host's containers whose creating process is gone (killed runs)."""
    settings, client = _setup(settings, client)
    leftovers = list_leftovers(settings=settings, client=client)
    return _remove(client, [item.id for item in leftovers if item.orphaned])


def remove_leftovers(
    run_id: str | None = None,
    all_runs: bool = False,
    *,
    settings: SandboxSettings | None = None,
    client: docker.DockerClient | None = None,
) -> list[str]:
    """Remove the containers of ``run_id``, of every run (``all_runs``), or else the orphans.

    Only ``all_runs`` touches containers kept with ``keep_containers`` or made on other hosts.
    """
    settings, client = _setup(settings, client)
    if all_runs:
        return _remove(
            client, [item.id for item in list_leftovers(settings=settings, client=client)]
        )
    if run_id:
        return _remove(
            client, [item.id for item in list_leftovers(run_id, settings=settings, client=client)]
        )
    return reap_orphans(settings, client=client)


def _own_sizes(client: docker.DockerClient, rows: list[dict[str, Any]]) -> dict[str, int]:
    """Bytes each image adds on top of its parent (a task image without its base).

    Not ``docker system df``'s unique size: two snapshots with identical layers share them and
    would both count as zero, though removing both frees the space.
    """
    from docker.errors import ImageNotFound

    parent_sizes: dict[str, int] = {}
    sizes = {}
    for row in rows:
        size = int(row.get("Size") or 0)
        parent = row.get("ParentId") or ""
        if parent and parent not in parent_sizes:
            try:
                parent_sizes[parent] = int(client.api.inspect_image(parent).get("Size") or 0)
            except ImageNotFound:
                parent_sizes[parent] = 0
        sizes[row["Id"]] = max(0, size - parent_sizes.get(parent, 0))
    return sizes


def prune_images(
    older_than: timedelta | None,
    max_total_bytes: int | None,
    *,
    settings: SandboxSettings | None = None,
    client: docker.DockerClient | None = None,
    kinds: Iterable[str] = PRUNABLE_KINDS,
    run_ids: Collection[str] | None = None,
    dry_run: bool = False,
) -> PruneReport:
    """Remove task/snapshot/env images older than ``older_than``, then the oldest until the rest
    fit in ``max_total_bytes``. Both ``None`` removes them all; ``run_ids`` limits all of this
    to images those runs created. Base images are never touched."""
    from docker.errors import APIError, ImageNotFound

    settings, client = _setup(settings, client)
    prefix = settings.labels_prefix
    wanted = [kind for kind in kinds if kind in PRUNABLE_KINDS]
    rows: list[dict[str, Any]] = []
    for image in client.api.images(filters={"label": [f"{prefix}.tool={TOOL}"]}):
        labels = image.get("Labels") or {}
        if run_ids is not None and labels.get(f"{prefix}.run") not in run_ids:
            continue
        kind = labels.get(f"{prefix}.kind", "")
        if kind in wanted:
            rows.append({**image, "_kind": kind})
    sizes = _own_sizes(client, rows)
    now = datetime.now(UTC)

    def order(row: dict[str, Any]) -> tuple[int, int]:
        # Children before parents: a snapshot blocks removing its task image, a task its env.
        return (PRUNABLE_KINDS.index(row["_kind"]), int(row.get("Created", 0)))

    def age(row: dict[str, Any]) -> timedelta:
        return now - datetime.fromtimestamp(int(row.get("Created", 0)), UTC)

    if older_than is None and max_total_bytes is None:
        doomed = list(rows)
    else:
        doomed = [row for row in rows if older_than is not None and age(row) > older_than]
        if max_total_bytes is not None:
            remaining = sorted(
                (row for row in rows if row not in doomed), key=lambda r: r.get("Created", 0)
            )
            total = sum(sizes.get(row["Id"], 0) for row in remaining)
            while remaining and total > max_total_bytes:
                oldest = remaining.pop(0)
                doomed.append(oldest)
                total -= sizes.get(oldest["Id"], 0)
    report = PruneReport()
    doomed_ids = {row["Id"] for row in doomed}
    report.kept_bytes = sum(sizes.get(row["Id"], 0) for row in rows if row["Id"] not in doomed_ids)
    for row in sorted(doomed, key=order):
        tags = [tag for tag in row.get("RepoTags") or [] if tag != "<none>:<none>"]
        ref = tags[0] if tags else row["Id"]
        if dry_run:
            report.removed.append(ref)
            report.freed_bytes += sizes.get(row["Id"], 0)
            continue
        try:
            # By id with force: an image tagged twice is still one image to drop; running
            # containers still block it (Docker refuses), which we report.
            client.api.remove_image(row["Id"], force=bool(len(tags) > 1))
        except ImageNotFound:
            continue
        except APIError as exc:
            report.failed.append(f"{ref}: {exc.explanation or exc}")
            report.kept_bytes += sizes.get(row["Id"], 0)
            continue
        report.removed.append(ref)
        report.freed_bytes += sizes.get(row["Id"], 0)
    return report


def remove_snapshot(client: docker.DockerClient, settings: SandboxSettings, image: str) -> bool:
    """Remove a snapshot image this tool made (its labels say so); anything else, or one already
    gone, is left. Whether it was removed."""
    from docker.errors import APIError, ImageNotFound

    prefix = settings.labels_prefix
    try:
        labels = client.api.inspect_image(image).get("Config", {}).get("Labels") or {}
    except ImageNotFound:
        return False
    if labels.get(f"{prefix}.tool") != TOOL or labels.get(f"{prefix}.kind") != KIND_SNAPSHOT:
        return False
    try:
        client.api.remove_image(image)
    except ImageNotFound:
        return False
    except APIError as exc:
        # A container still running from it (--keep-containers): kept, and said.
        raise HarnessError(f"cannot remove snapshot {image}: {exc}") from None
    return True
