"""Containers against the real engine: exec, timeouts, output, copies, snapshots, limits."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from docker.errors import NotFound

from pytest_enconda.errors import HarnessError
from pytest_enconda.sandbox.common import docker_client
from pytest_enconda.sandbox.containers import (
    HOST_SLACK,
    KILL_GRACE,
    BindMount,
    Sandbox,
    gpu_available,
)
from pytest_enconda.sandbox.settings import parse_size

pytestmark = pytest.mark.docker


def processes(box) -> str:
    """Every process in the container except the ps itself."""
    return box.exec("ps -eo pid,stat,args --no-headers", timeout=30).output


def test_exit_codes_and_interleaved_output(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(base_image, case_id="t/exec", role="test") as box:
        ok = box.exec("echo out; echo err >&2; echo out2", timeout=30)
        assert ok.exit_code == 0
        assert ok.output == "out\nerr\nout2\n"
        assert not ok.timed_out and not ok.truncated
        failed = box.exec("echo about to fail; exit 3", timeout=30)
        assert failed.exit_code == 3
        assert failed.output == "about to fail\n"
        missing = box.exec("no-such-command-xyz", timeout=30)
        assert missing.exit_code == 127
        assert "not found" in missing.output


def test_output_keeps_the_tail_and_says_what_was_cut(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(base_image, case_id="t/tail", role="test") as box:
        result = box.exec("seq 1 100000", timeout=60, max_output=1000)
    full_size = sum(len(f"{n}\n") for n in range(1, 100001))
    assert result.exit_code == 0
    assert result.truncated
    assert result.output_bytes == full_size
    assert result.output.endswith("99999\n100000\n")
    assert f"[... {full_size - 1000} bytes of earlier output cut ...]" in result.output


def test_timeout_kills_the_whole_tree_including_background_and_setsid(
    sandbox: Sandbox, base_image: str
) -> None:
    with sandbox.container(base_image, case_id="t/timeout", role="test") as box:
        command = "sleep 1000 & setsid sleep 1001 & echo started; sleep 1002"
        result = box.exec(command, timeout=2)
        assert result.timed_out
        assert result.exit_code is None
        assert result.output == "started\n"
        assert 2 <= result.duration < 2 + KILL_GRACE + HOST_SLACK
        left = processes(box)
        assert "sleep 100" not in left, left


def test_timeout_kills_a_command_that_ignores_sigterm(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(base_image, case_id="t/term", role="test") as box:
        result = box.exec("trap '' TERM; sleep 1000 & wait; sleep 1000", timeout=1)
        assert result.timed_out
        assert result.duration >= 1
        assert "sleep 1000" not in processes(box)


def test_background_process_of_a_finished_command_survives(
    sandbox: Sandbox, base_image: str
) -> None:
    """Like a shell session: only a timed-out command's processes are killed."""
    with sandbox.container(base_image, case_id="t/bg", role="test") as box:
        result = box.exec("nohup sleep 300 >/dev/null 2>&1 &", timeout=30)
        assert result.exit_code == 0 and not result.timed_out
        assert "sleep 300" in processes(box)


def test_output_streams_to_the_log_while_running(
    sandbox: Sandbox, base_image: str, tmp_path: Path
) -> None:
    log = tmp_path / "logs" / "exec.log"
    results = []
    with sandbox.container(base_image, case_id="t/log", role="test") as box:
        worker = threading.Thread(
            target=lambda: results.append(
                box.exec("echo first; sleep 4; echo second", timeout=60, log_path=log)
            )
        )
        worker.start()
        seen_while_running = False
        deadline = time.monotonic() + 30
        while worker.is_alive() and time.monotonic() < deadline:
            if log.exists() and "first" in log.read_text():
                seen_while_running = worker.is_alive()
                break
            time.sleep(0.05)
        worker.join(60)
    assert seen_while_running
    assert log.read_text() == "first\nsecond\n"
    assert results[0].output == "first\nsecond\n"


def test_env_workdir_and_determinism(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(
        base_image, case_id="t/env", role="test", env={"CASE_VAR": "from-create"}
    ) as box:
        result = box.exec(
            'echo "$CASE_VAR $EXEC_VAR $TZ $LANG $LC_ALL $PYTHONHASHSEED $DEBIAN_FRONTEND"; pwd',
            timeout=30,
            env={"EXEC_VAR": "from-exec"},
        )
        elsewhere = box.exec("pwd", timeout=30, workdir="/tmp")
    assert result.output == (
        "from-create from-exec UTC C.UTF-8 C.UTF-8 0 noninteractive\n/data/project\n"
    )
    assert elsewhere.output == "/tmp\n"


def test_copy_in_and_out(sandbox: Sandbox, base_image: str, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "sub" / "a.txt").write_text("alpha\n")
    script = tree / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    single = tmp_path / "single.txt"
    single.write_text("single\n")
    with sandbox.container(base_image, case_id="t/copy", role="test") as box:
        box.copy_in(b"from bytes\n", "/data/project/new/dir/b.txt")
        box.copy_in(single, "/tmp/single.txt")
        box.copy_in(tree, "/opt/tree")
        result = box.exec(
            "cat /data/project/new/dir/b.txt /tmp/single.txt /opt/tree/sub/a.txt"
            " && /opt/tree/run.sh",
            timeout=30,
        )
        assert result.output == "from bytes\nsingle\nalpha\nran\n"
        box.exec(
            "mkdir -p /out/deep && echo made > /out/deep/c.txt && echo top > /out/t", timeout=30
        )
        box.copy_out("/out/t", tmp_path / "got" / "t.txt")
        box.copy_out("/out", tmp_path / "outdir")
        box.copy_out("/opt/tree/run.sh", tmp_path / "run_copy.sh")
        with pytest.raises(FileNotFoundError):
            box.copy_out("/no/such/file", tmp_path / "x")
    assert (tmp_path / "got" / "t.txt").read_text() == "top\n"
    assert (tmp_path / "outdir" / "deep" / "c.txt").read_text() == "made\n"
    assert (tmp_path / "outdir" / "t").read_text() == "top\n"
    assert (tmp_path / "run_copy.sh").read_text() == "#!/bin/sh\necho ran\n"


def test_snapshot_keeps_files_and_is_labelled(
    sandbox: Sandbox, base_image: str, docker_client
) -> None:
    with sandbox.container(base_image, case_id="t/snap", role="agent") as box:
        box.exec("echo installed > /data/project/marker.txt && pip --version > /tmp/p", timeout=30)
        snapshot = box.snapshot("t/snap agent")
    try:
        labels = docker_client.api.inspect_image(snapshot)["Config"]["Labels"]
        assert labels["io.enconda.kind"] == "snapshot"
        assert labels["io.enconda.case"] == "t/snap"
        assert labels["io.enconda.run"] == sandbox.run_id
        assert labels["io.enconda.pid"] == ""
        with sandbox.container(snapshot, case_id="t/snap", role="probe") as probe:
            seen = probe.exec("cat /data/project/marker.txt", timeout=30)
            own_labels = probe.inspect()["Config"]["Labels"]
        assert seen.output == "installed\n"
        # The probe's container carries its own labels, not the snapshot's blanks.
        assert own_labels["io.enconda.role"] == "probe"
        assert own_labels["io.enconda.kind"] == "container"
    finally:
        docker_client.api.remove_image(snapshot)


def test_writable_size_grows_with_what_is_written(sandbox: Sandbox, base_image: str) -> None:
    with sandbox.container(base_image, case_id="t/size", role="test") as box:
        before = box.writable_size()
        box.exec("head -c 5000000 /dev/urandom > /data/project/blob", timeout=60)
        after = box.writable_size()
    assert after - before >= 5_000_000


def test_limits_labels_and_init(sandbox: Sandbox, base_image: str, sandbox_settings) -> None:
    with sandbox.container(base_image, case_id="t/limits", role="agent") as box:
        info = box.inspect()
        pid1 = box.exec("cat /proc/1/cmdline | tr '\\0' ' '", timeout=30).output
    host = info["HostConfig"]
    assert host["Memory"] == parse_size(sandbox_settings.memory)
    assert host["PidsLimit"] == sandbox_settings.pids_limit
    assert host["NanoCpus"] > 0
    assert host["Init"] is True
    assert pid1.startswith("/sbin/docker-init")
    labels = info["Config"]["Labels"]
    assert labels["io.enconda.tool"] == "pytest-enconda"
    assert labels["io.enconda.run"] == sandbox.run_id
    assert labels["io.enconda.case"] == "t/limits"
    assert labels["io.enconda.role"] == "agent"
    assert labels["io.enconda.pid"].isdigit()


def test_pids_limit_is_enforced(docker_client, sandbox_settings, base_image: str) -> None:
    tight = Sandbox(sandbox_settings.model_copy(update={"pids_limit": 20}), client=docker_client)
    script = (
        "import subprocess\n"
        "procs = []\n"
        "try:\n"
        "    for _ in range(40):\n"
        "        procs.append(subprocess.Popen(['sleep', '5']))\n"
        "    print('spawned all')\n"
        "except OSError as exc:\n"
        "    print('refused after', len(procs), exc.errno)\n"
    )
    with tight.container(base_image, case_id="t/pids", role="test") as box:
        box.copy_in(script.encode(), "/tmp/spawn.py")
        result = box.exec("python3 /tmp/spawn.py", timeout=60)
    words = result.output.split()
    assert words[:2] == ["refused", "after"], result.output
    assert int(words[2]) < 20
    assert words[3] == "11"  # EAGAIN: the cgroup's pids limit


def test_read_only_bind_mount_and_no_network(
    sandbox: Sandbox, base_image: str, tmp_path: Path
) -> None:
    (tmp_path / "data.txt").write_text("host data\n")
    mount = BindMount(source=tmp_path, target="/mnt/host")
    with sandbox.container(
        base_image, case_id="t/mount", role="test", mounts=[mount], network=False
    ) as box:
        assert box.exec("cat /mnt/host/data.txt", timeout=30).output == "host data\n"
        write = box.exec("echo x > /mnt/host/new.txt", timeout=30)
        offline = box.exec("curl -sS --max-time 10 http://deb.debian.org/ -o /dev/null", timeout=30)
    assert write.exit_code != 0
    assert "Read-only file system" in write.output
    assert not (tmp_path / "new.txt").exists()
    assert offline.exit_code != 0


def test_container_removed_on_success_exception_and_keyboard_interrupt(
    sandbox: Sandbox, base_image: str, docker_client
) -> None:
    ids = []
    with sandbox.container(base_image, case_id="t/rm", role="ok") as box:
        ids.append(box.id)
    with (
        pytest.raises(RuntimeError),
        sandbox.container(base_image, case_id="t/rm", role="err") as box,
    ):
        ids.append(box.id)
        raise RuntimeError("agent crashed")
    with (
        pytest.raises(KeyboardInterrupt),
        sandbox.container(base_image, case_id="t/rm", role="int") as box,
    ):
        ids.append(box.id)
        raise KeyboardInterrupt
    for container_id in ids:
        with pytest.raises(NotFound):
            docker_client.containers.get(container_id)
    assert sandbox.live == []


def test_close_removes_containers_left_open(
    sandbox: Sandbox, base_image: str, docker_client
) -> None:
    box = sandbox.create(base_image, case_id="t/close", role="lazy")
    assert docker_client.containers.get(box.id).status == "running"
    sandbox.close()
    with pytest.raises(NotFound):
        docker_client.containers.get(box.id)


def test_gpu_request_without_gpu_is_a_clear_error(sandbox: Sandbox, base_image: str) -> None:
    available, reason = gpu_available()
    if available:
        pytest.skip(f"this host has GPUs ({reason}); the no-GPU path cannot be shown")
    assert "NVIDIA" in reason
    with pytest.raises(HarnessError, match=r"GPUs requested .* unavailable"):
        sandbox.create(base_image, case_id="t/gpu", role="test", gpus="all")
    assert sandbox.live == []


def test_gpu_container_sees_gpus(sandbox: Sandbox, base_image: str) -> None:
    available, reason = gpu_available()
    if not available:
        pytest.skip(f"no GPU here: {reason}")
    with sandbox.container(base_image, case_id="t/gpu", role="test", gpus="all") as box:
        assert box.exec("ls /dev/nvidia0", timeout=30).exit_code == 0


def test_unreachable_engine_is_a_harness_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(HarnessError, match="Docker engine not reachable"):
        docker_client()


def test_missing_image_is_a_harness_error(sandbox: Sandbox) -> None:
    with pytest.raises(HarnessError, match="not found"):
        sandbox.create("enconda/does-not-exist:nope", case_id="t/missing", role="test")
