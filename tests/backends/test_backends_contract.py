"""The three backends behave alike on what the harness asks of a box.

Each test runs against the fake (temp-dir) backend, the host backend (an existing environment:
this interpreter and a scratch repository) and Docker (the bookworm base image), so a fake-backend
unit test elsewhere stands for what the real ones do.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import tarfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_enconda.backends.base import Backend, Box, started
from pytest_enconda.errors import HarnessError

PROJECT = "/data/project"
# A scratch path every backend can write: the host backend's boxes are this machine, where
# /enconda is not ours to create.
SCRATCH = f"/tmp/enconda-contract-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module", autouse=True)
def _host_scratch_removed() -> Iterator[None]:
    yield
    shutil.rmtree(SCRATCH, ignore_errors=True)


@dataclass
class Subject:
    backend: Backend
    image: str


@pytest.fixture(
    params=["fake", "host", pytest.param("docker", marks=pytest.mark.docker)],
)
def subject(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Subject]:
    if request.param == "fake":
        from pytest_enconda.backends.fake import FakeBackend

        fake = FakeBackend(tmp_path / "fake")
        yield Subject(fake, fake.add_image("img", {f"{PROJECT}/.keep": ""}))
        fake.close()
    elif request.param == "host":
        from pytest_enconda.backends.host import EXISTING, HostBackend

        repo = tmp_path / "repo"
        repo.mkdir()
        host = HostBackend(sys.executable, repo, gpus=0)
        yield Subject(host, EXISTING)
        host.close()
    else:
        from pytest_enconda.backends.docker import DockerBackend

        sandbox = request.getfixturevalue("sandbox")
        image = request.getfixturevalue("base_image")
        docker = DockerBackend(sandbox=sandbox)
        yield Subject(docker, image)
        docker.close()


@pytest.fixture
def box(subject: Subject, tmp_path: Path) -> Iterator[Box]:
    with started(subject.backend, subject.image, case_id="t/contract", role="test") as opened:
        yield opened


def test_backends_satisfy_the_protocols(subject: Subject, box: Box) -> None:
    assert isinstance(subject.backend, Backend)
    assert isinstance(box, Box)
    assert subject.backend.image_exists(subject.image)


def test_exec_runs_in_the_workdir_with_the_environment_given(box: Box) -> None:
    box.copy_in(b"hello\n", f"{PROJECT}/greeting.txt")
    result = box.exec('cat greeting.txt; echo "FOO=$FOO"', timeout=30, env={"FOO": "bar"})
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["hello", "FOO=bar"]
    assert not result.timed_out


def test_exit_status_and_both_streams(box: Box, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "exec.log"
    result = box.exec("echo out; echo err >&2; exit 3", timeout=30, log_path=log)
    assert result.exit_code == 3
    assert sorted(result.output.split()) == ["err", "out"]
    assert sorted(log.read_text().split()) == ["err", "out"]


def test_timeout_kills_the_command_and_reports_it(box: Box) -> None:
    result = box.exec("echo started; sleep 60; echo never", timeout=1)
    assert result.timed_out
    assert result.exit_code is None
    assert "started" in result.output and "never" not in result.output
    assert result.duration < 20


def test_output_keeps_its_tail_when_long(box: Box) -> None:
    result = box.exec("seq 1 20000", timeout=30, max_output=1000)
    assert result.truncated
    assert result.output.rstrip().endswith("20000")
    assert result.output_bytes > 1000


def test_copy_in_and_out_of_a_folder(box: Box, tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "a.txt").write_text("a")
    (source / "b.txt").write_text("b")
    box.copy_in(source, f"{SCRATCH}/output")
    back = tmp_path / "back"
    box.copy_out(f"{SCRATCH}/output", back)
    assert (back / "sub" / "a.txt").read_text() == "a"
    assert (back / "b.txt").read_text() == "b"
    single = tmp_path / "single.txt"
    box.copy_out(f"{SCRATCH}/output/b.txt", single)
    assert single.read_text() == "b"


def test_copy_out_of_something_missing(box: Box, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        box.copy_out(f"{SCRATCH}/no-such-folder", tmp_path / "x")


def test_copy_out_refuses_a_link_out_of_the_box(box: Box, tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host only")
    box.exec(f"mkdir -p {SCRATCH}/links && ln -sf {secret} {SCRATCH}/links/link.txt", timeout=30)
    with pytest.raises((HarnessError, tarfile.TarError)):
        box.copy_out(f"{SCRATCH}/links", tmp_path / "copied")
    copied = tmp_path / "copied" / "link.txt"
    assert not (copied.exists() and copied.read_text() == "host only")


def test_snapshot_starts_a_box_with_what_the_first_left(subject: Subject, box: Box) -> None:
    box.exec("echo kept > state.txt", timeout=30)
    image = box.snapshot("contract")
    assert subject.backend.image_exists(image)
    with started(subject.backend, image, case_id="t/contract", role="again") as again:
        result = again.exec("cat state.txt", timeout=30)
    assert result.output.strip() == "kept"


def test_remove_is_idempotent(subject: Subject) -> None:
    opened = subject.backend.start(subject.image, case_id="t/contract", role="gone")
    opened.remove()
    opened.remove()
    assert getattr(opened, "removed", True)


def test_backends_by_name(tmp_path: Path) -> None:
    from pytest_enconda.backends import BACKENDS, get_backend

    assert set(BACKENDS) == {"docker", "host", "fake"}
    fake = get_backend("fake", root=tmp_path)
    assert fake.name == "fake" and isinstance(fake, Backend)
    with pytest.raises(KeyError, match="available: docker, fake, host"):
        get_backend("podman")


def test_boxes_share_a_download_cache_by_key_and_only_by_key(subject: Subject) -> None:
    """Two boxes started with one key see one read-write pip (and uv) cache; a box with another
    key, or none, does not. On Docker the caches are volumes named from the key's hash."""
    from pytest_enconda.backends.base import DOWNLOAD_CACHE_DIRS
    from pytest_enconda.backends.host import HostBackend

    if isinstance(subject.backend, HostBackend):
        pytest.skip("the host backend's commands share the host's own caches: nothing to mount")
    keys = [f"test-cache-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    marker = f"{DOWNLOAD_CACHE_DIRS['pip-http']}/marker"
    uv_marker = f"{DOWNLOAD_CACHE_DIRS['uv']}/marker"

    def run(key: str | None, command: str) -> tuple[int | None, str]:
        with started(
            subject.backend, subject.image, case_id="t/cache", role="cache", download_cache=key
        ) as opened:
            result = opened.exec(command, timeout=60, workdir="/")
            return result.exit_code, result.output.strip()

    try:
        assert run(keys[0], f"echo wheel > {marker} && echo uv > {uv_marker}") == (0, "")
        # Boxes sharing the cache wait for each other's downloads (uv's lock), as long as a step
        # may run, not uv's 300 s; a box with no shared cache keeps uv's default.
        assert run(keys[0], "echo $UV_LOCK_TIMEOUT") == (0, "86400")
        assert run(None, "echo ${UV_LOCK_TIMEOUT:-unset}") == (0, "unset")
        assert run(keys[0], f"cat {marker} {uv_marker}") == (0, "wheel\nuv")
        assert run(keys[1], f"test -e {marker} || echo absent") == (0, "absent")
        assert run(None, f"test -e {marker} || echo absent") == (0, "absent")
        if getattr(subject.backend, "sandbox", None) is not None:
            # Docker: the wheels pip builds in one box stay in it (built against that box's
            # libraries). The fake backend is no sandbox: outside its mounts is the host.
            built = "/root/.cache/pip/wheels/built.whl"
            assert run(keys[0], f"mkdir -p /root/.cache/pip/wheels && touch {built}") == (0, "")
            assert run(keys[0], f"test -e {built} || echo absent") == (0, "absent")
    finally:
        sandbox = getattr(subject.backend, "sandbox", None)
        if sandbox is not None:  # Docker: the test's volumes go, others' stay
            for key in keys:
                for name in sandbox.cache_volumes(key).values():
                    with contextlib.suppress(Exception):
                        sandbox.client.volumes.get(name).remove()
